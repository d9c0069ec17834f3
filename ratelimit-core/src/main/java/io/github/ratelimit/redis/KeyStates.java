package io.github.ratelimit.redis;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.distributed.proxy.optimization.DelayParameters;
import io.github.bucket4j.distributed.proxy.optimization.NopeOptimizationListener;
import io.github.bucket4j.distributed.proxy.optimization.delay.DelayOptimization;
import io.github.ratelimit.Rule.LocalFirst;
import io.github.ratelimit.internal.bucket.BucketKeyState;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.BucketStore.KeyState;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * What this JVM remembers of each key it decides: for a token-bucket or fixed-window key, the Bucket4j proxy with the
 * reference it writes through (the key's Redis key, its configuration and the configuration's version); for a sliding
 * window, its state object; for both, until when Redis last said the key cannot pay ({@link RejectionMemo}). Entries
 * are kept for 10 minutes after their last use, at most a given number of each; an evicted key costs one more round
 * trip when it comes back. Thread-safe.
 */
final class KeyStates {

    /**
     * A bucket's reference (its key, configuration and last seen state), the Bucket4j proxy over it, and its state
     * as the limiter sees it: the proxy's, with the memory of its last rejection.
     */
    record Entry(CasProxyManager.Ref ref, Bucket proxy, BucketStore.KeyState state) {}

    /** A sliding window's state in Redis, and the same with the memory of its last rejection. */
    private record Sliding(BucketStore.Limits limits, BucketStore.KeyState state) {}

    private final CasProxyManager proxies;
    private final TimeMeter clock;
    private final String prefix;
    private final Cache<BucketStore.Key, Entry> entries;
    private final Cache<BucketStore.Key, Sliding> sliding;
    private final RedisSlidingState.Context slidingContext;
    /** Concurrency rules' slots, and the renewal of this instance's leases. */
    private final RedisSlots slots;

