package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Decision.Verdict;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Heavy but legal load does not make Redis slow, and a slow Redis does not turn into wrong answers: 1000 callers
 * waiting on one sliding-counter key stay within what the limit allows, with no decision failing open (each
 * script's work is bounded by the rule, not by the waiters: the longer delays that made it quadratic are refused
 * by the rule, {@code RuleTest.boundsTheIntervalsACounterKeyHoldsDelayedCallsIn}, and by the store,
 * {@code BucketStoreContract.aCounterKeyHoldsDelayedCallsInABoundedNumberOfIntervals}); and a slow first round trip
 * that meets an ordinary conflict is retried, not rejected as contention. Measured script times are in
 * docs/RELIABILITY.md.
 */
class RedisBoundedWorkTest {

    private static RedisServer redis;

    @BeforeAll
    static void startRedis() {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    private static JedisBucketStore.Builder store(String prefix) {
        return JedisBucketStore.builder().url(redis.uri().toString()).keyPrefix(prefix);
    }

    private static String prefix() {
        return "w" + UUID.randomUUID().toString().substring(0, 8);
    }

    /**
     * Fires 1000 calls from 16 threads at one key while time stands still (delayed calls wait on the manual clock,
     * which never moves here; the listener sees each decision as it is made).
     */
    private static void thousandWaiters(Guard guard) throws Exception {
        ConcurrentLinkedQueue<java.util.concurrent.CompletableFuture<Decision>> futures = new ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                int calls = t < 8 ? 63 : 62; // 1000 in all
                done.add(pool.submit(() -> {
                    for (int i = 0; i < calls; i++) {
                        futures.add(guard.acquireAsync(RequestContext.empty()));
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        assertThat(futures).hasSize(1000);
    }

    /** Run times of the admitted calls: now plus each delay. */
    private static List<Long> runTimes(List<Decision> decisions, long now) {
        List<Long> times = new ArrayList<>();
        for (Decision d : decisions) {
            if (d.permitted()) {
                times.add(now + d.delayNanos());
            }
        }
        times.sort(null);
        return times;
    }

    @Test
    void aThousandWaitersOnOneCounterKeyStayWithinTheLimitAndNoneFailsOpen() throws Exception {
        ManualClock clock = new ManualClock();
        ConcurrentLinkedQueue<Decision> decisions = new ConcurrentLinkedQueue<>();
        try (JedisBucketStore store = store(prefix()).timeMeter(clock).build();
                RateLimiter limiter = RateLimiter.builder()
                        .store(store)
                        .timeMeter(clock)
                        .waiter(clock)
                        .maxWaiting(1000)
                        .listener(decisions::add)
                        .build()) {
            // The configuration, with the longest delay a counter rule of this window may have.
            Rule rule = Rule.builder("waiters")
                    .limits("1/10ms")
                    .algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
                    .mode(Mode.SOFT)
                    .maxDelay(Duration.ofMillis(640))
                    .maxWaiting(1000)
                    .build();
            long now = clock.currentTimeNanos();
            thousandWaiters(limiter.guard(rule));

            assertThat(decisions).hasSize(1000);
            Map<Basis, AtomicLong> bases = new ConcurrentHashMap<>();
            decisions.forEach(d -> d.verdicts()
                    .forEach(v -> bases.computeIfAbsent(v.basis(), b -> new AtomicLong())
                            .incrementAndGet()));
            assertThat(bases).as("bases").containsOnlyKeys(Basis.BUCKET);
            List<Long> times = runTimes(new ArrayList<>(decisions), now);
            // One call per 10 ms window at most, and none beyond the longest delay.
            for (int i = 1; i < times.size(); i++) {
                assertThat(times.get(i) - times.get(i - 1))
                        .as("gap between admitted calls %d and %d", i - 1, i)
                        .isGreaterThanOrEqualTo(Duration.ofMillis(10).toNanos());
            }
            assertThat(times)
                    .isNotEmpty()
                    .allSatisfy(t -> assertThat(t - now)
                            .isLessThanOrEqualTo(Duration.ofMillis(640).toNanos()));
            assertThat(store.stats().failures()).isZero();
        }
    }

    @Test
    void roundTripsSlowerThanTheRetryBudgetThatMeetConflictsAreRetriedNotRejected() {
        String prefix = prefix();
        java.util.concurrent.atomic.AtomicInteger interleave = new java.util.concurrent.atomic.AtomicInteger();
        try (JedisBucketStore b = store(prefix).build();
                RateLimiter lb = RateLimiter.builder().store(b).build()) {
            Rule rule = Rule.builder("shared").limits("10/1h").build();
            Guard gb = lb.guard(rule);
            // Before each of A's next scripts that is armed, instance B writes the bucket: every such attempt of A
            // meets an ordinary conflict.
            redis.clients.jedis.UnifiedJedis intercepting = new redis.clients.jedis.UnifiedJedis(redis.hostAndPort()) {
                @Override
                public Object evalsha(byte[] sha, List<byte[]> keys, List<byte[]> args) {
                    if (interleave.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                        assertThat(gb.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
                        // A distant or failing-over Redis: this round trip takes longer than the retry budget.
                        java.util.concurrent.locks.LockSupport.parkNanos(
                                Duration.ofMillis(30).toNanos());
                    }
                    return super.evalsha(sha, keys, args);
                }
            };
            // Round trips of 30 ms against a retry budget of 10 ms.
            try (JedisBucketStore a = JedisBucketStore.builder()
                            .keyPrefix(prefix)
                            .client(intercepting)
                            .autoPipelining(false)
                            .batching(false)
                            .retries(32, Duration.ofMillis(10))
                            .build();
                    RateLimiter la = RateLimiter.builder().store(a).build()) {
                Guard ga = la.guard(rule);
                assertThat(ga.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
                interleave.set(3);
                Decision d = ga.acquire(RequestContext.empty());
                assertThat(d.verdicts()).extracting(Verdict::basis).containsExactly(Basis.BUCKET);
                assertThat(d.outcome()).isEqualTo(Outcome.ALLOWED);
                assertThat(a.stats().conflicts()).isEqualTo(3);
                assertThat(a.stats().contended()).isZero();
                assertThat(d.bindingWindow().remaining()).isEqualTo(10 - 1 - 3 - 1);
            } finally {
                intercepting.close();
            }
        }
    }

    @Test
    void aSlowFirstRoundTripThatMeetsAConflictIsRetriedNotRejected() {
        String prefix = prefix();
        // A retry budget far below any round trip: every first round trip is "slow".
        try (JedisBucketStore a =
                        store(prefix).retries(32, Duration.ofNanos(1_000)).build();
                JedisBucketStore b = store(prefix).build();
                RateLimiter la = RateLimiter.builder().store(a).build();
                RateLimiter lb = RateLimiter.builder().store(b).build()) {
            Rule rule = Rule.builder("shared").limits("10/1h").build();
            Guard ga = la.guard(rule);
            Guard gb = lb.guard(rule);
            assertThat(ga.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
            assertThat(gb.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED); // B wrote last
            long conflicts = a.stats().conflicts();
            Decision d = ga.acquire(RequestContext.empty());
            assertThat(d.verdicts()).extracting(Verdict::basis).containsExactly(Basis.BUCKET);
            assertThat(d.outcome()).isEqualTo(Outcome.ALLOWED);
            assertThat(a.stats().conflicts()).isEqualTo(conflicts + 1);
            assertThat(a.stats().contended()).isZero();
            assertThat(d.bindingWindow().remaining()).isEqualTo(7);
        }
    }
}
