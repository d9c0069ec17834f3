package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.testing.redis.RedisServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;

/** Many threads' scripts sharing round trips, against a real Redis server. */
class AutoPipelineTest {

    /** Increments its key and returns the new value; fails with an error reply when the first argument is 'fail'. */
    private static final LuaScript INCR = new LuaScript("""
            if ARGV[1] == 'fail' then return redis.error_reply('ERR asked to fail') end
            return redis.call('INCR', KEYS[1])
            """);

    private static final long TIMEOUT_NANOS = Duration.ofMillis(100).toNanos();

    private static RedisServer redis;
    private static RedisClient client;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(8);
        pool.setMaxWait(Duration.ofMillis(100));
        client = RedisClient.builder()
                .hostAndPort(redis.hostAndPort())
                .clientConfig(DefaultJedisClientConfig.builder()
                        .socketTimeoutMillis(100)
                        .build())
                .poolConfig(pool)
                .build();
    }

    @AfterAll
    static void stop() {
        if (client != null) {
            client.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    private static List<byte[]> key(String name) {
        return List.of(name.getBytes(StandardCharsets.UTF_8));
    }

    private static List<byte[]> args(String arg) {
        return List.of(arg.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void givesEveryCallerItsOwnReplyWhenManyThreadsShareRoundTrips() throws Exception {
        AutoPipeline pipeline = new AutoPipeline(client, 2, 64, TIMEOUT_NANOS, () -> false);
        int threads = 16;
        int perThread = 500;
        Set<Long> seen = ConcurrentHashMap.newKeySet();
        List<Long> duplicates = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    go.await();
                    long last = 0;
                    for (int i = 0; i < perThread; i++) {
                        // A shared counter: each value is handed to exactly one caller.
                        long shared = (Long) pipeline.run(INCR, key("shared"), args("ok"));
                        if (!seen.add(shared)) {
                            synchronized (duplicates) {
                                duplicates.add(shared);
                            }
                        }
                        // A counter of this thread's own: its replies come back in its own order.
                        long own = (Long) pipeline.run(INCR, key("own-" + thread), args("ok"));
                        assertThat(own).isEqualTo(last + 1);
                        last = own;
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        long total = (long) threads * perThread;
        assertThat(duplicates).isEmpty();
        assertThat(seen).hasSize((int) total);
        assertThat(seen).allMatch(v -> v >= 1 && v <= total);
        // Sixteen threads on two lanes: calls made while a batch is on the wire go together in the next one.
        assertThat(pipeline.batches.sum())
                .as("pipelines for %d calls", 2 * total)
                .isLessThan(2 * total * 3 / 4);
    }

    @Test
    void sendsACallAloneAtOnce() {
        AutoPipeline pipeline = new AutoPipeline(client, 2, 64, TIMEOUT_NANOS, () -> false);
        for (int i = 1; i <= 5; i++) {
            assertThat(pipeline.run(INCR, key("alone"), args("ok"))).isEqualTo((long) i);
        }
        assertThat(pipeline.batches.sum()).isEqualTo(5);
    }

    @Test
    void anErrorReplyFailsOnlyItsOwnCall() throws Exception {
        AutoPipeline pipeline = new AutoPipeline(client, 1, 64, TIMEOUT_NANOS, () -> false);
        int threads = 8;
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger succeeded = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                boolean failing = t % 2 == 0;
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < 300; i++) {
                        try {
                            pipeline.run(INCR, key("mixed"), args(failing ? "fail" : "ok"));
                            assertThat(failing).isFalse();
                            succeeded.incrementAndGet();
                        } catch (JedisDataException e) {
                            assertThat(failing).isTrue();
                            assertThat(e).hasMessageContaining("asked to fail");
                            failed.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(failed.get()).isEqualTo(4 * 300);
        assertThat(succeeded.get()).isEqualTo(4 * 300);
        assertThat(client.get("mixed")).isEqualTo("1200");
        assertThat(pipeline.batches.sum()).as("pipelines for 2,400 calls").isLessThan(2_400);
    }

    @Test
    void loadsAScriptRedisHasForgotten() {
        AutoPipeline pipeline = new AutoPipeline(client, 2, 64, TIMEOUT_NANOS, () -> false);
        assertThat(pipeline.run(INCR, key("flushed"), args("ok"))).isEqualTo(1L);
        client.scriptFlush();
        assertThat(pipeline.run(INCR, key("flushed"), args("ok"))).isEqualTo(2L);
        assertThat(pipeline.run(INCR, key("flushed"), args("ok"))).isEqualTo(3L);
    }

    @Test
    void sendsCallsOneByOneOnceAClusterTheStoreDidNotRecogniseRedirectsOne() throws Exception {
        try (io.github.ratelimit.testing.redis.RedisCluster cluster =
                        io.github.ratelimit.testing.redis.RedisCluster.start(3, 0);
                redis.clients.jedis.UnifiedJedis unrecognised = new redis.clients.jedis.UnifiedJedis(
                        new redis.clients.jedis.providers.ClusterConnectionProvider(
                                new java.util.HashSet<>(cluster.nodes()),
                                DefaultJedisClientConfig.builder().build()),
                        3,
                        Duration.ofSeconds(1))) {
            // A UnifiedJedis made for a Cluster, but not a JedisCluster or RedisClusterClient: its commands are
            // routed by key, its pipeline goes to one node whatever the key.
            AutoPipeline pipeline =
                    new AutoPipeline(unrecognised, 2, 64, Duration.ofSeconds(1).toNanos(), () -> false);
            // A call alone goes as a plain command, which the client routes: nothing to detect.
            assertThat(pipeline.run(INCR, key("{alone}"), args("ok"))).isEqualTo(1L);
            assertThat(pipeline.redirected).isFalse();
            // Two calls started together go as one pipeline, to one node: a key of another node's is redirected.
            for (int i = 0; i < 50; i++) {
                ScriptRunner.Sent a = pipeline.send(INCR, key("{a" + i + "}"), args("ok"));
                ScriptRunner.Sent b = pipeline.send(INCR, key("{b" + i + "}"), args("ok"));
                assertThat(a.await()).isEqualTo(1L);
                assertThat(b.await()).isEqualTo(1L);
            }
            assertThat(pipeline.redirected).isTrue();
            assertThat(pipeline.batches.sum())
                    .as("pipelines sent before the first redirection")
                    .isLessThan(50);
        }
    }

    @Test
    void failsEveryWaitingCallerWithinTheTimeoutsWhileRedisIsFrozenAndRecovers() throws Exception {
        try (RedisServer frozen = RedisServer.start();
                RedisClient c = RedisClient.builder()
                        .hostAndPort(frozen.hostAndPort())
                        .clientConfig(DefaultJedisClientConfig.builder()
                                .socketTimeoutMillis(100)
                                .build())
                        .build()) {
            AutoPipeline pipeline = new AutoPipeline(c, 2, 4, TIMEOUT_NANOS, () -> false);
            assertThat(pipeline.run(INCR, key("k"), args("ok"))).isEqualTo(1L);
            frozen.pause();
            int threads = 16;
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            List<Future<Long>> futures = new ArrayList<>();
            try {
                for (int t = 0; t < threads; t++) {
                    futures.add(pool.submit(() -> {
                        long t0 = System.nanoTime();
                        assertThatThrownBy(() -> pipeline.run(INCR, key("k"), args("ok")))
                                .isInstanceOf(JedisException.class);
                        return System.nanoTime() - t0;
                    }));
                }
                for (Future<Long> f : futures) {
                    // Each batch fails within the 100 ms socket timeout and frees its lane for the next: four calls
                    // a batch, two lanes, so two rounds at most, with room for a busy machine; never a hang.
                    assertThat(f.get(10, TimeUnit.SECONDS))
                            .isLessThan(Duration.ofSeconds(2).toNanos());
                }
            } finally {
                pool.shutdownNow();
                frozen.resume();
            }
            Object reply = org.awaitility.Awaitility.await("a call through again")
                    .atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(20))
                    .ignoreExceptionsInstanceOf(JedisConnectionException.class)
                    .until(() -> pipeline.run(INCR, key("recovered"), args("ok")), java.util.Objects::nonNull);
            assertThat(reply).isEqualTo(1L);
        }
    }
}
