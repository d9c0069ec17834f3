package io.github.ratelimit.redishttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.redis.JedisBucketStore.BreakerState;
import io.github.ratelimit.redishttp.WebApp.Stack;
import io.github.ratelimit.testing.redis.DelayingProxy;
import io.github.ratelimit.testing.redis.RedisServer;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A URL rule that counts only 404s gives back the token of every other answer, even when Redis is slow at that very
 * moment, over real HTTP on Spring MVC and on WebFlux, with a real Redis behind a delaying proxy (issue 33, item 5: in
 * a soak with a store slower than the 50 ms command timeout, 1,821 refunds failed, and each charged a 200 as if it were
 * a 404). Rule {@code not-found}: {@code count=statuses:404}, 20 per hour per address, on {@code /r/status/**}.
 */
class RefundsOnASlowStoreOverHttpTest {

    private static final String IP = "203.0.113.9";
    private static final String RULE = "not-found";

    static Stream<Arguments> slowRefunds() {
        List<Arguments> all = new ArrayList<>();
        for (Stack stack : Stack.values()) {
            all.add(Arguments.of(stack, Algorithm.TOKEN_BUCKET, 75));
            all.add(Arguments.of(stack, Algorithm.SLIDING_WINDOW_COUNTER, 75));
            all.add(Arguments.of(stack, Algorithm.TOKEN_BUCKET, 900));
        }
        return all.stream();
    }

    /**
     * Ten requests answered 200 are held in their handler; Redis then answers in 75 ms (or 900 ms) against the 50 ms
     * command timeout, and they answer, so each refund meets the slow store. Once Redis is fast again and everything
     * the proxy held has reached it, the key holds its 20 again (none lost), and admits exactly 20 requests answered
     * 404 (none given twice).
     */
    @ParameterizedTest(name = "{0}, {1}, Redis answering in {2} ms")
    @MethodSource("slowRefunds")
    void refundsMadeWhileRedisIsSlowAreNeitherLostNorGivenTwice(Stack stack, Algorithm algorithm, int delayMillis)
            throws Exception {
        try (RedisServer redis = RedisServer.start();
                DelayingProxy proxy = DelayingProxy.start(redis.host(), redis.port(), Duration.ZERO);
                WebApp app = WebApp.start(
                        stack,
                        "ratelimit.redis.url=redis://" + redis.host() + ":" + proxy.port(),
                        "ratelimit.rules[0].name=" + RULE,
                        "ratelimit.rules[0].paths=/r/status/**",
                        "ratelimit.rules[0].key=ip",
                        "ratelimit.rules[0].limits=20/1h",
                        "ratelimit.rules[0].count=statuses:404",
                        "ratelimit.rules[0].algorithm="
                                + algorithm.name().toLowerCase(Locale.ROOT).replace('_', '-'))) {
            Gates gates = app.gates();
            List<CompletableFuture<HttpResponse<String>>> answered = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                answered.add(app.send("/r/status/ok?status=200&gate=slow", IP));
            }
            await("ten requests in the handler")
                    .atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> gates.entered("slow") == 10);
            long mark = app.mark();
            // Read through the store with the 50 ms timeout: -1 when a busy machine made it time out; read again then.
            await("each took its token from Redis")
                    .atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> app.remaining(RULE, IP), equalTo(10L));

            proxy.delay(Duration.ofMillis(delayMillis));
            gates.open("slow");
            for (CompletableFuture<HttpResponse<String>> a : answered) {
                assertThat(a.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
            }
            await("the ten requests settled")
                    .atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(5))
                    .until(() -> app.settledSince(mark) >= 10);

            proxy.delay(Duration.ZERO);
            // Everything the proxy held has reached Redis (a refund sent unanswered may still run there), and the
            // refunds that failed were given back later: the key holds its 20 again.
            await("the proxy holding nothing and the ten tokens back")
                    .atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> proxy.held() == 0 ? app.remaining(RULE, IP) : -2, equalTo(20L));
            assertThat(app.store().breakerState()).isEqualTo(BreakerState.CLOSED);
            assertThat(app.refunds("lost")).as("%s", app.store().stats()).isZero();

            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 25; i++) {
                statuses.add(app.get("/r/status/missing?status=404", IP).statusCode());
            }
            assertThat(statuses)
                    .as("20 admitted after ten refunds; %s", app.store().stats())
                    .containsExactlyElementsOf(expected());
            assertThat(app.decisions("fail_open")).isZero();
        }
    }

    private static List<Integer> expected() {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            statuses.add(i < 20 ? 404 : 429);
        }
        return statuses;
    }
}
