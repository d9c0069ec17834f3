package io.github.ratelimit.redis;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.ratelimit.Rule;
import io.github.ratelimit.store.BucketStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.UnifiedJedis;

/**
 * The blocks of keys ({@link Rule#blockFor()}) in Redis, shared by every instance: one key per blocked key,
 * {@code <prefix>:<rule>:{<key>}:block} (the bucket's hash tag, so its Cluster slot), holding {@code 1} and expiring
 * when the block ends. A block is written only if the key has none running, so a refusal during a block never makes it
 * longer.
 *
 * <p>What this instance learned of a running block (when it wrote it or last read it) answers for Redis until the block
 * ends, for at most {@link RejectionMemo#RECHECK_NANOS} at a time: a blocked key's flood costs Redis one command per
 * second and key at most, and a block lifted by a reset through another instance is seen here within that second. A
 * reset through this instance forgets it at once. A key found not blocked is asked again on its next call.
 *
 * <p>Garbage under a block key is never obeyed: a key of another type, without an expiry, or expiring later than
 * {@link Rule#MAX_BLOCK_FOR} from now (which no instance writes) is deleted, counted and logged as a repair, and the key
 * is not blocked. Thread-safe.
 */
final class RedisBlocks {

    /** Milliseconds of the longest block a rule may have; no instance writes a block key living longer. */
    static final long MAX_MILLIS = Rule.MAX_BLOCK_FOR.toMillis();

    /**
     * ARGV[1] {@code r} reads the block, {@code b} starts one of ARGV[3] milliseconds unless one is running; ARGV[2] the
     * longest a block key may live, in milliseconds. Reply: {@code {milliseconds left of the block (0 for none),
     * repaired}}. A constant number of commands.
     */
    static final LuaScript SCRIPT = new LuaScript("""
            local key = KEYS[1]
            local max = tonumber(ARGV[2])
            local ttl = redis.call('PTTL', key)
            local repaired = 0
            if ttl == -1 or ttl > max or (ttl > 0 and redis.call('TYPE', key).ok ~= 'string') then
              redis.call('UNLINK', key)
              ttl = 0
              repaired = 1
            end
            if ARGV[1] == 'b' and ttl <= 0 then
              redis.call('SET', key, '1', 'PX', ARGV[3])
              ttl = tonumber(ARGV[3])
            end
            if ttl < 0 then ttl = 0 end
            return {ttl, repaired}
            """);

    private static final byte[] READ = {'r'};
    private static final byte[] BLOCK = {'b'};
    private static final byte[] MAX = Long.toString(MAX_MILLIS).getBytes(StandardCharsets.US_ASCII);

    /**
     * What this instance knows of a running block.
     *
     * @param until when it ends, on {@link #nanoTime}
     * @param recheckAt when to ask Redis again: at the end, or {@link RejectionMemo#RECHECK_NANOS} after it learned it
     */
    private record Known(long until, long recheckAt) {}

    private final UnifiedJedis jedis;
    private final CasProxyManager proxies;
    private final String prefix;
    private final LongSupplier nanoTime;
    private final Cache<BucketStore.Key, Known> known;

    /**
     * @param jedis the client
     * @param proxies sends commands through the store's breaker, and counts repairs
     * @param prefix the store's key prefix
     * @param maximumKeys the most blocked keys this instance remembers at once (a forgotten one is asked again)
     * @param nanoTime a monotonic clock (Redis expires keys on real time, whatever clock the buckets use)
     */
    RedisBlocks(UnifiedJedis jedis, CasProxyManager proxies, String prefix, long maximumKeys, LongSupplier nanoTime) {
        this.jedis = jedis;
        this.proxies = proxies;
        this.prefix = prefix;
        this.nanoTime = nanoTime;
        this.known = Caffeine.newBuilder()
                .maximumSize(maximumKeys)
                .expireAfterWrite(Duration.ofNanos(RejectionMemo.RECHECK_NANOS))
                .build();
    }

    /**
     * @param key the key
     * @return nanoseconds left of its block, 0 for none
     * @throws io.github.ratelimit.store.RateLimitStoreException when Redis failed, or the breaker is open
     */
    long blockedNanos(BucketStore.Key key) {
        Known k = known.getIfPresent(key);
        if (k != null) {
            long now = nanoTime.getAsLong();
            if (now < k.until && now < k.recheckAt) {
                return k.until - now;
            }
            known.invalidate(key);
        }
        return run(key, READ, null);
    }

    /**
     * @param key the key
     * @param nanos how long to block it, unless it is blocked already
     * @return nanoseconds left of its block afterwards
     * @throws io.github.ratelimit.store.RateLimitStoreException when Redis failed, or the breaker is open
     */
    long block(BucketStore.Key key, long nanos) {
        if (nanos < 1) {
            throw new IllegalArgumentException("a block of at least 1 ns, not " + nanos);
        }
        long millis = Math.min(MAX_MILLIS, Math.max(1, (nanos + 999_999) / 1_000_000));
        return run(key, BLOCK, Long.toString(millis).getBytes(StandardCharsets.US_ASCII));
    }

    /** Forgets what this instance knows of the key's block (its key in Redis is deleted by the caller). */
    void forget(BucketStore.Key key) {
        known.invalidate(key);
    }

    private long run(BucketStore.Key key, byte[] op, byte @Nullable [] millis) {
        byte[] redisKey = RedisKeys.blockKey(prefix, key);
        List<byte[]> args = millis == null ? List.of(op, MAX) : List.of(op, MAX, millis);
        long asked = nanoTime.getAsLong();
        Object reply = proxies.call(() -> SCRIPT.run(jedis, List.of(redisKey), args));
        long leftMillis = 0;
        if (reply instanceof List<?> list
                && list.size() == 2
                && list.get(0) instanceof Long ttl
                && list.get(1) instanceof Long repaired) {
            leftMillis = Math.max(0, Math.min(MAX_MILLIS, ttl));
            if (repaired != 0) {
                proxies.repaired(
                        redisKey, "a block key of another type, without an expiry or expiring too late; deleted");
            }
        }
        if (leftMillis == 0) {
            return 0;
        }
        long left = leftMillis * 1_000_000;
        // Measured from when the question left: the block ends no later than this instance believes.
        known.put(key, new Known(asked + left, asked + Math.min(left, RejectionMemo.RECHECK_NANOS)));
        return left;
    }
}
