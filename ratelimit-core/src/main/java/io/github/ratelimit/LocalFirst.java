package io.github.ratelimit;

import java.time.Duration;

/**
 * Lets a rule's buckets in a shared store (Redis) be decided in this JVM most of the time, for hot, coarse limits
 * such as one global bucket of 10,000 requests per second, where a round trip per call would cost more than the
 * exactness is worth. Built on Bucket4j's delaying optimization: each instance keeps a copy of the bucket and
 * decides from it until it has taken {@code maxUnsyncedTokens} tokens or {@code maxUnsyncedTime} has passed since
 * it last synchronized, then settles what it took with the store in one round trip.
 *
 * <p><b>Bound:</b> with N instances, the tokens admitted in any interval of length t are at most
 * {@code capacity + rate × t + N × maxUnsyncedTokens}; the excess is charged back at the next synchronization
 * (the shared bucket goes below zero), so the long-run rate stays the limit's. Stores that keep buckets in this
 * JVM anyway ({@link io.github.ratelimit.store.LocalBucketStore}) ignore the setting. For token-bucket and
 * fixed-window rules only: a sliding-window rule decides every call in the store, and refuses it at start-up.
 *
 * @param maxUnsyncedTokens tokens an instance may take before it synchronizes, at least 1
 * @param maxUnsyncedTime the longest an instance goes without synchronizing, 1 ms to 1 min
 */
public record LocalFirst(long maxUnsyncedTokens, Duration maxUnsyncedTime) {

    /**
     * @throws InvalidRateLimitConfigurationException when a value is out of range
     */
    public LocalFirst {
        if (maxUnsyncedTokens < 1) {
            throw new InvalidRateLimitConfigurationException("local-first maxUnsyncedTokens must be at least 1, but was "
                    + maxUnsyncedTokens + ". Use a small share of the limit, e.g. 1% of it.");
        }
        if (maxUnsyncedTime == null || maxUnsyncedTime.compareTo(Duration.ofMillis(1)) < 0
                || maxUnsyncedTime.compareTo(Duration.ofMinutes(1)) > 0) {
            throw new InvalidRateLimitConfigurationException("local-first maxUnsyncedTime must be between 1ms and 1m, "
                    + "but was " + maxUnsyncedTime + ". Use e.g. 100ms.");
        }
    }
}
