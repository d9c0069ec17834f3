package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.redis.LimitAdmin;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.servlet.testing.TomcatServer;
import jakarta.servlet.ServletContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@code web.xml} application with the filter declared twice, once per phase, from one rules file, in a real
 * Tomcat: each filter builds a limiter and a store of its own, and the admin either filter publishes reaches the
 * rules of both (before, a reset of the other phase's rule did nothing and returned normally).
 */
class TwoPhaseAdminInContainerTest {

    public static final class Ok extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.getWriter().write("ok");
        }
    }

    private static int get(TomcatServer server, String path, String user) throws IOException {
        return RawHttp.send(server.port(), "GET", path, "X-User: " + user).status();
    }

    private static void exhaust(TomcatServer server, String path, String user) throws IOException {
        assertThat(get(server, path, user)).isEqualTo(200);
        assertThat(get(server, path, user)).isEqualTo(200);
        assertThat(get(server, path, user)).as("%s: 2/1h spent", path).isEqualTo(429);
    }

    @Test
    void theAdminOfEitherPhasesFilterResetsTheRulesOfBoth(@TempDir Path dir) throws Exception {
        Path rules = Files.writeString(
                dir.resolve("ratelimit.properties"),
                String.join(
                        "\n",
                        "ratelimit.rules[0].name=login",
                        "ratelimit.rules[0].paths=/login",
                        "ratelimit.rules[0].key=ip",
                        "ratelimit.rules[0].limits=2/1h",
                        "ratelimit.rules[0].phase=before-authentication",
                        "ratelimit.rules[1].name=api",
                        "ratelimit.rules[1].paths=/api/**",
                        "ratelimit.rules[1].key=header:X-User",
                        "ratelimit.rules[1].limits=2/1h"));
        try (TomcatServer server = TomcatServer.builder()
                .filterClass(RateLimitFilter.class.getName())
                .filterParam("config", "file:" + rules)
                .filterParam("phase", "after-authentication")
                .context(context -> {
                    FilterDef before = new FilterDef();
                    before.setFilterName("rateLimitBefore");
                    before.setFilterClass(RateLimitFilter.class.getName());
                    before.addInitParameter("config", "file:" + rules);
                    before.addInitParameter("phase", "before-authentication");
                    context.addFilterDef(before);
                    FilterMap map = new FilterMap();
                    map.setFilterName("rateLimitBefore");
                    map.addURLPattern("/*");
                    context.addFilterMapBefore(map);
                })
                .servletClass("ok", Ok.class.getName(), false, "/*")
                .start()) {
            ServletContext context = server.context().getServletContext();
            for (String filter : new String[] {"rateLimit", "rateLimitBefore"}) {
                LimitAdmin admin = (LimitAdmin) context.getAttribute(RateLimitFilter.ADMIN_ATTRIBUTE + "." + filter);
                assertThat(admin.ruleNames()).as(filter).containsExactly("api", "login");

                exhaust(server, "/login", "x");
                admin.reset("login", "127.0.0.1", "ops");
                assertThat(get(server, "/login", "x"))
                        .as("%s's admin resets the before-authentication rule", filter)
                        .isEqualTo(200);
                exhaust(server, "/api/x", "alice");
                admin.reset("api", "alice", "ops");
                assertThat(get(server, "/api/x", "alice"))
                        .as("%s's admin resets the after-authentication rule", filter)
                        .isEqualTo(200);
                admin.reset("login", "127.0.0.1", "ops");
                admin.reset("api", "alice", "ops");
            }
        }
    }
}
