package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard.Settlement;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServer;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class RedisStoreChargeTest extends ChargeContract {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private final String prefix = "test-" + UUID.randomUUID();

    @Override
    protected BucketStore newStore(ManualClock clock) {
        return store(redis.uri().toString(), Duration.ofSeconds(5));
    }

    private BucketStore store(String url, Duration timeout) {
        return JedisBucketStore.builder()
                .url(url)
                .keyPrefix(prefix)
                .commandTimeout(timeout)
                .timeMeter(clock)
                .build();
    }

    /**
     * Debt made through one instance is owed on the other: the charge is in Redis, not in either JVM (a bucket's
     * balance; a counter's count, weighed by the same sliding window; a month's count, owed until it ends). Huge
     * charges through both then take only what the bound leaves, held in Redis for both: a day of refill of
     * {@code 1000/1m} past the first 1199, or the month's limit.
     */
    @ParameterizedTest
    @CsvSource({"TOKEN_BUCKET, 12060, 1439800", "SLIDING_WINDOW_COUNTER, 70050, 1439800", "calendar, 2678400000, 800"})
    void debtMadeThroughOneInstanceIsSeenByAnother(String kind, long retryMillis, long rest) {
        Guard first = limiter(newStore(clock)).guard(rule(kind));
        Guard second = limiter(newStore(clock)).guard(rule(kind));
        Decision d = first.acquire(ALICE);
        first.settle(d, 1200);
        Decision other = second.acquire(ALICE);
        assertThat(other.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(other.retryAfterNanos())
                .isEqualTo(Duration.ofMillis(retryMillis).toNanos());
        first.settle(d, Long.MAX_VALUE);
        second.settle(d, Long.MAX_VALUE);
        assertThat(settledTokens).containsExactly(1_199L, rest, 0L);
        assertThat(second.acquire(ALICE).retryAfterNanos()).isGreaterThanOrEqualTo(other.retryAfterNanos());
    }

    /**
     * Concurrent charges from two instances, eight threads each (an instance's queue may combine some into one script
     * run): together they take exactly what the bound leaves room for, never more.
     */
    @ParameterizedTest
    @ValueSource(strings = {"SLIDING_WINDOW_COUNTER", "calendar"})
    void concurrentChargesFromTwoInstancesStopAtTheBound(String kind) throws Exception {
        Guard first = limiter(newStore(clock)).guard(rule(kind));
        Guard second = limiter(newStore(clock)).guard(rule(kind));
        Decision d = first.acquire(ALICE);
        long each = kind.equals("calendar") ? 200 : 200_000;
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            List<Future<?>> charges = new ArrayList<>();
            CountDownLatch start = new CountDownLatch(1);
            for (int i = 0; i < 16; i++) {
                Guard guard = i % 2 == 0 ? first : second;
                charges.add(pool.submit(() -> {
                    start.await();
                    guard.settle(d, each + 1);
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : charges) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        // The month owes at most its limit (1999 more than the first call's 1); the minute a day of refill (1,440,999).
        long bound = kind.equals("calendar") ? 1_999 : 1_440_999;
        assertThat(settledTokens.stream().mapToLong(Long::longValue).sum()).isEqualTo(bound);
        assertThat(settlements).hasSize(16).contains(Settlement.CLAMPED);
    }

    /**
     * A paused Redis at settle time: the charge is not tried again, counted as lost, never thrown into the finished
     * call, and settling does not wait past the command timeout. The write sent before the timeout may still land
     * when Redis wakes (it then finds the state it expected, or adds its count): the call is charged its estimate or
     * what it used, never twice. Alike for a bucket, a sliding counter and a calendar quota.
     */
    @ParameterizedTest
    @ValueSource(strings = {"TOKEN_BUCKET", "SLIDING_WINDOW_COUNTER", "calendar"})
    void aPausedStoreLosesTheChargeWithoutThrowing(String kind) throws Exception {
        try (RedisServer own = RedisServer.start()) {
            Guard guard =
                    limiter(store(own.uri().toString(), Duration.ofMillis(200))).guard(rule(kind));
            Decision d = guard.acquire(ALICE);
            assertThat(d.outcome()).isEqualTo(Outcome.ALLOWED);
            own.pause();
            long started = System.nanoTime();
            try {
                guard.settle(d, 900);
            } finally {
                own.resume();
            }
            assertThat(System.nanoTime() - started)
                    .isLessThan(Duration.ofSeconds(2).toNanos());
            assertThat(settlements).containsExactly(Settlement.LOST);
            // Once Redis answers again (the breaker closes): the estimate, or what the call used, and no more.
            AtomicReference<Decision> fromRedis = new AtomicReference<>();
            await().atMost(Duration.ofSeconds(20)).until(() -> {
                Decision next = guard.acquire(ALICE);
                fromRedis.set(next);
                return next.verdicts().get(0).basis() == Basis.BUCKET;
            });
            assertThat(remaining(fromRedis.get())).isIn(998L, 1000L - 900 - 1);
        }
    }
}
