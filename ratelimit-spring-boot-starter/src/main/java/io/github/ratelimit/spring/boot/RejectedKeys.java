package io.github.ratelimit.spring.boot;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Outcome;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.Verdict;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The most-rejected keys (the design's "top blocked users/IPs"), in bounded memory: the Space-Saving summary
 * keeps {@code capacity} counters; a new key takes over the smallest one, inheriting its count as possible
 * over-count. So the heaviest keys are found with counts that may be over by at most {@code error}. Thread-safe
 * (synchronized: it sees only rejections).
 */
final class RejectedKeys implements RateLimitListener {

    /** One tracked key. */
    record Entry(String rule, String key, long count, long error) {
    }

    private record RuleKey(String rule, String key) {
    }

    private final int capacity;
    private final Map<RuleKey, long[]> counts = new HashMap<>();

    RejectedKeys(int capacity) {
        this.capacity = capacity;
    }

    @Override
    public void onDecision(Decision decision) {
        if (decision.outcome() != Outcome.REJECTED && decision.outcome() != Outcome.SHADOW_REJECTED) {
            return;
        }
        for (Verdict v : decision.verdicts()) {
            if ((v.outcome() == Outcome.REJECTED || v.outcome() == Outcome.SHADOW_REJECTED) && v.key() != null) {
                record(new RuleKey(v.rule(), v.key()));
            }
        }
    }

    private synchronized void record(RuleKey key) {
        long[] c = counts.get(key);
        if (c != null) {
            c[0]++;
            return;
        }
        if (counts.size() < capacity) {
            counts.put(key, new long[] {1, 0});
            return;
        }
        RuleKey smallest = null;
        long min = Long.MAX_VALUE;
        for (Map.Entry<RuleKey, long[]> e : counts.entrySet()) {
            if (e.getValue()[0] < min) {
                min = e.getValue()[0];
                smallest = e.getKey();
            }
        }
        counts.remove(smallest);
        counts.put(key, new long[] {min + 1, min});
    }

    /**
     * @param limit how many to return
     * @return the most-rejected keys, most first
     */
    synchronized List<Entry> top(int limit) {
        List<Entry> entries = new ArrayList<>(counts.size());
        counts.forEach((k, c) -> entries.add(new Entry(k.rule(), k.key(), c[0], c[1])));
        entries.sort(Comparator.comparingLong(Entry::count).reversed());
        return entries.subList(0, Math.min(limit, entries.size()));
    }
}
