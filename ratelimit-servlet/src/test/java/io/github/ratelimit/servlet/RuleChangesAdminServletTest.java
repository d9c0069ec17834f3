package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.servlet.testing.TomcatServer;
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
 * A rule's own limits and mode changed at run time through {@link RateLimitAdminServlet}, in a real Tomcat over raw
 * HTTP: checked as at start-up (400 with the message), listed as changed, enforced by the filter's next request, and
 * taken back by a DELETE.
 */
class RuleChangesAdminServletTest {

    public static final class Ok extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.getWriter().write("ok");
        }
    }

    private static TomcatServer server(Path dir) throws Exception {
        Path rules = Files.writeString(
                dir.resolve("ratelimit.properties"),
                String.join(
                        "\n",
                        "ratelimit.rules[0].name=api",
                        "ratelimit.rules[0].paths=/api/**",
                        "ratelimit.rules[0].key=header:X-User",
                        "ratelimit.rules[0].limits=1/1h"));
        return TomcatServer.builder()
                .servletClass("ok", Ok.class.getName(), false, "/api/*")
                .servletClass("admin", RateLimitAdminServlet.class.getName(), false, "/admin/*")
                .context(context ->
                        ((Wrapper) context.findChild("admin")).addInitParameter("require-authentication", "false"))
                .filterClass(RateLimitFilter.class.getName())
                .filterParam("config", "file:" + rules)
                .start();
    }

    private static int call(int port, String user) throws Exception {
        return RawHttp.send(port, "GET", "/api/x", "X-User: " + user).status();
    }

    @Test
    void changesListsEnforcesAndTakesBackARule(@TempDir Path dir) throws Exception {
        try (TomcatServer server = server(dir)) {
            int port = server.port();
            assertThat(call(port, "a")).isEqualTo(200);
            assertThat(call(port, "a")).isEqualTo(429);

            RawHttp.Response change = RawHttp.send(port, "POST", "/admin/rules/api?limits=3/1h", "Content-Length: 0");
            assertThat(change.status()).as(change.body()).isEqualTo(200);
            assertThat(change.body())
                    .startsWith("{\"rule\":\"api\",\"limits\":[\"3/1h\"],\"mode\":\"HARD\","
                            + "\"configuredLimits\":[\"1/1h\"],\"configuredMode\":\"HARD\",\"changed\":true,"
                            + "\"changedBy\":\"unknown\",\"changedAt\":")
                    .endsWith("\"appliesTo\":\"this instance\"}");
            assertThat(call(port, "a")).as("1 -> 3, additively").isEqualTo(200);
            assertThat(call(port, "a")).isEqualTo(200);
            assertThat(call(port, "a")).isEqualTo(429);
            assertThat(RawHttp.send(port, "GET", "/admin/").body())
                    .contains("\"limits\":[\"3/1h\"]", "\"configuredLimits\":[\"1/1h\"]", "\"changedBy\":\"unknown\"");

            RawHttp.Response shadow = RawHttp.send(port, "POST", "/admin/rules/api?mode=shadow", "Content-Length: 0");
            assertThat(shadow.status()).as(shadow.body()).isEqualTo(200);
            assertThat(call(port, "a")).as("SHADOW: recorded, not refused").isEqualTo(200);

            RawHttp.Response restore = RawHttp.send(port, "DELETE", "/admin/rules/api");
            assertThat(restore.status()).isEqualTo(200);
            assertThat(restore.body()).contains("\"changed\":false", "\"restored\":true");
            assertThat(call(port, "b")).isEqualTo(200);
            assertThat(call(port, "b")).isEqualTo(429);
        }
    }

    @Test
    void refusesWhatTheRuleCannotTake(@TempDir Path dir) throws Exception {
        try (TomcatServer server = server(dir)) {
            int port = server.port();
            RawHttp.Response twoOnOneWindow =
                    RawHttp.send(port, "POST", "/admin/rules/api?limits=5/1s,9/1s", "Content-Length: 0");
            assertThat(twoOnOneWindow.status()).isEqualTo(400);
            assertThat(twoOnOneWindow.body()).contains("two limits share the window 1s");
            RawHttp.Response soft = RawHttp.send(port, "POST", "/admin/rules/api?mode=SOFT", "Content-Length: 0");
            assertThat(soft.status()).isEqualTo(400);
            assertThat(soft.body()).contains("only HARD and SHADOW change into each other");
            assertThat(RawHttp.send(port, "POST", "/admin/rules/nope?limits=1/1s", "Content-Length: 0")
                            .status())
                    .isEqualTo(404);
            assertThat(RawHttp.send(port, "GET", "/admin/rules/api").body()).contains("\"changed\":false");
            assertThat(call(port, "c")).isEqualTo(200);
            assertThat(call(port, "c")).isEqualTo(429);
        }
    }
}
