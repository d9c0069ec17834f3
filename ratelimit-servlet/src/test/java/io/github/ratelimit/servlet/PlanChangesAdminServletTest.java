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
 * A plan's limits changed at run time through {@link RateLimitAdminServlet}, in a real Tomcat over raw HTTP: a key
 * assigned the plan in the rules file and a call naming it get the new limits at the filter's next request, the plan
 * is listed as changed, limits a rule cannot use and unknown plans are refused, and a DELETE takes it back.
 */
class PlanChangesAdminServletTest {

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
                        "ratelimit.rules[0].limits=1/1h",
                        "ratelimit.plans.gold=2/1h",
                        "ratelimit.plans.free=1/1h",
                        "ratelimit.keys[0].key=header:X-User:alice",
                        "ratelimit.keys[0].plan=gold",
                        "ratelimit.plan-from=header:X-Plan",
                        "ratelimit.plan-header-trusted=true",
                        "ratelimit.plan-rules=api"));
        return TomcatServer.builder()
                .servletClass("ok", Ok.class.getName(), false, "/api/*")
                .servletClass("admin", RateLimitAdminServlet.class.getName(), false, "/admin/*")
                .context(context ->
                        ((Wrapper) context.findChild("admin")).addInitParameter("require-authentication", "false"))
                .filterClass(RateLimitFilter.class.getName())
                .filterParam("config", "file:" + rules)
                .start();
    }

    private static int allowed(int port, String user, String plan, int n) throws Exception {
        int allowed = 0;
        for (int i = 0; i < n; i++) {
            int status = plan == null
                    ? RawHttp.send(port, "GET", "/api/x", "X-User: " + user).status()
                    : RawHttp.send(port, "GET", "/api/x", "X-User: " + user, "X-Plan: " + plan)
                            .status();
            if (status == 200) {
                allowed++;
            }
        }
        return allowed;
    }

    @Test
    void changesListsEnforcesAndTakesBackAPlan(@TempDir Path dir) throws Exception {
        try (TomcatServer server = server(dir)) {
            int port = server.port();
            assertThat(allowed(port, "alice", null, 3)).isEqualTo(2);
            assertThat(allowed(port, "p1", "gold", 3)).isEqualTo(2);

            RawHttp.Response change = RawHttp.send(port, "POST", "/admin/plans/gold?limits=4/1h", "Content-Length: 0");
            assertThat(change.status()).as(change.body()).isEqualTo(200);
            assertThat(change.body())
                    .startsWith("{\"plan\":\"gold\",\"limits\":[\"4/1h\"],\"configuredLimits\":[\"2/1h\"],"
                            + "\"changed\":true,\"changedBy\":\"unknown\",\"changedAt\":")
                    .endsWith("\"appliesTo\":\"this instance\"}");
            assertThat(allowed(port, "alice", null, 5)).as("2 -> 4, additively").isEqualTo(2);
            assertThat(allowed(port, "p1", "gold", 5)).isEqualTo(2);
            assertThat(allowed(port, "p2", "gold", 6)).isEqualTo(4);
            assertThat(RawHttp.send(port, "GET", "/admin/").body())
                    .contains("\"plans\":[", "\"plan\":\"gold\",\"limits\":[\"4/1h\"]");

            RawHttp.Response restore = RawHttp.send(port, "DELETE", "/admin/plans/gold");
            assertThat(restore.status()).isEqualTo(200);
            assertThat(restore.body()).contains("\"changed\":false", "\"restored\":true");
            assertThat(allowed(port, "p3", "gold", 4)).isEqualTo(2);
        }
    }

    @Test
    void refusesLimitsARuleCannotUseAndUnknownPlans(@TempDir Path dir) throws Exception {
        try (TomcatServer server = server(dir)) {
            int port = server.port();
            RawHttp.Response twoOnOneWindow =
                    RawHttp.send(port, "POST", "/admin/plans/gold?limits=5/1s,9/1s", "Content-Length: 0");
            assertThat(twoOnOneWindow.status()).isEqualTo(400);
            assertThat(twoOnOneWindow.body()).contains("plan 'gold' (from the call, ratelimit.plan-from)");
            RawHttp.Response unknown = RawHttp.send(port, "POST", "/admin/plans/nope?limits=1/1s", "Content-Length: 0");
            assertThat(unknown.status()).isEqualTo(404);
            assertThat(unknown.body()).contains("known plans: [free, gold]");
            assertThat(RawHttp.send(port, "GET", "/admin/plans/gold").body()).contains("\"changed\":false");
            assertThat(allowed(port, "alice", null, 3)).isEqualTo(2);
        }
    }
}
