package io.github.ratelimit.store;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.TokensInheritanceStrategy;
import io.github.bucket4j.BucketListener;
import io.github.bucket4j.MathType;
import io.github.bucket4j.local.LocalBucket;
import io.github.bucket4j.local.LockFreeBucket;
import io.github.ratelimit.InvalidRateLimitConfigurationException;

import java.util.concurrent.Executor;

/**
 * Buckets in this JVM's memory, in a bounded map: a flood of distinct keys evicts the least recently used
 * buckets instead of exhausting the heap.
 *
 * <p>A bucket is dropped once it has been idle for twice the time its configuration needs to refill from
 * empty: by then it is full again, so a new bucket is the same (the factor two covers reservations of delayed
 * calls that took it below zero). Under more than {@link Builder#maximumKeys(long)} keys, eviction can drop a
 * bucket that is not yet full, so size the maximum above the number of keys active within the longest window.
 *
 * <p>Thread-safe. Each bucket is a Bucket4j lock-free local bucket.
 */
public final class LocalBucketStore implements BucketStore {

    /** The default maximum number of buckets. */
    public static final long DEFAULT_MAXIMUM_KEYS = 100_000;

    private final Cache<BucketKey, LocalBucket> buckets;
    private final TimeMeter timeMeter;

    private LocalBucketStore(Builder builder) {
        this.timeMeter = builder.timeMeter;
        Caffeine<Object, Object> caffeine = Caffeine.newBuilder().maximumSize(builder.maximumKeys);
        if (timeMeter != TimeMeter.SYSTEM_MILLISECONDS && timeMeter != TimeMeter.SYSTEM_NANOTIME) {
            TimeMeter meter = timeMeter;
            caffeine.ticker(meter::currentTimeNanos);
        } else {
            caffeine.ticker(Ticker.systemTicker());
        }
        // Maintenance on the calling thread by default: handing it to a pool woke a thread on every decision,
        // the largest cost on this path in the benchmark (docs/BENCHMARKS-local.md).
        caffeine.executor(builder.executor != null ? builder.executor : Runnable::run);
        this.buckets = caffeine.expireAfter(new IdleExpiry()).build();
    }

    /**
     * @return a store with {@link #DEFAULT_MAXIMUM_KEYS} and the system clock
     */
    public static LocalBucketStore create() {
        return builder().build();
    }

    /**
     * @return a builder
     */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public Bucket bucket(BucketKey key, BucketConfiguration configuration) {
        LocalBucket bucket = buckets.get(key, k -> newBucket(configuration));
        BucketConfiguration current = bucket.getConfiguration();
        if (current != configuration && !current.equals(configuration)) {
            bucket.replaceConfiguration(configuration, TokensInheritanceStrategy.ADDITIVE);
        }
        return bucket;
    }

    /**
     * @return the number of buckets held now (approximate, as Caffeine's estimate)
     */
    public long size() {
        return buckets.estimatedSize();
    }

    /**
     * Runs pending evictions now; for tests and diagnostics.
     */
    public void cleanUp() {
        buckets.cleanUp();
    }

    @Override
    public void close() {
        buckets.invalidateAll();
    }

    private LocalBucket newBucket(BucketConfiguration configuration) {
        // Built around the caller's configuration object itself (not a copy, as Bucket.builder() makes), so equal
        // rules share one configuration and the identity check in bucket() holds.
        if (!timeMeter.isWallClockBased()) {
            for (Bandwidth bandwidth : configuration.getBandwidths()) {
                if (bandwidth.isIntervallyAligned()) {
                    throw new InvalidRateLimitConfigurationException("local store: a FIXED_WINDOW rule needs a "
                            + "wall-clock time meter, but " + timeMeter + " is not one. Use TimeMeter.SYSTEM_MILLISECONDS.");
                }
            }
        }
        return new LockFreeBucket(configuration, MathType.INTEGER_64_BITS, timeMeter, BucketListener.NOPE);
    }

    /**
     * @param configuration a bucket configuration
     * @return nanoseconds the slowest of its bandwidths needs to refill from empty
     */
    static long refillFromEmptyNanos(BucketConfiguration configuration) {
        long longest = 0;
        for (Bandwidth b : configuration.getBandwidths()) {
            long periods = (b.getCapacity() + b.getRefillTokens() - 1) / b.getRefillTokens();
            long nanos;
            try {
                nanos = Math.multiplyExact(periods, b.getRefillPeriodNanos());
            } catch (ArithmeticException e) {
                nanos = Long.MAX_VALUE / 4;
            }
            longest = Math.max(longest, nanos);
        }
        return longest;
    }

    private static final class IdleExpiry implements Expiry<BucketKey, LocalBucket> {

        @Override
        public long expireAfterCreate(BucketKey key, LocalBucket bucket, long currentTime) {
            return idle(bucket);
        }

        @Override
        public long expireAfterUpdate(BucketKey key, LocalBucket bucket, long currentTime, long currentDuration) {
            return idle(bucket);
        }

        @Override
        public long expireAfterRead(BucketKey key, LocalBucket bucket, long currentTime, long currentDuration) {
            return idle(bucket);
        }

        /** Idle time per configuration; configurations are few (one per rule, per distinct per-key limits). */
        private final java.util.Map<BucketConfiguration, Long> idleByConfiguration = new java.util.concurrent.ConcurrentHashMap<>();

        private long idle(LocalBucket bucket) {
            BucketConfiguration configuration = bucket.getConfiguration();
            Long known = idleByConfiguration.get(configuration);
            if (known != null) {
                return known;
            }
            long nanos = refillFromEmptyNanos(configuration);
            long idle = nanos > Long.MAX_VALUE / 4 ? Long.MAX_VALUE / 2 : 2 * nanos;
            if (idleByConfiguration.size() < 10_000) {
                idleByConfiguration.put(configuration, idle);
            }
            return idle;
        }
    }

    /**
     * Builds a {@link LocalBucketStore}. Not thread-safe.
     */
    public static final class Builder {

        private long maximumKeys = DEFAULT_MAXIMUM_KEYS;
        private TimeMeter timeMeter = TimeMeter.SYSTEM_MILLISECONDS;
        private Executor executor;

        private Builder() {
        }

        /**
         * @param maximumKeys the most buckets held at once, at least 1
         * @return this builder
         * @throws InvalidRateLimitConfigurationException when not positive
         */
        public Builder maximumKeys(long maximumKeys) {
            if (maximumKeys < 1) {
                throw new InvalidRateLimitConfigurationException("local store: maximumKeys must be at least 1, but was "
                        + maximumKeys + ". Set the most buckets to keep in memory, e.g. 100000.");
            }
            this.maximumKeys = maximumKeys;
            return this;
        }

        /**
         * @param timeMeter the clock of buckets and expiry; wall-clock based for {@code FIXED_WINDOW} rules
         * @return this builder
         */
        public Builder timeMeter(TimeMeter timeMeter) {
            this.timeMeter = java.util.Objects.requireNonNull(timeMeter, "timeMeter");
            return this;
        }

        /**
         * @param executor runs eviction maintenance (default: the calling thread)
         * @return this builder
         */
        public Builder executor(Executor executor) {
            this.executor = executor;
            return this;
        }

        /**
         * @return the store
         */
        public LocalBucketStore build() {
            return new LocalBucketStore(this);
        }
    }
}
