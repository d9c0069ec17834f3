package io.github.ratelimit.store;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Basis;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Limit;
import io.github.ratelimit.Mode;
import io.github.ratelimit.Outcome;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.testing.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

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
        RateLimiter limiter = RateLimiter.builder().store(store).timeMeter(clock).waiter(clock).build();
        open.add(limiter);
        return limiter;
    }

    private LocalBucketStore store(long maximumKeys) {
        return LocalBucketStore.builder().timeMeter(clock).maximumKeys(maximumKeys).build();
    }

    /**
     * Bursts of random size at random gaps, the same trace for every algorithm: the log never admits more than
     * the limit within any rolling window, the counter never more than twice the limit (its worst case: the
     * previous interval's calls all at its end, weighted as if spread), and on this trace much less.
     */
    @Test
    void overARandomBurstyTraceTheLogIsExactAndTheCounterStaysWithinTwiceTheLimit() {
        long seed = Long.getLong("ratelimit.test.seed", System.nanoTime());
        Random random = new Random(seed);
        long[] trace = new long[20_000];
        long t = 0;
        for (int i = 0; i < trace.length; ) {
            t += (long) (random.nextDouble() * random.nextDouble() * 3_000_000_000L);   // mostly short gaps
            int burst = 1 + random.nextInt(random.nextInt(4) == 0 ? 60 : 8);
            for (int b = 0; b < burst && i < trace.length; b++) {
                trace[i++] = t + b * 5_000_000L;
            }
        }
        long window = Duration.ofSeconds(10).toNanos();
        int limit = 20;
        int log = maxInAnyWindow(admitted(Algorithm.SLIDING_WINDOW_LOG, trace), window);
        int counter = maxInAnyWindow(admitted(Algorithm.SLIDING_WINDOW_COUNTER, trace), window);
        int fixed = maxInAnyWindow(admitted(Algorithm.FIXED_WINDOW, trace), window);
        assertThat(log).as("log, seed %d", seed).isEqualTo(limit);
        assertThat(counter).as("counter, seed %d", seed).isGreaterThanOrEqualTo(limit).isLessThanOrEqualTo(2 * limit);
        assertThat(fixed).as("fixed window, seed %d", seed).isLessThanOrEqualTo(2 * limit);
    }

    private long[] admitted(Algorithm algorithm, long[] trace) {
        ManualClock own = new ManualClock();
        LocalBucketStore store = LocalBucketStore.builder().timeMeter(own).build();
        try (RateLimiter limiter = RateLimiter.builder().store(store).timeMeter(own).build()) {
            Guard guard = limiter.guard(Rule.builder("trace").limits("20/10s").algorithm(algorithm).build());
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

    @Test
    void aLogKeyIsDroppedOnceItsNewestCallHasLeftTheLongestWindowAndNotBefore() {
        LocalBucketStore store = store(1_000);
        Guard guard = limiter(store).guard(Rule.builder("log").limits("2/10s", "5/1m").mode(Mode.SOFT)
                .maxDelay(Duration.ofSeconds(15)).algorithm(Algorithm.SLIDING_WINDOW_LOG).build());
        for (int i = 0; i < 3; i++) {
            guard.acquireAsync(RequestContext.empty());   // two now, one reserved at 10 s
        }
        clock.advance(Duration.ofSeconds(65));
        store.cleanUp();
        assertThat(store.size()).as("the call reserved at 10 s counts until 70 s").isEqualTo(1);
        clock.advance(Duration.ofSeconds(7));
        store.cleanUp();
        assertThat(store.size()).isZero();
    }

    @Test
    void aLogWeighsAsTheCallsItMayHoldSoManyLongLogsCannotExhaustTheHeap() {
        LocalBucketStore store = store(1_000);
        Guard guard = limiter(store).guard(Rule.builder("big").key("user").limits("10000/1h")
                .algorithm(Algorithm.SLIDING_WINDOW_LOG).build());
        for (int i = 0; i < 50; i++) {
            guard.acquire(RequestContext.builder().principal("u" + i).build());
        }
        store.cleanUp();
        // Each key weighs 1 + 10000 / 16 = 626 of the 1,000: one fits at a time.
        assertThat(store.size()).isEqualTo(1);
        assertThat(LocalBucketStore.weight(new SlidingLogState(StoreLimits.of(List.of(Limit.parse("10000/1h")),
                Algorithm.SLIDING_WINDOW_LOG), clock, null))).isEqualTo(626);
    }

    /**
     * The seeds' leaky bucket, a queue drained at a constant rate, is a SOFT token bucket of capacity 1: calls
     * leave evenly spaced at the rate, and maxWaiting is the queue's size.
     */
    @Test
    void aSoftTokenBucketWithBurstOneIsALeakyBucket() {
        Guard leaky = limiter(store(1_000)).guard(Rule.builder("leaky").limits("5/1s burst=1").mode(Mode.SOFT)
                .maxDelay(Duration.ofSeconds(10)).maxWaiting(4).build());
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
        List<Long> leftAt = new ArrayList<>();
        for (int step = 1; step <= 4; step++) {
            clock.advance(Duration.ofMillis(200));
            for (int i = 1; i <= 4; i++) {
                if (calls.get(i).isDone() && leftAt.size() < i) {
                    leftAt.add(calls.get(i).join().delayNanos());
                }
            }
        }
        assertThat(leftAt).containsExactly(200_000_000L, 400_000_000L, 600_000_000L, 800_000_000L);
        // Drained: the queue takes calls again, each one slot later than the last.
        clock.advance(Duration.ofMillis(200));
        assertThat(leaky.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
        assertThat(leaky.acquireAsync(RequestContext.empty()).getNow(null)).isNull();
    }
}
