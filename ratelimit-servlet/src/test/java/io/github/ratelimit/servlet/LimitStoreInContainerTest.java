package io.github.ratelimit.servlet;

import io.github.ratelimit.Limit;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.servlet.testing.TomcatServer;
import io.github.ratelimit.store.RedisLimitStore;
import io.github.ratelimit.testing.redis.RedisServer;
import jakarta.servlet.ServletContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Per-key limits in Redis for a {@code web.xml} application: one property switches them on, and the application's
 * own code changes them, and resets keys, through the objects the filter publishes in the servlet context.
 */
class LimitStoreInContainerTest {

    public static final class Ok extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.getWriter().write("ok");
        }
    }

    private static <T> T attribute(ServletContext context, String prefix, Class<T> type) {
        List<String> names = Collections.list(context.getAttributeNames()).stream().filter(n -> n.startsWith(prefix + "."))
                .toList();
        assertThat(names).as("attributes named %s.<filter>", prefix).hasSize(1);
        return type.cast(context.getAttribute(names.get(0)));
    }

    private static int get(TomcatServer server, String user) throws IOException {
        return RawHttp.send(server.port(), "GET", "/x", "X-User: " + user).status();
    }

    @Test
    void switchedOnByOnePropertyAndChangedWithoutSpring(@TempDir Path dir) throws Exception {
        try (RedisServer redis = RedisServer.start()) {
            Path rules = Files.writeString(dir.resolve("ratelimit.properties"), String.join("\n",
                    "ratelimit.redis.url=" + redis.uri(),
                    "ratelimit.limit-store.enabled=true",
                    "ratelimit.plans.tiny=1/1h",
                    "ratelimit.rules[0].name=api",
                    "ratelimit.rules[0].paths=/**",
                    "ratelimit.rules[0].key=header:X-User",
                    "ratelimit.rules[0].limits=100/1m"));
            try (TomcatServer server = TomcatServer.builder()
                    .filterClass(RateLimitFilter.class.getName()).filterParam("config", "file:" + rules)
                    .servletClass("ok", Ok.class.getName(), false, "/*").start()) {
                ServletContext context = server.context().getServletContext();
                RedisLimitStore limits = attribute(context, RateLimitFilter.LIMIT_STORE_ATTRIBUTE, RedisLimitStore.class);
                RateLimiter limiter = attribute(context, RateLimitFilter.LIMITER_ATTRIBUTE, RateLimiter.class);

                assertThat(get(server, "alice")).isEqualTo(200);
                limits.setLimits("api", "alice", List.of(Limit.parse("2/1h")), "ops-servlet");
                // The live bucket shrinks to the new capacity: 2 calls left, then 429.
                assertThat(get(server, "alice")).isEqualTo(200);
                assertThat(get(server, "alice")).isEqualTo(200);
                assertThat(get(server, "alice")).isEqualTo(429);
                assertThat(get(server, "bob")).as("other keys keep the rule's limits").isEqualTo(200);

                limits.assignPlan("api", "bob", "tiny", "ops-servlet");
                assertThat(get(server, "bob")).isEqualTo(200);
                assertThat(get(server, "bob")).as("plan tiny: 1/1h").isEqualTo(429);

                limiter.reset("api", "alice");
                assertThat(get(server, "alice")).as("reset: a full bucket again").isEqualTo(200);
                assertThat(limits.get("api", "alice").orElseThrow().changedBy()).isEqualTo("ops-servlet");
            }
        }
    }

    @Test
    void refusesToStartWithoutRedis() {
        assertThatThrownBy(() -> RulesFile.parse(java.util.Map.of("ratelimit.limit-store.enabled", "true"),
                "rules.properties", getClass().getClassLoader()))
                .hasMessageContaining("rules.properties")
                .hasMessageContaining("ratelimit.limit-store.enabled=true keeps per-key limits in the store's Redis, "
                        + "but the store is LocalBucketStore");
    }
}
