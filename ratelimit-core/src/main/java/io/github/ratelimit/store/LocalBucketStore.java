package io.github.ratelimit.store;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.BucketState;
import io.github.bucket4j.MathType;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.TokensInheritanceStrategy;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.bucket.AllowedVerdict;
import io.github.ratelimit.internal.bucket.BucketKeyState;
import io.github.ratelimit.internal.bucket.RecordingBucket;
import io.github.ratelimit.store.BucketStore.KeyState;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;

/**
 * Buckets in this JVM's memory, in a bounded map: a flood of distinct keys evicts the least recently used
 * buckets instead of exhausting the heap.
 *
 * <p>Token-bucket and fixed-window keys are buckets of Bucket4j's state (a {@code BucketState} changed in place under a
 * lock of the key's own), at most {@link Builder#maximumKeys} of them;
 * sliding-window keys are a log or counters of this library's own, in a map of their own whose maximum is the same
 * number as a weight: a sliding log weighs one key per {@value #LOG_ENTRIES_PER_KEY_WEIGHT} calls its longest
 * window may hold (so 100,000 keys of logs of 10,000 calls cannot take 16 GB). A log is dropped once its newest
 * call has slid out of the longest window; counters once their last interval no longer weighs.
 *
 * <p>A bucket is dropped once it has been idle until it is full again: then a new bucket is the same, so expiry
 * loses nothing. Each access sets the idle time to what the next operation could need: the time to refill from
 * empty, or, for a bucket that has reserved tokens ahead (a delayed call of a SOFT rule, which takes it below
 * zero), the time to full from its actual state, whichever is longer, and a second of slack. The limiter accesses
 * a bucket again right after a reservation ({@link BucketStore}), so its debt is counted from then. Under more than
 * {@link Builder#maximumKeys(long)} keys, eviction can drop a bucket that is not yet full, so size the maximum
 * above the number of keys active within the longest window.
 *
 * <p>Thread-safe. Each bucket is Bucket4j's state under a lock of its own ({@link LocalBucket}).
 */
public final class LocalBucketStore implements BucketStore {

    /** The default maximum number of buckets. */
    public static final long DEFAULT_MAXIMUM_KEYS = 100_000;

    /**
     * Token-bucket and fixed-window keys, by the key alone: each entry holds the key's bucket under each rule, and
     * weighs one per bucket against the maximum. Found by the key's string, so a lookup makes no object.
     */
    private final Cache<String, KeyBuckets> buckets;
    /** Finds a key's buckets without recording the read: a bucket records its use itself ({@link #TOUCH_NANOS}). */
    private final com.github.benmanes.caffeine.cache.Policy<String, KeyBuckets> bucketsQuietly;
    /** Sliding-window keys, weighed (a log by the calls it may hold), against a maximum weight of their own. */
    private final Cache<BucketStore.Key, LocalSlidingState> sliding;

    /**
     * Blocked keys ({@link #block}): when each block ends, on the store's clock. Each entry expires when its block
     * ends, and there are at most as many as {@link Builder#maximumKeys} (one weighs as much as a bucket), so a
     * flood of blocked keys evicts the least recently used blocks instead of exhausting the heap.
     */
    private final Cache<BucketStore.Key, Long> blocks;

    private final TimeMeter timeMeter;
    /** Concurrency rules' keys: their calls in flight. */
    private final LocalSlots slots = new LocalSlots();

    private LocalBucketStore(Builder builder) {
        this.timeMeter = builder.timeMeter;
        long maximumKeys = builder.maximumKeys;
        this.buckets = configure(
                        Caffeine.newBuilder()
                                .maximumWeight(maximumKeys)
                                .weigher((String key, KeyBuckets entry) -> entry.buckets.length),
                        builder)
                .expireAfter(new IdleExpiry<String, KeyBuckets>(this::entryIdle))
                .build();
        this.bucketsQuietly = buckets.policy();
        // Weighed, so a sliding log (up to Rule.MAX_LOG_CALLS entries) counts for the memory it may take.
        this.sliding = configure(
                        Caffeine.newBuilder()
                                .maximumWeight(maximumKeys)
                                .weigher((BucketStore.Key key, LocalSlidingState state) -> weight(state, maximumKeys)),
                        builder)
                .expireAfter(new IdleExpiry<BucketStore.Key, LocalSlidingState>(LocalBucketStore::slidingIdle))
                .build();
        this.blocks = configure(Caffeine.newBuilder().maximumSize(maximumKeys), builder)
                .expireAfter(new BlockExpiry<BucketStore.Key>(timeMeter))
                .build();
    }

