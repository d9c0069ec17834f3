package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.servlet.testing.TomcatServer;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A calendar quota ({@code 2/1mo@Europe/Berlin}) with the {@code web.xml} filter in a real Tomcat, on the real clock
 * (the server's, on Redis): the third request of the month gets 429 with the seconds to the 1st of next month,
 * midnight in Berlin, and the policy names the month and gives its length.
 */
class CalendarQuotaInContainerTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void theThirdRequestOfTheMonthWaitsForTheFirstOfTheNext(String store, @TempDir Path dir) throws Exception {
        List<String> lines = new ArrayList<>(List.of(
                "ratelimit.rules[0].name=monthly",
                "ratelimit.rules[0].paths=/api/**",
                "ratelimit.rules[0].key=header:X-Api-Key",
                "ratelimit.rules[0].limits=2/1mo@Europe/Berlin",
                "ratelimit.rules[0].algorithm=fixed-window"));
        if (store.equals("redis")) {
            lines.add("ratelimit.redis.url=" + redis.uri());
            lines.add("ratelimit.redis.key-prefix=calendar-" + System.nanoTime());
        }
        Path rules = Files.writeString(dir.resolve("ratelimit.properties"), String.join("\n", lines));
        try (TomcatServer server = TomcatServer.builder()
                .filterClass(RateLimitFilter.class.getName())
                .filterParam("config", "file:" + rules)
                .servletClass("ok", DryRunInContainerTest.Ok.class.getName(), false, "/*")
                .start()) {
            ZonedDateTime now = ZonedDateTime.now(ZoneId.of("Europe/Berlin"));
            ZonedDateTime thisMonth = now.toLocalDate().withDayOfMonth(1).atStartOfDay(now.getZone());
            long monthSeconds =
                    Duration.between(thisMonth, thisMonth.plusMonths(1)).toSeconds();
            long untilNext = Duration.between(
                            Instant.now(), thisMonth.plusMonths(1).toInstant())
                    .toSeconds();
            RawHttp.Response first = RawHttp.send(server.port(), "GET", "/api/x", "X-Api-Key: k");
            assertThat(first.status()).isEqualTo(200);
            assertThat(first.header("RateLimit-Policy"))
                    .isEqualTo("\"monthly-1mo@Europe/Berlin\";q=2;w=" + monthSeconds);
            assertThat(RawHttp.send(server.port(), "GET", "/api/x", "X-Api-Key: k")
                            .status())
                    .isEqualTo(200);
            RawHttp.Response third = RawHttp.send(server.port(), "GET", "/api/x", "X-Api-Key: k");
            assertThat(third.status()).isEqualTo(429);
            assertThat(Long.parseLong(third.header("Retry-After")))
                    .as("seconds to the 1st, midnight in Berlin")
                    .isBetween(untilNext - 60, untilNext + 60);
            assertThat(RawHttp.send(server.port(), "GET", "/api/x", "X-Api-Key: other")
                            .status())
                    .isEqualTo(200);
        }
    }
}
