package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard;
import io.github.ratelimit.HttpStatuses;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.testing.redis.DelayingProxy;
import io.github.ratelimit.testing.redis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import redis.clients.jedis.Jedis;

/**
 * What a call gives back when it ends (a concurrency rule's slot, the tokens of a response a rule does not count) is
 * given back even when Redis fails at that very moment, against real Redis servers paused and slowed down: never lost
 * while Redis answers within a second, never given twice, and a slot's lease is never renewed once its call ended.
 * (Issue 33, items 1 and 5.)
 */
class EndsThatSurviveFaultsTest {

    private static final RequestContext CLIENT =
            RequestContext.builder().remoteAddress("203.0.113.7").build();

    private static String prefix() {
        return "e" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** Decides calls of another key until the breaker has opened (Redis is paused). */
    private static void openTheBreaker(JedisBucketStore store, Guard other) {
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    other.acquire(RequestContext.builder()
                            .remoteAddress("198.51.100.1")
                            .build());
                    return store.breakerState() == JedisBucketStore.BreakerState.OPEN;
                });
    }

    /**
     * Two calls hold the two slots; Redis pauses, the breaker opens, the calls end while it is open. Their slots are
     * free again soon after Redis answers (it was: renewed every 5 s for as long as the instance ran, 429 for good).
     */
    @Test
    void slotsOfCallsThatEndedWhileTheBreakerWasOpenAreFreeOnceRedisAnswers() {
        try (RedisServer redis = RedisServer.start();
                JedisBucketStore store = JedisBucketStore.builder()
                        .url(redis.uri().toString())
                        .keyPrefix(prefix())
                        .build();
                RateLimiter limiter = RateLimiter.builder().store(store).build()) {
            Guard slow =
                    limiter.guard(Rule.builder("slow").key("ip").concurrency(2).build());
            Guard other = limiter.guard(
                    Rule.builder("other").key("ip").limits("1000/1s").build());
            Decision first = slow.acquire(CLIENT);
            Decision second = slow.acquire(CLIENT);
            assertThat(List.of(first.outcome(), second.outcome())).containsOnly(Outcome.ALLOWED);
            assertThat(slow.acquire(CLIENT).outcome()).isEqualTo(Outcome.REJECTED);

            redis.pause();
            try {
                openTheBreaker(store, other);
                slow.completed(first, false, 200);
                slow.completed(second, false, 200);
            } finally {
                redis.resume();
            }
            long resumed = System.nanoTime();
            // Within one lease of Redis answering again; here, as soon as the breaker lets calls through.
            await().atMost(Duration.ofSeconds(16))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> {
                        Decision a = slow.acquire(CLIENT);
                        Decision b = slow.acquire(CLIENT);
                        slow.completed(a, false, 200);
                        slow.completed(b, false, 200);
                        return a.binding().basis() == Basis.BUCKET && a.permitted() && b.permitted();
                    });
            assertThat(System.nanoTime() - resumed).isLessThan(RedisSlots.LEASE_NANOS);
            assertThat(store.stats().lateRefunds()).as("%s", store.stats()).isEqualTo(2);
            assertThat(store.stats().lostRefunds()).isZero();
        }
    }

    /** The lease of a call that ended is never renewed again, even when giving it back failed. */
    @Test
    void aLeaseWhoseCallEndedIsNotRenewedWhenGivingItBackFails() throws Exception {
        try (RedisServer redis = RedisServer.start();
                JedisBucketStore store = JedisBucketStore.builder()
                        .url(redis.uri().toString())
                        .keyPrefix(prefix())
                        .build();
                RateLimiter limiter = RateLimiter.builder().store(store).build();
                Jedis admin = new Jedis(redis.host(), redis.port())) {
            Guard slow =
                    limiter.guard(Rule.builder("slow").key("ip").concurrency(1).build());
            Decision call = slow.acquire(CLIENT);
            assertThat(call.permitted()).isTrue();
            // The store's look for keys of an earlier layout wrote its mark before Redis goes.
            org.awaitility.Awaitility.await().until(() -> store.keyMigration().finished());
            redis.kill();
            slow.completed(call, false, 200); // fails: Redis is gone, and stays gone past the horizon of late refunds
            assertThat(store.leasesRenewed()).as("leases this instance renews").isZero();
            redis.restart();
            // Redis restarted empty: the lease is gone, and no renewal brings it back.
            assertThat(admin.keys("*")).isEmpty();
        }
    }

    static Stream<Arguments> slowRefunds() {
        List<Arguments> all = new ArrayList<>();
        for (Algorithm a : new Algorithm[] {
            Algorithm.TOKEN_BUCKET,
            Algorithm.FIXED_WINDOW,
            Algorithm.SLIDING_WINDOW_LOG,
            Algorithm.SLIDING_WINDOW_COUNTER
        }) {
            all.add(Arguments.of(a, "40/1h", 75, false));
            all.add(Arguments.of(a, "40/1h", 75, true));
        }
        all.add(Arguments.of(Algorithm.TOKEN_BUCKET, "40/1h", 900, false));
        all.add(Arguments.of(Algorithm.SLIDING_WINDOW_COUNTER, "40/1h", 900, false));
        all.add(Arguments.of(Algorithm.FIXED_WINDOW, "40/1d@Asia/Tokyo", 75, false));
        return all.stream();
    }

    /**
     * A rule that counts only 404s gives back the tokens of every other response. Ten such refunds are made while
     * Redis answers later than the command timeout (75 ms against 50 ms; and 900 ms): none is lost (it was: each
     * charged a 200 as a 404), none given twice: the key then admits exactly the 30 left of its 40. One after another,
     * and all at once
     * (then this instance combines them, several in one write).
     */
    @ParameterizedTest(name = "{0} {1}, Redis answering after {2} ms, at once: {3}")
    @MethodSource("slowRefunds")
    void refundsMadeWhileRedisIsSlowAreNeitherLostNorGivenTwice(
            Algorithm algorithm, String limit, int delayMillis, boolean together) throws InterruptedException {
        try (RedisServer redis = RedisServer.start();
                DelayingProxy proxy = DelayingProxy.start(redis.host(), redis.port(), Duration.ZERO);
                JedisBucketStore store = JedisBucketStore.builder()
                        .url("redis://" + redis.host() + ":" + proxy.port())
                        .keyPrefix(prefix())
                        .build();
                RateLimiter limiter = RateLimiter.builder().store(store).build()) {
            // The store's start-up look for keys of an earlier layout is over: it sends nothing through the proxy
            // while the test counts what passes.
            org.awaitility.Awaitility.await().until(() -> store.keyMigration().finished());
            Guard notFound = limiter.guard(Rule.builder("not-found")
                    .key("ip")
                    .limits(limit)
                    .algorithm(algorithm)
                    .count(HttpStatuses.parse("404"))
                    .build());
            // Twenty calls: ten answered 404 keep their tokens, ten answered 200 give them back. A refund given twice
            // would show, since the key is not full after them.
            List<Decision> calls = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                calls.add(notFound.acquire(CLIENT));
            }
            assertThat(calls).allMatch(d -> d.permitted() && d.binding().basis() == Basis.BUCKET);
            for (Decision d : calls.subList(10, 20)) {
                notFound.completed(d, false, 404);
            }
            calls = calls.subList(0, 10);

            if (together) {
                // The first refund is answered at once; those that came meanwhile go together, slowly, and are run.
                java.util.concurrent.atomic.AtomicInteger chunks = new java.util.concurrent.atomic.AtomicInteger();
                proxy.delays(() -> chunks.getAndIncrement() == 0
                        ? 0
                        : Duration.ofMillis(delayMillis).toNanos());
            } else {
                proxy.delay(Duration.ofMillis(delayMillis));
            }
            if (together) {
                // At once: the refunds of one key are combined into a few writes, each carrying several.
                java.util.concurrent.CyclicBarrier barrier = new java.util.concurrent.CyclicBarrier(calls.size());
                List<Thread> threads = new ArrayList<>();
                for (Decision d : calls) {
                    Thread t = new Thread(() -> {
                        try {
                            barrier.await();
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                        notFound.completed(d, false, 200);
                    });
                    t.start();
                    threads.add(t);
                }
                for (Thread t : threads) {
                    t.join();
                }
            } else {
                for (Decision d : calls) {
                    notFound.completed(d, false, 200);
                }
            }
            // Every refund made at once, given back later, or (a counter's, a calendar's, sent unanswered) run by
            // Redis when the proxy passes it on: wait for both, then for the breaker to let calls through again.
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> store.lateRefundsWaiting() == 0 && proxy.held() == 0);
            proxy.delay(Duration.ZERO);
            JedisBucketStore.Stats stats = store.stats();
            assertThat(stats.lostRefunds()).as("%s", stats).isZero();
            Guard probe = limiter.guard(
                    Rule.builder("probe").key("ip").limits("1000/1s").build());
            await().atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> probe.acquire(CLIENT).binding().basis() == Basis.BUCKET);
            int admitted = 0;
            for (int i = 0; i < 40; i++) {
                Decision d = notFound.acquire(CLIENT);
                assertThat(d.binding().basis()).as("call %d: %s", i, d).isEqualTo(Basis.BUCKET);
                if (d.permitted()) {
                    admitted++;
                    notFound.completed(d, false, 404);
                }
            }
            assertThat(admitted)
                    .as("admitted after ten refunds; %s", store.stats())
                    .isEqualTo(30);
        }
    }
}
