package io.github.ratelimit.redishttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.ratelimit.redishttp.WebApp.Stack;
import io.github.ratelimit.testing.redis.RedisServer;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@code block-for} on Redis over real HTTP: two Spring MVC instances with the starter's real auto-configuration share
 * one real Redis; a client refused by one is blocked on both, and a reset through one lifts the block on the other
 * within a second ({@code docs/blocking.md}, {@code docs/redis.md#blocks}).
 */
class BlockOnRedisOverHttpTest {

    private static final String IP = "203.0.113.9";

    private static WebApp start(RedisServer redis, String prefix) {
        return WebApp.start(
                Stack.MVC,
                "ratelimit.redis.url=" + redis.uri(),
                "ratelimit.redis.key-prefix=" + prefix,
                "ratelimit.rules[0].name=api",
                "ratelimit.rules[0].paths=/r/other",
                "ratelimit.rules[0].key=ip",
                "ratelimit.rules[0].limits=2/1m",
                "ratelimit.rules[0].block-for=10m");
    }

    @Test
    void aClientRefusedByOneInstanceIsBlockedOnBothUntilAResetThroughOne() {
        String prefix = "block-" + UUID.randomUUID();
        try (RedisServer redis = RedisServer.start();
                WebApp one = start(redis, prefix);
                WebApp two = start(redis, prefix)) {
            assertThat(one.get("/r/other", IP).statusCode()).isEqualTo(200);
            assertThat(one.get("/r/other", IP).statusCode()).isEqualTo(200);
            HttpResponse<String> refused = one.get("/r/other", IP);
            assertThat(refused.statusCode()).isEqualTo(429);
            assertThat(refused.headers().firstValue("Retry-After")).hasValue("600");

            HttpResponse<String> elsewhere = two.get("/r/other", IP);
            assertThat(elsewhere.statusCode())
                    .as("the other instance, whose bucket for the client was never touched")
                    .isEqualTo(429);
            assertThat(Long.parseLong(
                            elsewhere.headers().firstValue("Retry-After").orElseThrow()))
                    .isBetween(590L, 600L);
            assertThat(elsewhere.body()).contains("blocks this client");
            assertThat(two.decisions("blocked")).isEqualTo(1);
            assertThat(two.get("/r/other", "203.0.113.10").statusCode())
                    .as("another client")
                    .isEqualTo(200);

            one.reset("api", IP);
            assertThat(one.get("/r/other", IP).statusCode())
                    .as("lifted at once where it was reset")
                    .isEqualTo(200);
            long resetAt = System.nanoTime();
            await("the block lifted on the other instance")
                    .atMost(Duration.ofSeconds(5))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> two.get("/r/other", IP).statusCode() == 200);
            // The recheck interval (1 s), plus a poll and a request on a busy machine.
            assertThat(Duration.ofNanos(System.nanoTime() - resetAt)).isLessThan(Duration.ofSeconds(2));
        }
    }
}
