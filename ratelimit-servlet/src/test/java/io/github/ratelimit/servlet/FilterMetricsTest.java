package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.servlet.testing.TomcatServer;
import io.github.ratelimit.testing.redis.RedisServer;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.catalina.Wrapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A web.xml filter with Micrometer on the class path records its decisions in Micrometer's global registry, and the
 * admin servlet reads the store's latency from there.
 */
class FilterMetricsTest {

    public static final class Ok extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.getWriter().write("ok");
        }
    }

    @Test
    void recordsDecisionsInTheGlobalRegistry(@TempDir Path dir) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Metrics.addRegistry(registry);
        try {
            Path rules = Files.writeString(
                    dir.resolve("ratelimit.properties"),
                    String.join(
                            "\n",
                            "ratelimit.rules[0].name=metered",
                            "ratelimit.rules[0].paths=/**",
                            "ratelimit.rules[0].limits=2/1h"));
            try (TomcatServer server = TomcatServer.builder()
                    .filterClass(RateLimitFilter.class.getName())
                    .filterParam("config", "file:" + rules)
                    .servletClass("ok", Ok.class.getName(), true, "/*")
                    .start()) {
                for (int i = 0; i < 3; i++) {
                    RawHttp.send(server.port(), "GET", "/x");
                }
            }
            assertThat(registry.get("ratelimit.requests")
                            .tags("rule", "metered", "outcome", "allowed")
                            .counter()
                            .count())
                    .isEqualTo(2);
            assertThat(registry.get("ratelimit.requests")
                            .tags("rule", "metered", "outcome", "rejected")
                            .counter()
                            .count())
                    .isEqualTo(1);
        } finally {
            Metrics.removeRegistry(registry);
        }
    }

    /**
     * On Redis, the admin servlet's summary gives the store's recent 99th percentile latency from the timer the
     * filter's metrics record, as Boot's {@code ratelimits} endpoint does; before any call, none.
     */
    @Test
    void theAdminSummaryShowsTheRedisStoresLatency(@TempDir Path dir) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Metrics.addRegistry(registry);
        try (RedisServer redis = RedisServer.start()) {
            Path rules = Files.writeString(
                    dir.resolve("ratelimit.properties"),
                    String.join(
                            "\n",
                            "ratelimit.store=redis",
                            "ratelimit.redis.url=" + redis.uri(),
                            "ratelimit.rules[0].name=metered",
                            "ratelimit.rules[0].paths=/api/**",
                            "ratelimit.rules[0].limits=100/1h"));
            try (TomcatServer server = TomcatServer.builder()
                    .filterClass(RateLimitFilter.class.getName())
                    .filterParam("config", "file:" + rules)
                    .servletClass("ok", Ok.class.getName(), true, "/api/*")
                    .servletClass("admin", RateLimitAdminServlet.class.getName(), false, "/admin/*")
                    .context(context ->
                            ((Wrapper) context.findChild("admin")).addInitParameter("require-authentication", "false"))
                    .start()) {
                assertThat(RawHttp.send(server.port(), "GET", "/admin/").body())
                        .contains("\"type\":\"JedisBucketStore\"")
                        .doesNotContain("latencyP99Millis");
                for (int i = 0; i < 5; i++) {
                    assertThat(RawHttp.send(server.port(), "GET", "/api/x").status())
                            .isEqualTo(200);
                }
                assertThat(RawHttp.send(server.port(), "GET", "/admin/").body())
                        .containsPattern("\"type\":\"JedisBucketStore\",.*\"latencyP99Millis\":[0-9.]+");
            }
        } finally {
            Metrics.removeRegistry(registry);
        }
    }
}
