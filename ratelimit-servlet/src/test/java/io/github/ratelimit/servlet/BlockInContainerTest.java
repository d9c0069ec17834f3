package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimitHeaders.HeaderStyle;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.servlet.testing.TomcatServer;
import io.github.ratelimit.testing.ManualClock;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import org.apache.catalina.Wrapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code block-for} with the plain filter in a real Tomcat over raw HTTP: 429 with {@code Retry-After} the remaining
 * block after the key's bucket refilled (a manual clock); from a rules file, the admin servlet's reset lifts it.
 */
class BlockInContainerTest {

    public static final class Ok extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.getWriter().write("ok");
        }
    }

    @Test
    void answers429WithTheRemainingBlockAfterTheBucketRefilled() throws Exception {
        ManualClock clock = new ManualClock();
        RateLimiter limiter = RateLimiter.builder().timeMeter(clock).build();
        Rule rule = Rule.builder("api")
                .key("header:X-User")
                .limits("2/1m")
                .blockFor(Duration.ofMinutes(10))
                .build();
        try (TomcatServer server = TomcatServer.builder()
                .filter(RateLimitFilter.builder(limiter)
                        .urlRule(rule, "/api/*")
                        .headers(EnumSet.allOf(HeaderStyle.class))
                        .build())
                .servletClass("ok", Ok.class.getName(), false, "/api/*")
                .start()) {
            int port = server.port();
            assertThat(RawHttp.send(port, "GET", "/api/x", "X-User: eve").status())
                    .isEqualTo(200);
            assertThat(RawHttp.send(port, "GET", "/api/x", "X-User: eve").status())
                    .isEqualTo(200);
            RawHttp.Response refused = RawHttp.send(port, "GET", "/api/x", "X-User: eve");
            assertThat(refused.status()).isEqualTo(429);
            assertThat(refused.header("Retry-After")).isEqualTo("600");

            clock.advance(Duration.ofMinutes(3));
            RawHttp.Response blocked = RawHttp.send(port, "GET", "/api/x", "X-User: eve");
            assertThat(blocked.status()).as("the bucket is full again").isEqualTo(429);
            assertThat(blocked.header("Retry-After")).isEqualTo("420");
            assertThat(blocked.header("RateLimit")).isEqualTo("\"api-1m\";r=0;t=420");
            assertThat(blocked.header("Content-Type")).startsWith("application/problem+json");
            assertThat(blocked.body()).contains("blocks this client").contains("\"retryAfter\":420");
            assertThat(RawHttp.send(port, "GET", "/api/x", "X-User: frank").status())
                    .as("another key")
                    .isEqualTo(200);

            clock.advance(Duration.ofMinutes(7));
            assertThat(RawHttp.send(port, "GET", "/api/x", "X-User: eve").status())
                    .as("the block ended")
                    .isEqualTo(200);
        } finally {
            limiter.close();
        }
    }

    @Test
    void theAdminServletsResetLiftsABlockFromTheRulesFile(@TempDir Path dir) throws Exception {
        Path rules = Files.writeString(
                dir.resolve("ratelimit.properties"),
                String.join(
                        "\n",
                        "ratelimit.rules[0].name=api",
                        "ratelimit.rules[0].paths=/api/**",
                        "ratelimit.rules[0].key=header:X-User",
                        "ratelimit.rules[0].limits=2/1h",
                        "ratelimit.rules[0].block-for=1d"));
        try (TomcatServer server = TomcatServer.builder()
                .servletClass("ok", Ok.class.getName(), false, "/api/*")
                .servletClass("admin", RateLimitAdminServlet.class.getName(), false, "/admin/*")
                .context(context ->
                        ((Wrapper) context.findChild("admin")).addInitParameter("require-authentication", "false"))
                .filterClass(RateLimitFilter.class.getName())
                .filterParam("config", "file:" + rules)
                .start()) {
            int port = server.port();
            for (int i = 0; i < 2; i++) {
                assertThat(RawHttp.send(port, "GET", "/api/x", "X-User: mallory")
                                .status())
                        .isEqualTo(200);
            }
            assertThat(RawHttp.send(port, "GET", "/api/x", "X-User: mallory").header("Retry-After"))
                    .as("refused: blocked for a day, not the window's 30 minutes")
                    .isEqualTo("86400");
            RawHttp.Response blocked = RawHttp.send(port, "GET", "/api/x", "X-User: mallory");
            assertThat(blocked.status()).isEqualTo(429);
            assertThat(Long.parseLong(blocked.header("Retry-After"))).isBetween(86_300L, 86_400L);
            assertThat(blocked.body()).contains("blocks this client");

            assertThat(RawHttp.send(port, "GET", "/admin/").body())
                    .as("the admin servlet shows the rule's block")
                    .contains("\"mode\":\"HARD\",\"blockFor\":\"PT24H\"");
            RawHttp.Response reset =
                    RawHttp.send(port, "POST", "/admin/keys/api/mallory?reset=true", "Content-Length: 0");
            assertThat(reset.status()).as(reset.body()).isEqualTo(200);
            assertThat(RawHttp.send(port, "GET", "/api/x", "X-User: mallory").status())
                    .as("the reset lifted the block")
                    .isEqualTo(200);
        }
    }
}
