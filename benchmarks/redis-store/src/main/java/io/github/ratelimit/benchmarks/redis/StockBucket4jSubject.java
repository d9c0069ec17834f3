package io.github.ratelimit.benchmarks.redis;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.ConfigurationBuilder;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.RemoteBucketBuilder;
import io.github.bucket4j.distributed.proxy.optimization.Optimizations;
import io.github.bucket4j.redis.jedis.Bucket4jJedis;
import io.github.bucket4j.redis.jedis.cas.JedisBasedProxyManager;
import io.github.ratelimit.Limit;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.RedisClient;

/**
 * Stock Bucket4j over Redis: {@code JedisBasedProxyManager} built by {@code Bucket4jJedis.casBasedBuilder} on a
 * pooled Jedis client, with keys expiring once a bucket would be full again (as an application keeping Redis
 * bounded sets it up), default retries (unbounded), and optionally {@code Optimizations.batching()} on proxies
 * that are built once per key and reused.
 *
 * <p>Each call is the Bucket4j call our limiter makes: {@code asVerbose().tryConsumeAndReturnRemaining(1)}, on a
 * configuration with the same windows (greedy refill, one bandwidth per window, identified by the window). The
 * Redis keys have our layout, {@code <prefix>:<key space>:{<key>}}, so memory per key compares like for like.
 */
final class StockBucket4jSubject implements Subject {

    /**
     * How long a full bucket's key is kept before it expires. Bucket4j's documentation uses 10 s; 60 s keeps the
     * memory probe's keys alive until it has counted them even on a slow machine (the length of a TTL does not
     * change the memory a key takes).
     */
    private static final Duration KEEP_AFTER_REFILL = Duration.ofSeconds(60);

    private final RedisTarget target;
    private final String keyPrefix;
    private final int poolSize;
    private final boolean batching;

    StockBucket4jSubject(RedisTarget target, String keyPrefix, int poolSize, boolean batching) {
        this.target = target;
        this.keyPrefix = keyPrefix;
        this.poolSize = poolSize;
        this.batching = batching;
    }

    @Override
    public String id() {
        return batching ? Options.STOCK_BATCHING : Options.STOCK;
    }

    @Override
    public String label() {
        return batching ? "Stock Bucket4j + batching" : "Stock Bucket4j";
    }

    @Override
    public Session open() {
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(poolSize);
        pool.setMaxIdle(poolSize);
        DefaultJedisClientConfig config = DefaultJedisClientConfig.builder()
                .user(target.user())
                .password(target.password())
                .database(target.database())
                .clientName("bench-stock")
                .build();
        RedisClient client = RedisClient.builder()
                .hostAndPort(target.hostAndPort())
                .clientConfig(config)
                .poolConfig(pool)
                .build();
        JedisBasedProxyManager<byte[]> proxies = Bucket4jJedis.casBasedBuilder(client)
                .expirationAfterWrite(
                        ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(KEEP_AFTER_REFILL))
                .build();
        return new StockSession(client, proxies);
    }

    /**
     * Per attempt the client sends a GET (read the state) and, when the state changes, an EVAL of the whole script
     * text (write it). The scripts: SET NX PX for a bucket's first write (one SET), compare-and-swap otherwise (one
     * GET, and one PSETEX when the state matched). The client sends no SET itself, so every SET is a first-write
     * script, every other EVAL a compare-and-swap, and the GETs beyond one per compare-and-swap are the client's.
     */
    @Override
    public long roundTrips(ServerCounters.Delta d) {
        long clientGets = d.calls("get") - compareAndSwapRuns(d);
        return d.calls("eval") + d.calls("evalsha") + clientGets;
    }

    @Override
    public long retries(ServerCounters.Delta d, StoreCounters store) {
        return compareAndSwapRuns(d) - d.calls("psetex");
    }

    @Override
    public String retriesSource() {
        return "commandstats: compare-and-swap scripts that found the state changed (runs − PSETEX); lost "
                + "first-write (SET NX) races are not counted";
    }

    private static long compareAndSwapRuns(ServerCounters.Delta d) {
        return d.succeeded("eval") + d.succeeded("evalsha") - d.calls("set");
    }

    static BucketConfiguration configuration(List<Limit> limits) {
        ConfigurationBuilder builder = BucketConfiguration.builder();
        for (Limit limit : limits) {
            builder.addLimit(Bandwidth.builder()
                    .capacity(limit.capacity())
                    .refillGreedy(limit.permits(), limit.period())
                    .id(limit.window())
                    .build());
        }
        return builder.build();
    }

    private final class StockSession implements Session {
        private final RedisClient client;
        private final JedisBasedProxyManager<byte[]> proxies;

        StockSession(RedisClient client, JedisBasedProxyManager<byte[]> proxies) {
            this.client = client;
            this.proxies = proxies;
        }

        @Override
        public Decider prepare(String keySpace, List<String> keys, List<Limit> limits) {
            BucketConfiguration configuration = configuration(limits);
            Bucket[] buckets = new Bucket[keys.size()];
            for (int i = 0; i < buckets.length; i++) {
                RemoteBucketBuilder<byte[]> builder = proxies.builder();
                if (batching) {
                    builder = builder.withOptimization(Optimizations.batching());
                }
                buckets[i] = builder.build(redisKey(keySpace, keys.get(i)), () -> configuration);
            }
            return keyIndex -> buckets[keyIndex]
                            .asVerbose()
                            .tryConsumeAndReturnRemaining(1)
                            .getValue()
                            .isConsumed()
                    ? Decider.ALLOWED
                    : Decider.REJECTED;
        }

        @Override
        public byte[] redisKey(String keySpace, String key) {
            return (keyPrefix + ":" + keySpace + ":{" + key + "}").getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public StoreCounters counters() {
            return null;
        }

        @Override
        public void close() {
            client.close();
        }
    }
}
