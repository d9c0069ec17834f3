package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.StoreFailurePolicy;
import io.github.ratelimit.testing.redis.RedisCluster;
import io.github.ratelimit.testing.redis.RedisSentinelGroup;
import io.github.ratelimit.testing.redis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * Redis failing in the ways it does in production, against real servers: killed, frozen, out of memory,
 * a Cluster master failing over. In each, the rule's policy applies within the command timeout, the breaker
 * opens and closes again by itself, and nothing hangs.
 */
class RedisFaultTest {

    /** A decision may take the command timeout (50 ms) plus scheduling noise on a busy machine; never more. */
    private static final long MAX_DECISION_NANOS = Duration.ofMillis(300).toNanos();

    private static RequestContext user(int i) {
        return RequestContext.builder().principal("user-" + i).build();
    }

    /** Decides {@code n} calls and checks that none took longer than the bound. */
    private static List<Decision> decide(Guard guard, int n) {
        List<Decision> decisions = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            decisions.add(guard.acquire(user(i)));
            long took = System.nanoTime() - t0;
            assertThat(took).as("decision %d took %d ms", i, took / 1_000_000).isLessThanOrEqualTo(MAX_DECISION_NANOS);
        }
        return decisions;
    }

    /** Decides until one decision satisfies the condition, for at most {@code seconds}. */
    private static Decision await(Guard guard, Predicate<Decision> condition, int seconds) throws InterruptedException {
        java.util.concurrent.atomic.AtomicReference<Decision> last =
                new java.util.concurrent.atomic.AtomicReference<>();
        try {
            return org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(seconds))
                    .pollInterval(Duration.ofMillis(20))
                    .until(
                            () -> {
                                last.set(guard.acquire(user(0)));
                                return last.get();
                            },
                            condition);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError("condition not met within " + seconds + " s; last decision " + last.get(), e);
        }
    }

    private static Predicate<Decision> basis(Basis basis) {
        return d -> d.binding().basis() == basis;
    }

    @Test
    void appliesThePolicyWithinTheTimeoutWhenRedisIsKilledAndRecoversWhenItReturns() throws Exception {
        try (RedisServer redis = RedisServer.start();
                JedisBucketStore store =
                        JedisBucketStore.builder().url(redis.uri().toString()).build();
                RateLimiter limiter = RateLimiter.builder()
                        .store(store)
                        .defaultStoreFailurePolicy(StoreFailurePolicy.LOCAL_FALLBACK)
                        .build()) {
            Guard guard = limiter.guard(
                    Rule.builder("api").key("user").limits("1000000/1s").build());
            assertThat(decide(guard, 20)).allMatch(basis(Basis.BUCKET));

            redis.kill();
            long killedAt = System.nanoTime();
            // Every decision falls back at once; the breaker opens once failures have kept coming for 250 ms.
            while (store.breakerState() != JedisBucketStore.BreakerState.OPEN
                    && System.nanoTime() - killedAt < Duration.ofSeconds(2).toNanos()) {
                assertThat(decide(guard, 10))
                        .allMatch(basis(Basis.FALLBACK_BUCKET))
                        .allMatch(Decision::permitted);
            }
            assertThat(store.breakerState()).isEqualTo(JedisBucketStore.BreakerState.OPEN);
            assertThat(System.nanoTime() - killedAt)
                    .isLessThan(Duration.ofSeconds(1).toNanos());
            assertThat(decide(guard, 50)).allMatch(basis(Basis.FALLBACK_BUCKET));
            assertThat(store.stats().shortCircuited()).isPositive();

            redis.restart();
            await(guard, basis(Basis.BUCKET), 10);
            assertThat(store.breakerState()).isEqualTo(JedisBucketStore.BreakerState.CLOSED);
        }
    }

    @Test
    void doesNotWaitOutAFrozenRedis() throws Exception {
        try (RedisServer redis = RedisServer.start();
                JedisBucketStore store =
                        JedisBucketStore.builder().url(redis.uri().toString()).build();
                RateLimiter limiter = RateLimiter.builder().store(store).build()) {
            Guard guard = limiter.guard(Rule.builder("login")
                    .key("user")
                    .limits("5/1m")
                    .onStoreFailure(StoreFailurePolicy.FAIL_CLOSED)
                    .build());
            assertThat(decide(guard, 5)).allMatch(basis(Basis.BUCKET));

            redis.pause();
            try {
                long pausedAt = System.nanoTime();
                List<Decision> during = decide(guard, 30);
                assertThat(during).allMatch(basis(Basis.FAIL_CLOSED)).noneMatch(Decision::permitted);
                assertThat(store.breakerState()).isEqualTo(JedisBucketStore.BreakerState.OPEN);
                assertThat(System.nanoTime() - pausedAt)
                        .isLessThan(Duration.ofSeconds(2).toNanos());
                // Only the calls before the breaker opened (about 250 ms of 50 ms timeouts) waited for Redis.
                assertThat(store.stats().failures()).isLessThanOrEqualTo(10);
            } finally {
                redis.resume();
            }
            await(guard, basis(Basis.BUCKET), 10);
        }
    }

    @Test
    void appliesThePolicyWhenRedisIsOutOfMemoryAndRecoversWhenMemoryIsFreed() throws Exception {
        try (RedisServer redis = RedisServer.builder()
                        .config("maxmemory 4mb", "maxmemory-policy noeviction")
                        .start();
                Jedis admin = new Jedis(redis.host(), redis.port());
                JedisBucketStore store =
                        JedisBucketStore.builder().url(redis.uri().toString()).build();
                RateLimiter limiter = RateLimiter.builder().store(store).build()) {
            Guard guard = limiter.guard(Rule.builder("api")
                    .key("user")
                    .limits("5/1m")
                    .onStoreFailure(StoreFailurePolicy.FAIL_CLOSED)
                    .build());
            assertThat(guard.acquire(user(0)).binding().basis()).isEqualTo(Basis.BUCKET);
            // The store's look for keys of an earlier layout, at start-up, is over.
            org.awaitility.Awaitility.await().until(() -> store.keyMigration().finished());
            // Fill until Redis refuses, then lower its limit a megabyte below what it holds: no buffer Redis trims
            // meanwhile (a client's idle query buffer) frees enough for a write to fit again.
            List<String> fillers = new ArrayList<>();
            byte[] block = new byte[256 * 1024];
            boolean refused = false;
            for (int i = 0; i < 1_000 && !refused; i++) {
                String key = "filler-" + i;
                try {
                    admin.set(key.getBytes(), block);
                    fillers.add(key);
                } catch (redis.clients.jedis.exceptions.JedisDataException oom) {
                    assertThat(oom.getMessage()).contains("OOM");
                    refused = true;
                }
            }
            assertThat(refused).as("Redis refused a write").isTrue();
            long used = Long.parseLong(admin.info("memory")
                    .lines()
                    .filter(l -> l.startsWith("used_memory:"))
                    .findFirst()
                    .orElseThrow()
                    .substring("used_memory:".length())
                    .trim());
            admin.configSet("maxmemory", Long.toString(used - 1024 * 1024));

            List<Decision> during = decide(guard, 20);
            assertThat(during).allMatch(basis(Basis.FAIL_CLOSED));

            fillers.forEach(admin::del);
            await(guard, basis(Basis.BUCKET), 10);
        }
    }

    @Test
    void survivesAClusterMasterFailingOver() throws Exception {
        try (RedisCluster cluster = RedisCluster.start(3, 1);
                JedisBucketStore store = JedisBucketStore.builder()
                        .cluster(cluster.nodes().stream().map(Object::toString).toList())
                        .build();
                RateLimiter limiter = RateLimiter.builder().store(store).build()) {
            // Two rules by one key: their scripts go to the key's node together, as one pipeline.
            Guard guard = limiter.guard(
                    Rule.builder("api").key("user").limits("1000/1s").build(),
                    Rule.builder("site").key("user").limits("2000/1s").build());
            assertThat(decide(guard, 100)).allMatch(basis(Basis.BUCKET));
            JedisBucketStore.Stats before = store.stats();
            assertThat(before.pipelines()).as("round trips, one per call").isEqualTo(100);
            assertThat(before.roundTrips()).as("scripts, two per call").isEqualTo(200);

            cluster.killMaster(0);
            // Until a replica takes over, a third of the keys live on a dead node: those fail open, quickly.
            List<Decision> during = decide(guard, 100);
            assertThat(during).allMatch(Decision::permitted);
            cluster.awaitFailover();

            List<Decision> after = org.awaitility.Awaitility.await("every key decided by its bucket again")
                    .atMost(Duration.ofSeconds(15))
                    .pollInterval(Duration.ofMillis(100))
                    .until(
                            () -> decide(guard, 100),
                            decisions -> decisions.stream().allMatch(basis(Basis.BUCKET)));
            assertThat(after).allMatch(basis(Basis.BUCKET));
            assertThat(store.breakerState()).isEqualTo(JedisBucketStore.BreakerState.CLOSED);
        }
    }

    @Test
    void followsASentinelFailoverToTheNewMaster() throws Exception {
        try (RedisSentinelGroup group = RedisSentinelGroup.start();
                JedisBucketStore store = JedisBucketStore.builder()
                        .sentinel(
                                group.masterName(),
                                group.sentinels().stream().map(Object::toString).toList())
                        .build();
                RateLimiter limiter = RateLimiter.builder().store(store).build()) {
            Guard guard = limiter.guard(
                    Rule.builder("api").key("user").limits("1000/1s").build());
            assertThat(decide(guard, 50)).allMatch(basis(Basis.BUCKET));

            group.killMaster();
            assertThat(decide(guard, 50)).allMatch(Decision::permitted);
            group.awaitFailover();
            await(guard, basis(Basis.BUCKET), 15);
            assertThat(decide(guard, 50)).allMatch(basis(Basis.BUCKET));
        }
    }
}
