package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisCluster;
import io.github.ratelimit.testing.redis.RedisServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.resps.Tuple;

/**
 * Concurrency rules' slots in Redis are leases: two instances share one limit exactly; a running call's lease is
 * renewed, so it keeps its slot however long it runs; a crashed instance's leases run out within
 * {@link RedisSlots#LEASE_NANOS}; and what the key holds is validated, garbage replaced, not obeyed. On a standalone
 * Redis, on a Cluster and through Sentinel.
 */
class RedisSlotsTest {

    private static RedisServer redis;
    private static RedisCluster cluster;

    private final ManualClock clock = new ManualClock();
    private final String prefix = "slots-" + UUID.randomUUID();
    private final List<RateLimiter> limiters = new ArrayList<>();

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
        cluster = RedisCluster.start(3, 0);
    }

    @AfterAll
    static void stop() {
        redis.close();
        cluster.close();
    }

    @AfterEach
    void close() {
        limiters.forEach(RateLimiter::close);
    }

    private static final RequestContext ALICE =
            RequestContext.builder().remoteAddress("203.0.113.9").build();
    private static final Rule SLOW =
            Rule.builder("slow").key("ip").concurrency(2).build();

    /** One instance: a limiter over a store of its own, on this test's prefix. */
    private RateLimiter instance(String where, boolean manual) {
        JedisBucketStore.Builder b =
                JedisBucketStore.builder().keyPrefix(prefix).commandTimeout(Duration.ofSeconds(5));
        b = "cluster".equals(where)
                ? b.cluster(cluster.nodes().stream().map(Object::toString).toList())
                : b.url(redis.uri().toString());
        RateLimiter.Builder limiter = RateLimiter.builder();
        if (manual) {
            b.timeMeter(clock);
            limiter.timeMeter(clock).waiter(clock);
        }
        RateLimiter built = limiter.store(b.build()).build();
        limiters.add(built);
        return built;
    }

    private RedisClient admin() {
        return RedisClient.builder().hostAndPort(redis.hostAndPort()).build();
    }

    private byte[] slotsKey() {
        return RedisKeys.slotsKey(prefix, new BucketStore.Key("slow", "203.0.113.9"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"standalone", "cluster"})
    void twoInstancesShareOneLimitExactly(String where) throws Exception {
        Guard[] guards = {
            instance(where, false).guard(SLOW), instance(where, false).guard(SLOW)
        };
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger ran = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> calls = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                Guard guard = guards[t % 2];
                calls.add(pool.submit(() -> {
                    for (int i = 0; i < 100; i++) {
                        Decision d = guard.acquire(ALICE);
                        if (d.permitted()) {
                            most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                            ran.incrementAndGet();
                            // Stay in flight a little, so calls overlap.
                            for (int k = 0; k < 10_000 && inFlight.get() < 3; k++) {
                                Thread.onSpinWait();
                            }
                            inFlight.decrementAndGet();
                            guard.completed(d, false, 200);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : calls) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(most.get())
                .as("never more than 2 calls in flight on both instances together")
                .isLessThanOrEqualTo(2);
        assertThat(ran.get()).isGreaterThan(2);
        Decision a = guards[0].acquire(ALICE);
        Decision b = guards[1].acquire(ALICE);
        assertThat(a.permitted() && b.permitted()).as("every slot came back").isTrue();
        assertThat(guards[0].acquire(ALICE).permitted()).isFalse();
        assertThat(guards[1].acquire(ALICE).permitted()).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"standalone", "cluster"})
    void aCrashedInstancesSlotsComeBackWithinALease(String where) {
        RateLimiter crashing = instance(where, true);
        Guard doomed = crashing.guard(SLOW);
        assertThat(doomed.acquire(ALICE).permitted()).isTrue();
        assertThat(doomed.acquire(ALICE).permitted()).isTrue();
        // Closed without ending its calls: it renews nothing more, as if the process had died.
        crashing.close();
        Guard survivor = instance(where, true).guard(SLOW);
        clock.advanceNanos(RedisSlots.LEASE_NANOS - 1_000_000);
        assertThat(survivor.acquire(ALICE).permitted())
                .as("the leases still run")
                .isFalse();
        clock.advanceNanos(1_000_000);
        assertThat(survivor.acquire(ALICE).permitted())
                .as("15 s after the crash")
                .isTrue();
        assertThat(survivor.acquire(ALICE).permitted()).isTrue();
        assertThat(survivor.acquire(ALICE).permitted()).isFalse();
    }

    /** Through Sentinel, as through a direct connection: two instances, one slot between them. */
    @Test
    void instancesFoundThroughSentinelShareTheirSlots() {
        try (io.github.ratelimit.testing.redis.RedisSentinelGroup group =
                io.github.ratelimit.testing.redis.RedisSentinelGroup.start()) {
            Guard[] guards = new Guard[2];
            for (int i = 0; i < 2; i++) {
                RateLimiter limiter = RateLimiter.builder()
                        .store(JedisBucketStore.builder()
                                .keyPrefix(prefix)
                                .sentinel(
                                        group.masterName(),
                                        group.sentinels().stream()
                                                .map(Object::toString)
                                                .toList())
                                .build())
                        .build();
                limiters.add(limiter);
                guards[i] = limiter.guard(
                        Rule.builder("one").key("ip").concurrency(1).build());
            }
            Decision first = guards[0].acquire(ALICE);
            assertThat(first.permitted()).isTrue();
            assertThat(guards[1].acquire(ALICE).permitted())
                    .as("the other instance's call holds the slot")
                    .isFalse();
            guards[0].completed(first, false, 200);
            Decision second = guards[1].acquire(ALICE);
            assertThat(second.permitted()).isTrue();
            assertThat(guards[0].acquire(ALICE).permitted()).isFalse();
            guards[1].completed(second, false, 200);
            limiters.forEach(RateLimiter::close);
            limiters.clear();
        }
    }

    @Test
    void aRunningCallKeepsItsSlotByRenewingItsLease() {
        Guard running = instance("standalone", true).guard(SLOW);
        Decision call = running.acquire(ALICE);
        running.acquire(ALICE);
        Guard other = instance("standalone", true).guard(SLOW);
        try (RedisClient admin = admin()) {
            for (int step = 1; step <= 4; step++) {
                clock.advance(Duration.ofSeconds(6));
                long due = clock.currentTimeNanos() / 1_000 + RedisSlots.LEASE_NANOS / 1_000;
                // The renewer looks every second: both leases now expire a lease's life from the clock's time.
                await().until(() ->
                        admin.zrangeWithScores(slotsKey(), 0, -1).stream().allMatch(t -> (long) t.getScore() == due));
                assertThat(other.acquire(ALICE).permitted())
                        .as("after %d s", 6 * step)
                        .isFalse();
            }
        }
        running.completed(call, false, 200);
        assertThat(other.acquire(ALICE).permitted()).isTrue();
    }

    @Test
    void garbageInTheKeyIsReplacedNotObeyed() {
        JedisBucketStore store = JedisBucketStore.builder()
                .url(redis.uri().toString())
                .keyPrefix(prefix)
                .timeMeter(clock)
                .build();
        RateLimiter limiter = RateLimiter.builder()
                .store(store)
                .timeMeter(clock)
                .waiter(clock)
                .build();
        limiters.add(limiter);
        Guard guard = limiter.guard(SLOW);
        byte[] key = slotsKey();
        long now = clock.currentTimeNanos() / 1_000;
        try (RedisClient admin = admin()) {
            admin.set(key, "not a set".getBytes(StandardCharsets.UTF_8));
            assertThat(guard.acquire(ALICE).permitted())
                    .as("a key of another type")
                    .isTrue();
            assertThat(admin.type(key)).isEqualTo("zset");
            assertThat(admin.pttl(key)).as("the key expires").isPositive();
            long repairs = store.stats().repairs();
            assertThat(repairs).isPositive();

            admin.del(key);
            admin.zadd(key, now + Duration.ofDays(3650).toNanos() / 1_000, "forever".getBytes(StandardCharsets.UTF_8));
            admin.zadd(key, Double.POSITIVE_INFINITY, "infinite".getBytes(StandardCharsets.UTF_8));
            assertThat(guard.acquire(ALICE).permitted())
                    .as("far-future leases hold no slot")
                    .isTrue();
            assertThat(guard.acquire(ALICE).permitted()).isTrue();
            assertThat(guard.acquire(ALICE).permitted()).isFalse();
            assertThat(admin.zscore(key, "forever".getBytes(StandardCharsets.UTF_8)))
                    .isNull();
            assertThat(store.stats().repairs()).isGreaterThan(repairs);

            admin.del(key);
            for (int i = 0; i < 500; i++) {
                admin.zadd(key, now + 1_000_000, ("planted-" + i).getBytes(StandardCharsets.UTF_8));
            }
            assertThat(guard.acquire(ALICE).permitted())
                    .as("more leases than twice the limit and 64")
                    .isTrue();
            assertThat(admin.zcard(key)).isEqualTo(1);

            admin.del(key);
            admin.zadd(key, now - 1, "expired".getBytes(StandardCharsets.UTF_8));
            admin.zadd(key, now + 1_000_000, "live".getBytes(StandardCharsets.UTF_8));
            assertThat(guard.acquire(ALICE).permitted())
                    .as("an expired lease holds nothing")
                    .isTrue();
            assertThat(guard.acquire(ALICE).permitted())
                    .as("a live one holds its slot")
                    .isFalse();
            List<Tuple> left = admin.zrangeWithScores(key, 0, -1);
            assertThat(left).hasSize(2);
        }
    }
}
