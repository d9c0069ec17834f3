package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.internal.config.RateLimitSettings;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.LocalBucketStore;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link Algorithm#LEAKY_BUCKET}, the constant-rate queue, on the local store and on a real Redis: parallel SOFT calls
 * leave one interval apart in a bounded queue; a HARD rule refuses a call that comes sooner; what cannot be a leaky
 * bucket is refused at configuration.
 */
class LeakyBucketTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private final ManualClock clock = new ManualClock();
    private final List<RateLimiter> limiters = new ArrayList<>();

    @AfterEach
    void close() {
        limiters.forEach(RateLimiter::close);
    }

    private RateLimiter limiter(String store) {
        BucketStore s = store.equals("redis")
                ? JedisBucketStore.builder()
                        .url(redis.uri())
                        .keyPrefix("leaky-" + UUID.randomUUID())
                        .commandTimeout(Duration.ofSeconds(5))
                        .timeMeter(clock)
                        .build()
                : LocalBucketStore.builder().timeMeter(clock).build();
        RateLimiter limiter =
                RateLimiter.builder().store(s).timeMeter(clock).waiter(clock).build();
        limiters.add(limiter);
        return limiter;
    }

    /** The measure: ten parallel calls of a 5/1s SOFT leaky rule leave 200 ms apart, in a queue of ten. */
    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void tenParallelCallsLeaveOneIntervalApart(String store) throws Exception {
        Guard queue = limiter(store)
                .guard(Rule.builder("queue")
                        .limits("5/1s")
                        .algorithm(Algorithm.LEAKY_BUCKET)
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofSeconds(2))
                        .maxWaiting(9)
                        .build());
        ConcurrentLinkedQueue<CompletableFuture<Decision>> calls = new ConcurrentLinkedQueue<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            Thread t = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                calls.add(queue.acquireAsync(RequestContext.empty()));
            });
            t.start();
            threads.add(t);
        }
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        // Release the queue step by step: each 200 ms lets exactly one more call go, with the delay it was promised.
        List<Long> released = new ArrayList<>();
        for (CompletableFuture<Decision> call : calls) {
            if (call.isDone()) {
                released.add(call.join().delayNanos() / 1_000_000);
            }
        }
        assertThat(released).as("the first goes at once").containsExactly(0L);
        for (int step = 1; step <= 9; step++) {
            clock.advance(Duration.ofMillis(200));
            long done = calls.stream().filter(CompletableFuture::isDone).count();
            assertThat(done).as("calls gone after %d ms", step * 200).isEqualTo(step + 1);
        }
        List<Long> delays = calls.stream()
                .map(c -> c.join().delayNanos() / 1_000_000)
                .sorted()
                .toList();
        assertThat(delays).containsExactly(0L, 200L, 400L, 600L, 800L, 1000L, 1200L, 1400L, 1600L, 1800L);
        assertThat(calls).allSatisfy(c -> assertThat(c.join().permitted()).isTrue());
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aFullQueueAndACallThatWouldWaitTooLongAreRefused(String store) {
        Guard queue = limiter(store)
                .guard(Rule.builder("small-queue")
                        .limits("5/1s")
                        .algorithm(Algorithm.LEAKY_BUCKET)
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofSeconds(10))
                        .maxWaiting(2)
                        .build());
        List<Decision> decisions = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            decisions.add(queue.acquireAsync(RequestContext.empty()).getNow(null));
        }
        assertThat(decisions.get(0).outcome()).isEqualTo(Outcome.ALLOWED);
        assertThat(decisions.get(1)).as("waiting").isNull();
        assertThat(decisions.get(2)).as("waiting").isNull();
        assertThat(decisions.get(3).binding().basis()).as("the queue holds two").isEqualTo(Basis.WAITERS_FULL);
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aHardLeakyRuleRefusesACallThatComesSooner(String store) {
        Guard steady = limiter(store)
                .guard(Rule.builder("steady")
                        .limits("5/1s")
                        .algorithm(Algorithm.LEAKY_BUCKET)
                        .build());
        assertThat(steady.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
        Decision soon = steady.acquire(RequestContext.empty());
        assertThat(soon.outcome()).as("no burst").isEqualTo(Outcome.REJECTED);
        assertThat(soon.retryAfterNanos()).isEqualTo(Duration.ofMillis(200).toNanos());
        clock.advance(Duration.ofMillis(200));
        assertThat(steady.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
    }

    @Test
    void whatCannotBeALeakyBucketIsRefusedAtConfiguration() {
        assertThatThrownBy(() -> Rule.builder("b")
                        .limits("5/1s burst=10")
                        .algorithm(Algorithm.LEAKY_BUCKET)
                        .build())
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("burst");
        assertThatThrownBy(() -> Rule.builder("c")
                        .limits("5/1s")
                        .algorithm(Algorithm.LEAKY_BUCKET)
                        .cost(2)
                        .build())
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("capacity 1");
    }

    @Test
    void theSettingsNameItLeakyBucket() {
        RateLimitSettings settings = RateLimitSettings.parse(
                Map.of(
                        "ratelimit.rules[0].name",
                        "q",
                        "ratelimit.rules[0].paths",
                        "/q/**",
                        "ratelimit.rules[0].limits",
                        "5/1s",
                        "ratelimit.rules[0].algorithm",
                        "leaky-bucket"),
                null,
                RateLimitSettings.EntryPoint.SERVLET_FILTER);
        assertThat(settings.rules())
                .singleElement()
                .satisfies(r -> assertThat(r.rule().algorithm()).isEqualTo(Algorithm.LEAKY_BUCKET));
    }
}
