package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.redis.LimitAdmin;
import io.github.ratelimit.redis.RedisLimitProvider;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.servlet.testing.TomcatServer;
import io.github.ratelimit.testing.redis.RedisServer;
import jakarta.servlet.ServletContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
        List<String> names = Collections.list(context.getAttributeNames()).stream()
                .filter(n -> n.startsWith(prefix + "."))
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
            Path rules = Files.writeString(
                    dir.resolve("ratelimit.properties"),
                    String.join(
                            "\n",
                            "ratelimit.redis.url=" + redis.uri(),
                            "ratelimit.limit-store.enabled=true",
                            "ratelimit.plans.tiny=1/1h",
                            "ratelimit.plans.twice=5/1s, 10/1s",
                            "ratelimit.rules[1].name=login",
                            "ratelimit.rules[1].paths=/login",
                            "ratelimit.rules[1].key=ip",
                            "ratelimit.rules[1].limits=5/1m",
                            "ratelimit.rules[1].phase=before-authentication",
                            "ratelimit.rules[0].name=api",
                            "ratelimit.rules[0].paths=/**",
                            "ratelimit.rules[0].key=header:X-User",
                            "ratelimit.rules[0].limits=100/1m"));
            try (TomcatServer server = TomcatServer.builder()
                    .filterClass(RateLimitFilter.class.getName())
                    .filterParam("config", "file:" + rules)
                    .servletClass("ok", Ok.class.getName(), false, "/*")
                    .start()) {
                ServletContext context = server.context().getServletContext();
                LimitAdmin admin = attribute(context, RateLimitFilter.ADMIN_ATTRIBUTE, LimitAdmin.class);
                RedisLimitProvider limits =
                        attribute(context, RateLimitFilter.LIMIT_STORE_ATTRIBUTE, RedisLimitProvider.class);
                attribute(context, RateLimitFilter.LIMITER_ATTRIBUTE, RateLimiter.class);

                assertThat(get(server, "alice")).isEqualTo(200);
                admin.setLimits("api", "alice", "2/1h", "ops-servlet");
                // The live bucket shrinks to the new capacity: 2 calls left, then 429.
                assertThat(get(server, "alice")).isEqualTo(200);
                assertThat(get(server, "alice")).isEqualTo(200);
                assertThat(get(server, "alice")).isEqualTo(429);
                assertThat(get(server, "bob"))
                        .as("other keys keep the rule's limits")
                        .isEqualTo(200);

                admin.assignPlan("api", "bob", "tiny", "ops-servlet");
                assertThat(get(server, "bob")).isEqualTo(200);
                assertThat(get(server, "bob")).as("plan tiny: 1/1h").isEqualTo(429);

                admin.reset("api", "alice", "ops-servlet");
                assertThat(get(server, "alice"))
                        .as("reset: a full bucket again")
                        .isEqualTo(200);
                assertThat(limits.get("api", "alice").orElseThrow().changedBy()).isEqualTo("ops-servlet");

                // The same checks as the Spring Boot endpoint's: every rule of the rules file is known, the others not.
                assertThatThrownBy(() -> admin.setLimits("nope", "alice", "1/1h", "ops"))
                        .isInstanceOf(LimitAdmin.UnknownRuleException.class)
                        .hasMessageContaining("known rules: [api, login]");
                admin.reset("login", "203.0.113.7", "ops");
                assertThatThrownBy(() -> admin.setLimits("api", "alice", "5/1s,10/1s", "ops"))
                        .hasMessageContaining("two limits share the window 1s");
                assertThatThrownBy(() -> admin.assignPlan("api", "alice", "twice", "ops"))
                        .hasMessageContaining("plan 'twice'")
                        .hasMessageContaining("two limits share the window 1s");
                // A key holding a slash, reached by the address a listing gives.
                assertThat(get(server, "a/b")).isEqualTo(200);
                admin.setLimits("api", "a/b", "1/1h", "ops");
                String address = admin.list("api", null, 100).entries().stream()
                        .filter(e -> e.key().equals("a/b"))
                        .findFirst()
                        .map(e -> LimitAdmin.address(e.key()))
                        .orElseThrow();
                assertThat(address).startsWith(LimitAdmin.ADDRESS_PREFIX);
                assertThat(get(server, "a/b")).as("1/1h: the one token left").isEqualTo(200);
                assertThat(get(server, "a/b")).isEqualTo(429);
                admin.reset("api", address, "ops");
                assertThat(get(server, "a/b")).as("reset by its address").isEqualTo(200);
                assertThat(admin.remove("api", address, "ops")).isTrue();
            }
        }
    }

    @Test
    void refusesToStartWithoutRedis() {
        assertThatThrownBy(() -> RulesFile.parse(
                        java.util.Map.of("ratelimit.limit-store.enabled", "true"),
                        "rules.properties",
                        getClass().getClassLoader()))
                .hasMessageContaining("rules.properties")
                .hasMessageContaining("ratelimit.limit-store.enabled=true keeps per-key limits in the store's Redis, "
                        + "but the store is LocalBucketStore");
    }
}