    private <K, V> Caffeine<K, V> configure(Caffeine<K, V> caffeine, Builder builder) {
        if (timeMeter != TimeMeter.SYSTEM_MILLISECONDS && timeMeter != TimeMeter.SYSTEM_NANOTIME) {
            TimeMeter meter = timeMeter;
            caffeine.ticker(meter::currentTimeNanos);
        } else {
            caffeine.ticker(Ticker.systemTicker());
        }
        // Maintenance on the calling thread by default: handing it to a pool woke a thread on every decision,
        // the largest cost on this path in the benchmark (docs/BENCHMARKS-local.md).
        return caffeine.executor(builder.executor != null ? builder.executor : Runnable::run);
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
    public KeyState state(BucketStore.Key key, BucketStore.Limits limits, Rule.LocalFirst localFirst) {
        if (limits.onBucket4j()) {
            return bucketFor(key.rule(), key.key(), limits.bucketConfiguration());
        }
        return otherState(key, limits);
    }

    /** Finds a token-bucket or fixed-window key's bucket without making a {@link BucketStore.Key}. */
    @Override
    public KeyState state(String rule, String key, BucketStore.Limits limits, Rule.LocalFirst localFirst) {
        if (limits.onBucket4j()) {
            return bucketFor(rule, key, limits.bucketConfiguration());
        }
        return otherState(new BucketStore.Key(rule, key), limits);
    }

    /** The state of a concurrency rule's key, or of a sliding window or calendar quota. */
    private KeyState otherState(BucketStore.Key key, BucketStore.Limits limits) {
        if (limits.concurrency() > 0) {
            return slots.state(key, limits.concurrency());
        }
        LocalSlidingState state =
                sliding.get(key, k -> LocalSlidingState.create(limits, timeMeter, () -> touch(sliding, k)));
        if (state.algorithm() != limits.algorithm() || state.calendar() != limits.calendar()) {
            // The rule changed its algorithm: the old state means nothing to the new one.
            LocalSlidingState fresh = LocalSlidingState.create(limits, timeMeter, () -> touch(sliding, key));
            sliding.put(key, fresh);
            return fresh;
        }
        if (state.limits() != limits && !state.limits().equals(limits)) {
            // Changed limits (a key's own, or a redeployed rule): put it again, so the cache weighs it and sets
            // its expiry from the new limits.
            state.limits(limits);
            sliding.put(key, state);
        }
        return state;
    }

    /**
     * The bucket behind a token-bucket or fixed-window key, created with {@code configuration} when absent; one
     * whose configuration differs is replaced with {@code TokensInheritanceStrategy.ADDITIVE} (a window whose
     * capacity grows gains the difference).
     */
    LocalBucket bucketFor(BucketStore.Key key, BucketConfiguration configuration) {
        return bucketFor(key.rule(), key.key(), configuration);
    }

    private LocalBucket bucketFor(String rule, String key, BucketConfiguration configuration) {
        // Quietly: a full read (the map's order, its frequency sketch, the expiry's timer wheel) on every call was most
        // of a decision's time; each bucket records a read itself at most every TOUCH_NANOS.
        KeyBuckets entry = bucketsQuietly.getIfPresentQuietly(key);
        LocalBucket bucket = entry == null ? null : entry.find(rule);
        if (bucket == null) {
            bucket = add(rule, key, configuration);
        }
        BucketConfiguration current = bucket.configuration();
        if (current != configuration && !current.equals(configuration)) {
            bucket.replaceConfiguration(configuration);
        }
        return bucket;
    }

    /** Reads a key's entry for the read's effect alone: the cache computes its expiry again from the state now. */
    private static <K> void touch(Cache<K, ?> cache, K key) {
        var unused = cache.getIfPresent(key);
    }

    /**
     * Adds the key's bucket under {@code rule} to the key's entry, unless another call added it first: atomically with
     * the entry's eviction, and written again, so the entry weighs its new bucket.
     */
    private LocalBucket add(String rule, String key, BucketConfiguration configuration) {
        LocalBucket[] found = new LocalBucket[1];
        buckets.asMap().compute(key, (k, entry) -> {
            LocalBucket existing = entry == null ? null : entry.find(rule);
            if (existing != null) {
                found[0] = existing;
                return entry;
            }
            LocalBucket fresh = newBucket(rule, k, configuration);
            found[0] = fresh;
            return entry == null ? new KeyBuckets(new LocalBucket[] {fresh}) : entry.with(fresh);
        });
        return found[0];
    }

    @Override
    public void reset(BucketStore.Key key) {
        buckets.asMap().computeIfPresent(key.key(), (k, entry) -> entry.without(key.rule()));
        sliding.invalidate(key);
        slots.reset(key);
        blocks.invalidate(key);
    }

    /** Keeps blocks in this JVM, with the keys' state. */
    @Override
    public boolean keepsBlocks() {
        return true;
    }

    @Override
    public long blockedNanos(BucketStore.Key key) {
        Long until = blocks.getIfPresent(key);
        if (until == null) {
            return 0;
        }
        long left = until - timeMeter.currentTimeNanos();
        return Math.max(0, left);
    }

    @Override
    public long block(BucketStore.Key key, long nanos) {
        if (nanos < 1) {
            throw new IllegalArgumentException("a block of at least 1 ns, not " + nanos);
        }
        long now = timeMeter.currentTimeNanos();
        // Atomically: of two calls refused at once, one starts the block and the other finds it.
        long until = blocks.asMap()
                .compute(key, (k, running) -> running != null && running - now > 0 ? running : now + nanos);
        return until - now;
    }

    /**
     * A key's weight against {@link Builder#maximumKeys}: 1 for a bucket or a set of sliding counters (a few
     * hundred bytes each), and one more per {@value #LOG_ENTRIES_PER_KEY_WEIGHT} calls a sliding log's longest
     * window may hold (16 bytes per call), from the limits it was created with.
     */
    static int weight(LocalSlidingState state, long maximumKeys) {
        // At most a tenth of the maximum, so ten logs always fit: a heavier one would be evicted as soon as it
        // was made, and its key would never be limited.
        return (int) Math.min(weight(state), Math.max(1, maximumKeys / 10));
    }

    static int weight(LocalSlidingState state) {
        return state instanceof SlidingLogState
                ? (int) Math.min(Integer.MAX_VALUE, 1 + state.limits().longestPermits() / LOG_ENTRIES_PER_KEY_WEIGHT)
                : 1;
    }

    /** How many log entries weigh as much as one bucket. */
    static final long LOG_ENTRIES_PER_KEY_WEIGHT = 16;

    /**
     * @return the number of buckets held now (approximate, as Caffeine's estimate)
     */
    public long size() {
        long bucketCount = buckets.policy()
                .eviction()
                .map(eviction -> eviction.weightedSize().orElse(buckets.estimatedSize()))
                .orElse(buckets.estimatedSize());
        return bucketCount + sliding.estimatedSize();
    }

    /**
     * Runs pending evictions now; for tests and diagnostics.
     */
    public void cleanUp() {
        buckets.cleanUp();
        sliding.cleanUp();
    }

    @Override
    public void close() {
        buckets.invalidateAll();
        sliding.invalidateAll();
        blocks.invalidateAll();
    }

    private LocalBucket newBucket(String rule, String key, BucketConfiguration configuration) {
        // Built around the caller's configuration object itself, so equal rules share one configuration and the
        // identity check before equals() on each lookup usually settles it.
        if (!timeMeter.isWallClockBased()) {
            for (Bandwidth bandwidth : configuration.getBandwidths()) {
                if (bandwidth.isIntervallyAligned()) {
                    throw new InvalidRateLimitConfigurationException(
                            "local store: a FIXED_WINDOW rule needs a " + "wall-clock time meter, but " + timeMeter
                                    + " is not one. Use TimeMeter.SYSTEM_MILLISECONDS.");
                }
            }
        }
        return new LocalBucket(configuration, rule, key);
    }

    /**
     * One key's buckets, under each rule that has one: immutable, replaced when a rule's bucket is added or reset. A
     * key is seldom under more than a few rules of buckets, so the rules are searched in order.
     */
    private static final class KeyBuckets {

        final LocalBucket[] buckets;

        KeyBuckets(LocalBucket[] buckets) {
            this.buckets = buckets;
        }

        @Nullable
        LocalBucket find(String rule) {
            for (LocalBucket bucket : buckets) {
                if (bucket.rule.equals(rule)) {
                    return bucket;
                }
            }
            return null;
        }

        KeyBuckets with(LocalBucket bucket) {
            LocalBucket[] more = java.util.Arrays.copyOf(buckets, buckets.length + 1);
            more[buckets.length] = bucket;
            return new KeyBuckets(more);
        }

        /** @return the entry without the rule's bucket, or {@code null} when none is left */
        @Nullable
        KeyBuckets without(String rule) {
            LocalBucket[] kept = new LocalBucket[buckets.length];
            int n = 0;
            for (LocalBucket bucket : buckets) {
                if (!bucket.rule.equals(rule)) {
                    kept[n++] = bucket;
                }
            }
            return n == 0 ? null : n == buckets.length ? this : new KeyBuckets(java.util.Arrays.copyOf(kept, n));
        }
    }

    /**
     * A token-bucket or fixed-window key: Bucket4j's {@link BucketState}, refilled and changed in place under the
     * key's own lock, with the same state methods Bucket4j's local buckets call. Not a Bucket4j {@code Bucket}: that
     * one builds five API views and an atomic reference per bucket (96 B that no limiter call uses), and copies its
     * state on every operation; this one holds the state, its key, and whether it ever reserved tokens ahead (only
     * such a bucket can owe tokens beyond empty, so only its expiry needs its state). It is its own
     * {@link KeyState}, so a key costs no more objects than the bucket (the heap per key is measured:
     * {@code docs/BENCHMARKS-local.md}).
     */
    final class LocalBucket implements KeyState, RecordingBucket {

        private final String rule;
        private final String key;
        /** Replaced on a configuration change; otherwise changed in place. Written under the lock only. */
        private volatile BucketState state;
        /** Written under the lock only; read without it on every lookup (the map's expiry). */
        private volatile boolean reserved;
        /**
         * How long the configuration takes to refill from empty, capped: read on every lookup (the map's expiry), so
         * kept here rather than computed from the configuration each time.
         */
        private volatile long fromEmptyNanos;
        /** When a call last recorded a read of the key's entry ({@link #used}); racy, so at worst it reads twice. */
        private volatile long touchedNanos;

        LocalBucket(BucketConfiguration configuration, String rule, String key) {
            this.rule = rule;
            this.key = key;
            this.state = BucketState.createInitialState(
                    configuration, MathType.INTEGER_64_BITS, timeMeter.currentTimeNanos());
            this.fromEmptyNanos = fromEmpty(configuration);
            this.touchedNanos = timeMeter.currentTimeNanos(); // created by a write, which sets its expiry
        }

        @Override
        public Probe consume(long cost) {
            long now;
            Probe probe;
            synchronized (this) {
                now = timeMeter.currentTimeNanos();
                BucketState s = state;
                s.refillAllBandwidth(now);
                if (cost > s.getAvailableTokens()) {
                    long wait = s.calculateDelayNanosAfterWillBePossibleToConsume(cost, now, true);
                    probe = new Probe(false, Math.max(1, wait), BucketKeyState.windows(s, now), 0);
                } else {
                    s.consume(cost);
                    probe = new Probe(true, 0, BucketKeyState.windows(s, now), 0);
                }
            }
            used(now);
            return probe;
        }

        @Override
        public boolean consume(long cost, AllowedVerdict verdict) {
            long now;
            synchronized (this) {
                now = timeMeter.currentTimeNanos();
                BucketState s = state;
                BucketConfiguration configuration = s.getConfiguration();
                BucketConfiguration expected = verdict.shape().configuration();
                if (configuration != expected && !configuration.equals(expected)) {
                    return false;
                }
                s.refillAllBandwidth(now);
                if (cost > s.getAvailableTokens()) {
                    return false;
                }
                s.consume(cost);
                BucketKeyState.record(s, now, verdict);
            }
            used(now);
            return true;
        }

        @Override
        public Probe peek(long cost) {
            long now;
            Probe probe;
            synchronized (this) {
                now = timeMeter.currentTimeNanos();
                BucketState s = state;
                s.refillAllBandwidth(now);
                boolean fits = cost <= s.getAvailableTokens();
                long wait = fits ? 0 : Math.max(1, s.calculateDelayNanosAfterWillBePossibleToConsume(cost, now, true));
                probe = new Probe(fits, wait, BucketKeyState.windows(s, now), 0);
            }
            used(now);
            return probe;
        }

        /**
         * Records a read of the key's entry in the map (its place in the eviction order, its frequency, its expiry) when
         * the last was {@link #TOUCH_NANOS} ago or more: the lookups themselves are quiet. A call that finds the
         * bucket has just used it, so an entry read this way expires no earlier than {@link #EXPIRY_SLACK_NANOS} after
         * the bucket could be full again.
         */
        private void used(long now) {
            if (now - touchedNanos >= TOUCH_NANOS) {
                touchedNanos = now;
                touch(buckets, key);
            }
        }

        @Override
        public Probe reserve(long cost, long maxWaitNanos) {
            long wait;
            long now;
            synchronized (this) {
                now = timeMeter.currentTimeNanos();
                BucketState s = state;
                s.refillAllBandwidth(now);
                wait = s.calculateDelayNanosAfterWillBePossibleToConsume(cost, now, false);
                if (wait == Long.MAX_VALUE || wait > maxWaitNanos) {
                    return new Probe(false, maxWaitNanos + 1, List.of(), 0);
                }
                s.consume(cost);
                if (wait > 0) {
                    reserved = true;
                }
            }
            if (wait > 0) {
                touch(buckets, key); // the bucket now owes tokens: let its expiry count the debt
            } else {
                used(now);
            }
            return new Probe(true, wait, List.of(), 0);
        }

        /** Takes what a call used; the bucket may owe tokens, so its expiry counts the debt, as a reservation's. */
        @Override
        public long charge(long tokens) {
            long taken;
            synchronized (this) {
                BucketState s = state;
                s.refillAllBandwidth(timeMeter.currentTimeNanos());
                taken = BucketKeyState.chargeable(s, tokens);
                if (taken > 0) {
                    s.consume(taken);
                    reserved = true;
                }
            }
            if (taken > 0) {
                touch(buckets, key);
            }
            return taken;
        }

        /** Tokens are interchangeable: the receipt is not needed. */
        @Override
        public synchronized void refund(long cost, long receipt) {
            BucketState s = state;
            s.refillAllBandwidth(timeMeter.currentTimeNanos());
            s.addTokens(cost);
        }

        /** @return the configuration the bucket runs */
        BucketConfiguration configuration() {
            return state.getConfiguration();
        }

        /** Replaces the configuration; a window whose capacity grows gains the difference. */
        synchronized void replaceConfiguration(BucketConfiguration configuration) {
            long now = timeMeter.currentTimeNanos();
            BucketState s = state;
            s.refillAllBandwidth(now);
            state = s.replaceConfiguration(configuration, TokensInheritanceStrategy.ADDITIVE, now);
            fromEmptyNanos = fromEmpty(configuration);
        }

        /** @return the tokens available now (the least over the windows); for tests */
        synchronized long availableTokens() {
            BucketState s = state;
            s.refillAllBandwidth(timeMeter.currentTimeNanos());
            return s.getAvailableTokens();
        }

        /** @return whether it ever reserved tokens ahead */
        boolean reserved() {
            return reserved;
        }

        /** @return nanoseconds until every window is full again, from the state now */
        synchronized long nanosUntilFull() {
            long now = timeMeter.currentTimeNanos();
            BucketState s = state;
            s.refillAllBandwidth(now);
            return s.calculateFullRefillingTime(now);
        }
    }

    /** @return {@link #refillFromEmptyNanos}, capped so that adding to it cannot overflow */
    private static long fromEmpty(BucketConfiguration configuration) {
        return Math.min(refillFromEmptyNanos(configuration), Long.MAX_VALUE / 2);
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

    /**
     * How often, at most, a bucket in use records a read of its key's entry: between two, its calls find it without
     * one.
     */
    static final long TOUCH_NANOS = 500_000_000L;

    /**
     * Added to every idle time: Caffeine leaves an entry's expiry as it is when a read would move it by a second or
     * less, and a bucket in use records a read only every {@link #TOUCH_NANOS}, so an expiry that may lag by that much
     * must start that late to never come early.
     */
    static final long EXPIRY_SLACK_NANOS = 1_000_000_000L + TOUCH_NANOS;

    /** An expiry that sets the same idle time on creation, update and read, from the entry's state. */
    private static final class IdleExpiry<K, V> implements Expiry<K, V> {

        private final ToLongFunction<V> idle;

        IdleExpiry(ToLongFunction<V> idle) {
            this.idle = idle;
        }

        @Override
        public long expireAfterCreate(K key, V value, long currentTime) {
            return idle.applyAsLong(value);
        }

        @Override
        public long expireAfterUpdate(K key, V value, long currentTime, long currentDuration) {
            return idle.applyAsLong(value);
        }

        @Override
        public long expireAfterRead(K key, V value, long currentTime, long currentDuration) {
            return idle.applyAsLong(value);
        }
    }

    /** A block is kept until it ends, however often it is read. */
    private static final class BlockExpiry<K> implements Expiry<K, Long> {

        private final TimeMeter clock;

        BlockExpiry(TimeMeter clock) {
            this.clock = clock;
        }

        @Override
        public long expireAfterCreate(K key, Long until, long currentTime) {
            return Math.max(0, until - clock.currentTimeNanos());
        }

        @Override
        public long expireAfterUpdate(K key, Long until, long currentTime, long currentDuration) {
            return Math.max(0, until - clock.currentTimeNanos());
        }

        @Override
        public long expireAfterRead(K key, Long until, long currentTime, long currentDuration) {
            return currentDuration;
        }
    }

    /** A sliding key is kept while what it counted can matter. */
    private static long slidingIdle(LocalSlidingState state) {
        // A read comes before an operation that may count a call now: as long as a call counted now matters
        // (the longest window for a log, two intervals for counters), and until the last counted call (a
        // reservation, seen again right after it) stops mattering.
        long horizon = state.horizonNanos(state.limits());
        return Math.min(Math.max(horizon, state.nanosUntilIrrelevant()), Long.MAX_VALUE / 2) + EXPIRY_SLACK_NANOS;
    }

    /** A key's buckets are kept until each would be full again. */
    private long entryIdle(KeyBuckets entry) {
        long idle = 0;
        for (LocalBucket bucket : entry.buckets) {
            idle = Math.max(idle, bucketIdle(bucket));
        }
        return idle;
    }

    /** A bucket is kept until it would be full again. */
    private long bucketIdle(LocalBucket bucket) {
        long fromEmpty = bucket.fromEmptyNanos;
        // Any operation but a reservation leaves every window at zero or above: full within fromEmpty.
        long untilFull = bucket.reserved()
                ? Math.max(fromEmpty, Math.min(bucket.nanosUntilFull(), Long.MAX_VALUE / 2))
                : fromEmpty;
        return untilFull + EXPIRY_SLACK_NANOS;
    }

    /**
     * Builds a {@link LocalBucketStore}. Not thread-safe.
     */
    public static final class Builder {

        private long maximumKeys = DEFAULT_MAXIMUM_KEYS;
        private TimeMeter timeMeter = TimeMeter.SYSTEM_MILLISECONDS;
        private @Nullable Executor executor;

        private Builder() {}

        /**
         * @param maximumKeys the most keys held at once (a sliding log weighs as several keys), at least 1
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
            this.timeMeter = Objects.requireNonNull(timeMeter, "timeMeter");
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
