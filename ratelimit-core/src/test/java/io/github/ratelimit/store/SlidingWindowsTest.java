package io.github.ratelimit.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Limit;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.testing.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The sliding windows in this JVM, beyond the contract every store keeps: how much they admit over a long random
 * trace, how long a key is kept and what it weighs, and the leaky bucket that a SOFT token bucket is.
 */
class SlidingWindowsTest {

    private final ManualClock clock = new ManualClock();
    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : open) {
            c.close();
        }
    }

    private RateLimiter limiter(LocalBucketStore store) {
        RateLimiter limiter = RateLimiter.builder()
                .store(store)
                .timeMeter(clock)
                .waiter(clock)
                .build();
        open.add(limiter);
        return limiter;
    }

    private LocalBucketStore store(long maximumKeys) {
        return LocalBucketStore.builder()
                .timeMeter(clock)
                .maximumKeys(maximumKeys)
                .build();
    }

    /**
     * Bursts of random size at random gaps, the same trace for every algorithm: the log never admits more than
     * the limit within any rolling window, the counter never more than twice the limit (its worst case: the
     * previous interval's calls all at its end, weighted as if spread). Fixed seeds, so a failure reproduces.
     */
    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 20261123})
    void overARandomBurstyTraceTheLogIsExactAndTheCounterStaysWithinTwiceTheLimit(long seed) {
        Random random = new Random(seed);
        long[] trace = new long[20_000];
        long t = 0;
        for (int i = 0; i < trace.length; ) {
            t += (long) (random.nextDouble() * random.nextDouble() * 3_000_000_000L); // mostly short gaps
            int burst = 1 + random.nextInt(random.nextInt(4) == 0 ? 60 : 8);
            for (int b = 0; b < burst && i < trace.length; b++) {
                trace[i++] = t + b * 5_000_000L;
            }
        }
        java.util.Arrays.sort(trace); // a burst may run into the next one: time only moves forward
        long window = Duration.ofSeconds(10).toNanos();
        int limit = 20;
        int log = maxInAnyWindow(admitted(Algorithm.SLIDING_WINDOW_LOG, trace), window);
        int counter = maxInAnyWindow(admitted(Algorithm.SLIDING_WINDOW_COUNTER, trace), window);
        int fixed = maxInAnyWindow(admitted(Algorithm.FIXED_WINDOW, trace), window);
        assertThat(log).as("log").isEqualTo(limit);
        assertThat(counter).as("counter").isGreaterThan(limit).isLessThanOrEqualTo(2 * limit);
        assertThat(fixed).as("fixed window").isLessThanOrEqualTo(2 * limit);
    }

    private long[] admitted(Algorithm algorithm, long[] trace) {
        ManualClock own = new ManualClock();
        LocalBucketStore store = LocalBucketStore.builder().timeMeter(own).build();
        try (RateLimiter limiter =
                RateLimiter.builder().store(store).timeMeter(own).build()) {
            Guard guard = limiter.guard(
                    Rule.builder("trace").limits("20/10s").algorithm(algorithm).build());
            long[] admitted = new long[trace.length];
            int n = 0;
            long now = 0;
            for (long at : trace) {
                own.advanceNanos(at - now);
                now = at;
                if (guard.acquire(RequestContext.empty()).permitted()) {
                    admitted[n++] = at;
                }
            }
            return java.util.Arrays.copyOf(admitted, n);
        }
    }

    /** The most admitted times within any half-open window {@code (t - window, t]}. */
    private static int maxInAnyWindow(long[] times, long window) {
        int max = 0;
        int start = 0;
        for (int end = 0; end < times.length; end++) {
            while (times[start] <= times[end] - window) {
                start++;
            }
            max = Math.max(max, end - start + 1);
        }
        return max;
    }

    @ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(
            value = Algorithm.class,
            names = {"SLIDING_WINDOW_LOG", "SLIDING_WINDOW_COUNTER"})
    void aWallClockThatStepsBackNeitherFailsNorForgets(Algorithm algorithm) {
        Guard guard = limiter(store(1_000))
                .guard(Rule.builder("back").limits("5/1s").algorithm(algorithm).build());
        clock.advance(Duration.ofMillis(10_500));
        assertThat(allowedOf(guard, 10)).isEqualTo(5);
        clock.advanceNanos(-2_500_000_000L); // NTP steps the clock back
        List<Decision> after = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            after.add(guard.acquire(RequestContext.empty()));
        }
        assertThat(after).allSatisfy(d -> {
            assertThat(d.outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(d.binding().basis()).isEqualTo(Basis.BUCKET);
        });
    }

    private static int allowedOf(Guard guard, int calls) {
        int allowed = 0;
        for (int i = 0; i < calls; i++) {
            allowed += guard.acquire(RequestContext.empty()).permitted() ? 1 : 0;
        }
        return allowed;
    }

    @Test
    void aLogKeyIsDroppedOnceItsNewestCallHasLeftTheLongestWindowAndNotBefore() {
        LocalBucketStore store = store(1_000);
        Guard guard = limiter(store)
                .guard(Rule.builder("log")
                        .limits("2/10s", "5/1m")
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofSeconds(15))
                        .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                        .build());
        for (int i = 0; i < 3; i++) {
            guard.acquireAsync(RequestContext.empty()); // two now, one reserved at 10 s
        }
        clock.advance(Duration.ofSeconds(65));
        store.cleanUp();
        assertThat(store.size())
                .as("the call reserved at 10 s counts until 70 s")
                .isEqualTo(1);
        clock.advance(Duration.ofSeconds(7));
        store.cleanUp();
        assertThat(store.size()).isZero();
    }

    @Test
    void aLogWeighsAsTheCallsItMayHoldSoManyLongLogsCannotExhaustTheHeap() {
        LocalBucketStore store = store(10_000);
        Guard guard = limiter(store)
                .guard(Rule.builder("big")
                        .key("user")
                        .limits("10000/1h")
                        .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                        .build());
        for (int i = 0; i < 50; i++) {
            guard.acquire(RequestContext.builder().principal("u" + i).build());
        }
        store.cleanUp();
        // Each key weighs 1 + 10000 / 16 = 626 of the 10,000: fifteen fit at a time.
        assertThat(store.size()).isEqualTo(15);
        assertThat(LocalBucketStore.weight(new SlidingLogState(
                        BucketStore.Limits.of(List.of(Limit.parse("10000/1h")), Algorithm.SLIDING_WINDOW_LOG),
                        clock,
                        null)))
                .isEqualTo(626);
    }

    @Test
    void aLogHeavierThanTheWholeStoreStillLimits() {
        // 2000 calls weigh 126, more than the 100 the store holds: capped at a tenth, so the log is kept.
        Guard guard = limiter(store(100))
                .guard(Rule.builder("big")
                        .limits("2000/1h")
                        .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                        .build());
        int admitted = 0;
        for (int i = 0; i < 2_100; i++) {
            admitted += guard.acquire(RequestContext.empty()).permitted() ? 1 : 0;
        }
        assertThat(admitted).isEqualTo(2_000);
    }

    @Test
    void aKeyWhoseLimitsGrowIsWeighedAndKeptByItsNewLimits() {
        LocalBucketStore store = store(1_000);
        java.util.concurrent.atomic.AtomicReference<List<Limit>> plan =
                new java.util.concurrent.atomic.AtomicReference<>(List.of(Limit.parse("2/1s")));
        RateLimiter limiter = RateLimiter.builder()
                .store(store)
                .timeMeter(clock)
                .waiter(clock)
                .limitProvider((rule, key) -> plan.get(), Duration.ofMillis(1))
                .build();
        open.add(limiter);
        Guard guard = limiter.guard(Rule.builder("grow")
                .key("user")
                .limits("2/1s")
                .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                .build());
        RequestContext alice = RequestContext.builder().principal("alice").build();
        assertThat(guard.acquire(alice).permitted()).isTrue();
        plan.set(List.of(Limit.parse("2/1h")));
        clock.advance(Duration.ofMillis(1_500));
        assertThat(guard.acquire(alice).permitted()).as("the second of 2/1h").isTrue();
        clock.advance(Duration.ofMillis(2_600));
        store.cleanUp();
        // Kept for the hour its calls now count, not for the second they counted under the old limits.
        assertThat(guard.acquire(alice).permitted())
                .as("a third within the hour")
                .isFalse();
    }

    /**
     * The seeds' leaky bucket, a queue drained at a constant rate, is a SOFT token bucket of capacity 1: calls
     * leave evenly spaced at the rate, and maxWaiting is the queue's size.
     */
    @Test
    void aSoftTokenBucketWithBurstOneIsALeakyBucket() {
        Guard leaky = limiter(store(1_000))
                .guard(Rule.builder("leaky")
                        .limits("5/1s burst=1")
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofSeconds(10))
                        .maxWaiting(4)
                        .build());
        List<CompletableFuture<Decision>> calls = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            calls.add(leaky.acquireAsync(RequestContext.empty()));
        }
        assertThat(calls.get(0).join().outcome()).isEqualTo(Outcome.ALLOWED);
        // Four wait, at 200 ms, 400 ms, 600 ms and 800 ms; the queue is full for the next two.
        for (int i = 5; i < 7; i++) {
            Decision d = calls.get(i).join();
            assertThat(d.outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(d.binding().basis()).isEqualTo(Basis.WAITERS_FULL);
        }
        // Each step of 200 ms releases exactly the next call in line, with the delay it was promised.
        for (int step = 1; step <= 4; step++) {
            clock.advance(Duration.ofMillis(200));
            for (int i = 1; i <= 4; i++) {
                assertThat(calls.get(i).isDone())
                        .as("call %d after %d ms", i, step * 200)
                        .isEqualTo(i <= step);
            }
            assertThat(calls.get(step).join().delayNanos()).isEqualTo(step * 200_000_000L);
        }
        // Drained: the queue takes calls again, each one slot later than the last.
        clock.advance(Duration.ofMillis(200));
        assertThat(leaky.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
        assertThat(leaky.acquireAsync(RequestContext.empty()).getNow(null)).isNull();
    }

    @Test
    void aCallACounterCannotHoldWhenAnotherSoftRuleMakesItRunIsRejectedAndGivesEverythingBack() {
        // This store holds a counter's intervals from the oldest to the newest, so it bounds their span; Redis holds
        // only the intervals counted (a hash field each), so it holds this call and delays it.
        RateLimiter limiter = limiter(store(1_000));
        Rule slow = Rule.builder("slow")
                .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                .limits("1/10s")
                .mode(Mode.SOFT)
                .maxDelay(Duration.ofSeconds(20))
                .build();
        Rule fast = Rule.builder("fast")
                .algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
                .limits("1/100ms")
                .mode(Mode.SOFT)
                .maxDelay(Duration.ofMillis(200))
                .build();
        Guard both = limiter.guard(slow, fast);
        assertThat(both.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
        // The counter has room at 200 ms, but the log makes the call run at 10 s: a hundred of the counter's
        // intervals ahead, more than a counter key holds delayed calls in. The call is rejected, and the log's place
        // at 10 s is given back.
        Decision rejected = both.acquireAsync(RequestContext.empty()).getNow(null);
        assertThat(rejected).as("decided at once, not delayed").isNotNull();
        assertThat(rejected.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(rejected.verdicts())
                .filteredOn(v -> v.rule().equals("fast"))
                .singleElement()
                .satisfies(v -> assertThat(v.outcome()).isEqualTo(Outcome.REJECTED));
        assertThat(rejected.retryAfterNanos()).isPositive();
        CompletableFuture<Decision> slowAgain = limiter.guard(slow).acquireAsync(RequestContext.empty());
        clock.advance(Duration.ofSeconds(10));
        assertThat(slowAgain.getNow(null))
                .as("the log's place at 10 s is free again")
                .isNotNull()
                .extracting(Decision::delayNanos)
                .isEqualTo(10_000_000_000L);
    }
}