    /**
     * @param proxies makes the proxies and runs their commands, and the sliding windows' scripts
     * @param clock the store's clock, which dates configuration versions
     * @param slidingClock the clock sliding windows use, or {@code null} for the server's {@code TIME}
     * @param prefix the Redis key prefix
     * @param combining whether this JVM's concurrent operations on a sliding window's key are combined into one script
     *        run (a bucket's are combined by the proxies' manager)
     * @param maximum the most keys remembered, of each kind
     */
    KeyStates(
            CasProxyManager proxies,
            TimeMeter clock,
            @Nullable TimeMeter slidingClock,
            String prefix,
            boolean combining,
            long maximum) {
        this.proxies = proxies;
        this.clock = clock;
        this.prefix = prefix;
        this.entries = Caffeine.newBuilder()
                .maximumSize(maximum)
                .expireAfterAccess(Duration.ofMinutes(10))
                .build();
        this.sliding = Caffeine.newBuilder()
                .maximumSize(maximum)
                .expireAfterAccess(Duration.ofMinutes(10))
                .build();
        // Sliding windows read the server's TIME in their script, unless the store was given a clock. Log members
        // are unique across instances: a random prefix per store, then a sequence number.
        String memberPrefix = Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36) + ".";
        this.slidingContext =
                new RedisSlidingState.Context(proxies, slidingClock, memberPrefix, new AtomicLong(), combining);
        this.slots = new RedisSlots(slidingContext, clock);
    }

    /** @return the leases of calls in flight this instance renews */
    int leasesRenewed() {
        return slots.held();
    }

    /** Stops renewing this instance's leases: its calls' slots run out unless given back. */
    void close() {
        slots.close();
    }

    /**
     * @param key the key
     * @param limits its limits now
     * @param localFirst the rule's local-first settings, or {@code null}
     * @return the key's state
     */
    BucketStore.KeyState state(BucketStore.Key key, BucketStore.Limits limits, LocalFirst localFirst) {
        if (limits.onBucket4j()) {
            return entry(key, limits.bucketConfiguration(), localFirst).state();
        }
        if (limits.concurrency() > 0) {
            return slots.state(RedisKeys.slotsKey(prefix, key), limits.concurrency());
        }
        Sliding state = sliding.getIfPresent(key);
        if (state != null && sameLimits(state, limits)) {
            return state.state;
        }
        // Made once per key and limits, atomically: one state per key is what its calls of this JVM share.
        return sliding.asMap()
                .compute(key, (k, known) -> known != null && sameLimits(known, limits) ? known : newSliding(k, limits))
                .state;
    }

    private static boolean sameLimits(Sliding state, BucketStore.Limits limits) {
        return state.limits() == limits || state.limits().equals(limits);
    }

    private Sliding newSliding(BucketStore.Key key, BucketStore.Limits limits) {
        BucketStore.KeyState redis = limits.calendar()
                ? new RedisCalendarState(slidingContext, clock, RedisKeys.calendarKey(prefix, key), limits)
                : new RedisSlidingState(slidingContext, RedisKeys.slidingKey(prefix, key, limits.algorithm()), limits);
        return new Sliding(limits, new RejectionMemo(redis, clock));
    }

    /**
     * @param key the key
     * @param configuration its configuration now; an entry made with another is replaced by one with a newer version
     * @param localFirst the rule's local-first settings, or {@code null}
     * @return the key's entry
     */
    Entry entry(BucketStore.Key key, BucketConfiguration configuration, @Nullable LocalFirst localFirst) {
        Entry entry = entries.getIfPresent(key);
        if (entry != null && sameConfiguration(entry, configuration)) {
            return entry;
        }
        // Made once per key and configuration, atomically: two entries of one key would be two queues of this JVM's
        // commands on one bucket, whose compare-and-sets would conflict with each other.
        return entries.asMap()
                .compute(
                        key,
                        (k, known) -> known != null && sameConfiguration(known, configuration)
                                ? known
                                : newEntry(
                                        k,
                                        configuration,
                                        localFirst,
                                        known == null ? Long.MIN_VALUE : known.ref.version));
    }

    private static boolean sameConfiguration(Entry entry, BucketConfiguration configuration) {
        return entry.ref.configuration == configuration || entry.ref.configuration.equals(configuration);
    }

    private Entry newEntry(
            BucketStore.Key key,
            BucketConfiguration configuration,
            @Nullable LocalFirst localFirst,
            long previousVersion) {
        CasProxyManager.Ref ref = newRef(key, configuration, previousVersion);
        Bucket proxy = newProxy(ref, localFirst);
        // Redis computes each write's expiry from the state it writes, so a reservation needs no second look.
        // A local-first bucket decides in this JVM, mostly: it has no round trip to share.
        KeyState redis = localFirst != null
                ? new BucketKeyState(proxy)
                : new RedisBucketState(new BucketKeyState(proxy), ref, proxies);
        return new Entry(ref, proxy, new RejectionMemo(redis, clock));
    }

    /** @param key a key whose next write should carry a new version, or {@code null} for every key */
    void forget(BucketStore.Key key) {
        if (key == null) {
            entries.invalidateAll();
            sliding.invalidateAll();
        } else {
            entries.invalidate(key);
            sliding.invalidate(key);
        }
    }

    private CasProxyManager.Ref newRef(BucketStore.Key key, BucketConfiguration configuration, long previous) {
        // Versions are the (server) clock's milliseconds, so the newest configuration seen anywhere wins, and an
        // instance still running the old one does not switch the bucket back. A changed configuration of a key
        // this JVM already knew goes at least one past the version it replaces, even within one millisecond. No
        // counter shared by keys: versions never run ahead of the clock however many keys an instance creates.
        long now = clock.currentTimeNanos() / 1_000_000L;
        long version = previous == Long.MIN_VALUE ? now : Math.max(previous + 1, now);
        return new CasProxyManager.Ref(RedisKeys.bucketKey(prefix, key), configuration, version);
    }

    private Bucket newProxy(CasProxyManager.Ref ref, @Nullable LocalFirst localFirst) {
        var builder = proxies.builder();
        if (localFirst != null) {
            // Bucket4j's delaying optimization (which batches too), on the store's clock rather than the local one.
            builder = builder.withOptimization(new DelayOptimization(
                    new DelayParameters(localFirst.maxUnsyncedTokens(), localFirst.maxUnsyncedTime()),
                    NopeOptimizationListener.INSTANCE,
                    clock));
        }
        // Otherwise no optimization: the proxies' manager combines this JVM's concurrent commands on a key itself.
        return builder.build(ref, () -> ref.configuration);
    }
}
