package io.github.ratelimit.spring.boot.actuate;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.internal.admin.RejectedKeySummary;
import java.util.List;

/**
 * The most-rejected keys (the design's "top blocked users/IPs") that the {@code ratelimits} endpoint shows, in
 * bounded memory: a Space-Saving summary of {@code capacity} counters, where a new key takes over the smallest one
 * and inherits its count as possible over-count, so the heaviest keys are found with counts that may be over by at
 * most {@code error}. Each rejection costs O(1) and takes no global lock, so a flood of distinct rejected keys
 * neither slows the limiter down nor serializes its threads. The summary is the core's, which a {@code web.xml}
 * application's admin servlet shows too. Thread-safe.
 */
public final class RejectedKeys implements RateLimiter.Listener {

    /**
     * One tracked key.
     *
     * @param rule the rule that rejected it
     * @param key the key, as decisions show it
     * @param count how many rejections were counted for it, over by at most {@code error}
     * @param error how much of {@code count} may have been another key's
     */
    public record Entry(String rule, String key, long count, long error) {}

    private final RejectedKeySummary summary;

    /**
     * @param capacity how many keys to track at most
     */
    public RejectedKeys(int capacity) {
        this.summary = new RejectedKeySummary(capacity);
    }

    @Override
    public void onDecision(Decision decision) {
        summary.onDecision(decision);
    }

    /**
     * @param limit how many to return
     * @return the most-rejected keys, most first
     */
    public List<Entry> top(int limit) {
        return summary.top(limit).stream()
                .map(e -> new Entry(e.rule(), e.key(), e.count(), e.error()))
                .toList();
    }
}
