package io.github.ratelimit.redishttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;

import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.redis.JedisBucketStore.BreakerState;
import io.github.ratelimit.redishttp.WebApp.Stack;
import io.github.ratelimit.testing.redis.RedisServer;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A concurrency rule's slots on Redis come back after calls that ended while the store's circuit breaker was open,
 * over real HTTP on Spring MVC and on WebFlux, with a real Redis frozen by SIGSTOP (issue 33, item 1: the release was
 * refused while the breaker was open, and the lease stayed in the instance's renewal list, renewed every 5 s: the
 * address got 429 for as long as the instance ran). Rule {@code slow}: 2 calls in flight per address on
 * {@code /r/slow}; rule {@code other} on {@code /r/other}, whose calls open the breaker while Redis is frozen.
 */
class SlotsAfterAnOutageOverHttpTest {

    private static final String IP = "203.0.113.7";
    /** A lease's life: the longest a slot not given back stays taken. */
    private static final Duration LEASE = Duration.ofSeconds(15);

    private static WebApp start(Stack stack, RedisServer redis) {
        return WebApp.start(
                stack,
                "ratelimit.redis.url=" + redis.uri(),
                "ratelimit.rules[0].name=slow",
                "ratelimit.rules[0].paths=/r/slow",
                "ratelimit.rules[0].key=ip",
                "ratelimit.rules[0].concurrency=2",
                "ratelimit.rules[1].name=other",
                "ratelimit.rules[1].paths=/r/other",
                "ratelimit.rules[1].key=ip",
                "ratelimit.rules[1].limits=100000/1s");
    }

    /**
     * Two calls hold the address's two slots; Redis freezes, other calls open the breaker, and the two calls end while
     * it is open: on Spring MVC both answer; on WebFlux one answers and the other's client goes away. Once Redis
     * answers again, within one lease, a call finds both slots free, and both releases were made late.
     */
    @ParameterizedTest
    @EnumSource(Stack.class)
    void slotsOfCallsThatEndedWhileTheBreakerWasOpenAreFreeWithinALease(Stack stack) throws Exception {
        try (RedisServer redis = RedisServer.start();
                WebApp app = start(stack, redis)) {
            JedisBucketStore store = app.store();
            Gates gates = app.gates();
            CompletableFuture<HttpResponse<String>> answered = app.send("/r/slow?gate=answer", IP);
            // On WebFlux the second call's client goes away while Redis is frozen; on Spring MVC it answers too.
            CompletableFuture<HttpResponse<String>> second = null;
            Socket leaving = null;
            if (stack == Stack.WEBFLUX) {
                leaving = app.open("/r/slow?gate=leave", IP);
            } else {
                second = app.send("/r/slow?gate=answer", IP);
            }
            await("both calls in the handler")
                    .atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> gates.entered("answer") + gates.entered("leave") == 2);
            // Decided with the 50 ms timeout: a busy machine may let one through by the failure policy; ask again then.
            await("a third call refused while two hold the slots")
                    .atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> app.get("/r/slow", IP).statusCode() == 429);

            redis.pause();
            try {
                await("the breaker open")
                        .atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(10))
                        .until(() -> app.get("/r/other", "198.51.100.1").statusCode() == 200
                                && store.breakerState() == BreakerState.OPEN);
                long mark = app.mark();
                gates.open("answer");
                if (leaving != null) {
                    leaving.close();
                }
                assertThat(answered.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
                if (second != null) {
                    assertThat(second.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
                }
                await("both calls settled")
                        .atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(5))
                        .until(() -> app.settledSince(mark) >= 2);
                assertThat(store.breakerState())
                        .as("the calls ended while Redis was frozen and the breaker not closed")
                        .isNotEqualTo(BreakerState.CLOSED);
            } finally {
                redis.resume();
            }
            long resumed = System.nanoTime();

            // A call that takes one slot and finds the other free: both came back (it was 429 for good).
            await("a call finding both slots free")
                    .atMost(LEASE)
                    .pollInterval(Duration.ofMillis(100))
                    .until(
                            () -> {
                                HttpResponse<String> r = app.get("/r/slow", IP);
                                return r.statusCode() + " "
                                        + r.headers().firstValue("RateLimit").orElse("");
                            },
                            s -> s.startsWith("200 ") && s.contains("\"slow-concurrency\";r=1"));
            assertThat(Duration.ofNanos(System.nanoTime() - resumed)).isLessThan(LEASE);
            await("both releases made late")
                    .atMost(Duration.ofSeconds(5))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> app.refunds("late"), equalTo(2.0));
            assertThat(app.refunds("lost")).isZero();
        }
    }
}
