package io.github.ratelimit.store;

import io.github.bucket4j.BucketConfiguration;
import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Limit;

import java.util.List;
import java.util.Objects;

/**
 * What a store needs to know of a rule to keep a key's state: its windows and its algorithm. Immutable; the
 * limiter makes one per rule and per distinct set of per-key limits, so stores may rely on identity for speed
 * (and must fall back to {@link #equals}).
 */
public final class StoreLimits {

    private final List<Limit> limits;
    private final Algorithm algorithm;
    private final long longestPeriodNanos;
    private final long longestPermits;
    /** The Bucket4j configuration, for the algorithms Bucket4j runs; made once, so equal rules share it. */
    private final BucketConfiguration configuration;

    private StoreLimits(List<Limit> limits, Algorithm algorithm) {
        this.limits = List.copyOf(limits);
        this.algorithm = Objects.requireNonNull(algorithm, "algorithm");
        if (this.limits.isEmpty()) {
            throw new IllegalArgumentException("no limits");
        }
        Limit longest = this.limits.get(0);
        for (Limit limit : this.limits) {
            if (limit.period().compareTo(longest.period()) > 0) {
                longest = limit;
            }
        }
        this.longestPeriodNanos = longest.period().toNanos();
        this.longestPermits = longest.permits();
        this.configuration = algorithm.isSliding() ? null : BucketConfigurations.of(this.limits, algorithm);
    }

    /**
     * @param limits the windows, at least one (as validated by {@link io.github.ratelimit.Rule})
     * @param algorithm how they count
     * @return the limits
     */
    public static StoreLimits of(List<Limit> limits, Algorithm algorithm) {
        return new StoreLimits(limits, algorithm);
    }

    /**
     * @param share the part of each limit to keep, above 0 and at most 1; at least one permit stays
     * @return these limits scaled down (for a local fallback that each of several instances holds)
     */
    public StoreLimits scaled(double share) {
        if (share >= 1.0) {
            return this;
        }
        Limit[] scaled = new Limit[limits.size()];
        for (int i = 0; i < scaled.length; i++) {
            Limit limit = limits.get(i);
            long permits = Math.max(1, (long) Math.floor(limit.permits() * share));
            long capacity = Math.max(1, (long) Math.floor(limit.capacity() * share));
            scaled[i] = new Limit(permits, limit.period(), capacity);
        }
        return new StoreLimits(List.of(scaled), algorithm);
    }

    /**
     * @return the windows
     */
    public List<Limit> limits() {
        return limits;
    }

    /**
     * @return how the windows count
     */
    public Algorithm algorithm() {
        return algorithm;
    }

    /** @return the longest window's period in nanoseconds */
    long longestPeriodNanos() {
        return longestPeriodNanos;
    }

    /** @return the longest window's limit */
    long longestPermits() {
        return longestPermits;
    }

    /** @return the Bucket4j configuration of a token-bucket or fixed-window rule */
    BucketConfiguration bucketConfiguration() {
        if (configuration == null) {
            throw new IllegalStateException(algorithm + " does not run on Bucket4j");
        }
        return configuration;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StoreLimits other && algorithm == other.algorithm && limits.equals(other.limits);
    }

    @Override
    public int hashCode() {
        return 31 * limits.hashCode() + algorithm.hashCode();
    }

    @Override
    public String toString() {
        return algorithm + " " + limits;
    }
}
