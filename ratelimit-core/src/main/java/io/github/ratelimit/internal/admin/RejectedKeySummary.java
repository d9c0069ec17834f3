package io.github.ratelimit.internal.admin;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Decision.Verdict;
import io.github.ratelimit.RateLimiter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The most-rejected keys (the design's "top blocked users/IPs"), in bounded memory: the Space-Saving summary
 * keeps {@code capacity} counters; a new key takes over the smallest one, inheriting its count as possible
 * over-count. So the heaviest keys are found with counts that may be over by at most {@code error}.
 *
 * <p>Each rejection costs O(1), whatever the capacity, and takes no global lock: keys are spread by hash over
 * independent summaries (each with its own lock, one per 64 counters, at most 16), and each summary keeps
 * its counters in count order (the stream-summary structure: counters with equal counts share a bucket, buckets
 * in a linked list), so a known key moves to the next bucket and a new key takes a counter from the first one
 * without a scan. A flood of distinct rejected keys (an attack rotating addresses) therefore neither slows the
 * limiter down nor serializes its threads. Thread-safe.
 *
 * <p>Shared by the Spring Boot starter's {@code ratelimits} endpoint and the servlet module's admin servlet.
 */
public final class RejectedKeySummary implements RateLimiter.Listener {

    /**
     * One tracked key.
     *
     * @param rule the rule that rejected it
     * @param key the key, as decisions show it
     * @param count how many rejections were counted for it, over by at most {@code error}
     * @param error how much of {@code count} may have been another key's, inherited when it took the counter over
     */
    public record Entry(String rule, String key, long count, long error) {}

    private record RuleKey(String rule, String key) {}

    private final Summary[] summaries;

    /**
     * @param capacity how many keys to track at most
     */
    public RejectedKeySummary(int capacity) {
        int count = Math.max(1, Math.min(16, capacity / 64));
        this.summaries = new Summary[count];
        for (int i = 0; i < count; i++) {
            summaries[i] = new Summary(capacity / count + (i < capacity % count ? 1 : 0));
        }
    }

    @Override
    public void onDecision(Decision decision) {
        if (decision.outcome() != Outcome.REJECTED && decision.outcome() != Outcome.SHADOW_REJECTED) {
            return;
        }
        for (Verdict v : decision.verdicts()) {
            if ((v.outcome() == Outcome.REJECTED || v.outcome() == Outcome.SHADOW_REJECTED) && v.key() != null) {
                RuleKey key = new RuleKey(v.rule(), v.key());
                int h = key.hashCode();
                summaries[Math.floorMod(h ^ (h >>> 16), summaries.length)].record(key);
            }
        }
    }

    /**
     * @param limit how many to return
     * @return the most-rejected keys, most first
     */
    public List<Entry> top(int limit) {
        List<Entry> entries = new ArrayList<>();
        for (Summary summary : summaries) {
            summary.addTo(entries);
        }
        entries.sort(Comparator.comparingLong(Entry::count).reversed());
        return List.copyOf(entries.subList(0, Math.min(limit, entries.size())));
    }

    /** One Space-Saving summary over the keys that hash to it. */
    private static final class Summary {

        /** Counters of one count, in a ring; buckets in ascending count order. */
        private static final class Bucket {
            long count;
            Counter first;
            Bucket previous;
            Bucket next;
        }

        private static final class Counter {
            RuleKey key;
            long error;
            Bucket bucket;
            Counter previous;
            Counter next;
        }

        private final int capacity;
        private final Map<RuleKey, Counter> counters = new HashMap<>();
        /** The bucket of the smallest count, or {@code null} when empty. */
        private Bucket smallest;

        Summary(int capacity) {
            this.capacity = Math.max(1, capacity);
        }

        synchronized void record(RuleKey key) {
            Counter c = counters.get(key);
            if (c != null) {
                increment(c);
                return;
            }
            if (counters.size() < capacity) {
                c = new Counter();
                c.key = key;
                counters.put(key, c);
                Bucket zero = new Bucket(); // a bucket of count 0 just before the smallest, left at once
                zero.next = smallest;
                if (smallest != null) {
                    smallest.previous = zero;
                }
                smallest = zero;
                attach(c, zero);
                increment(c);
                return;
            }
            // Take over a counter of the smallest count: the new key may have been counted there before.
            c = smallest.first;
            counters.remove(c.key);
            c.key = key;
            c.error = smallest.count;
            counters.put(key, c);
            increment(c);
        }

        /** Moves a counter to the bucket of its count plus one. */
        private void increment(Counter c) {
            Bucket from = c.bucket;
            long count = from.count + 1;
            Bucket to = from.next;
            if (to == null || to.count != count) {
                to = new Bucket();
                to.count = count;
                to.previous = from;
                to.next = from.next;
                if (from.next != null) {
                    from.next.previous = to;
                }
                from.next = to;
            }
            detach(c);
            attach(c, to);
            if (from.first == null) {
                unlink(from);
            }
        }

        private static void attach(Counter c, Bucket b) {
            c.bucket = b;
            if (b.first == null) {
                c.previous = c;
                c.next = c;
                b.first = c;
            } else {
                c.next = b.first;
                c.previous = b.first.previous;
                b.first.previous.next = c;
                b.first.previous = c;
            }
        }

        private static void detach(Counter c) {
            Bucket b = c.bucket;
            if (c.next == c) {
                b.first = null;
            } else {
                c.previous.next = c.next;
                c.next.previous = c.previous;
                if (b.first == c) {
                    b.first = c.next;
                }
            }
            c.previous = null;
            c.next = null;
            c.bucket = null;
        }

        private void unlink(Bucket b) {
            if (b.previous != null) {
                b.previous.next = b.next;
            } else {
                smallest = b.next;
            }
            if (b.next != null) {
                b.next.previous = b.previous;
            }
        }

        synchronized void addTo(List<Entry> entries) {
            for (Counter c : counters.values()) {
                entries.add(new Entry(c.key.rule(), c.key.key(), c.bucket.count, c.error));
            }
        }
    }
}
