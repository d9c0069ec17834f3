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
import java.util.Map;
import java.util.function.Consumer;
import org.apache.catalina.Context;
import org.apache.catalina.Wrapper;
import org.apache.catalina.startup.Tomcat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RateLimitAdminServlet} in a real Tomcat over raw HTTP: what it answers without a caller the container
 * authenticated, without a filter, with another filter's name, and (with authentication lifted) its JSON for the
 * rules, the most-rejected keys, health, a reset, HEAD and requests it cannot read. The sample's tests cover the
 * container's security and Redis.
 */
class AdminServletInContainerTest {

    public static final class Ok extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.getWriter().write("ok");
        }
    }

    static TomcatServer server(Path dir, boolean withFilter, Map<String, String> adminParams) throws Exception {
        return server(dir, withFilter, adminParams, tomcat -> {}, context -> {});
    }

    static TomcatServer server(
            Path dir,
            boolean withFilter,
            Map<String, String> adminParams,
            Consumer<Tomcat> serverCustomizer,
            Consumer<Context> contextCustomizer)
            throws Exception {
        Path rules = Files.writeString(
                dir.resolve("ratelimit.properties"),
                String.join(
                        "\n",
                        "ratelimit.rules[0].name=api",
                        "ratelimit.rules[0].paths=/api/**",
                        "ratelimit.rules[0].key=header:X-User",
                        "ratelimit.rules[0].limits=2/1h"));
        TomcatServer.Builder b = TomcatServer.builder()
                .servletClass("ok", Ok.class.getName(), false, "/api/*")
                .servletClass("admin", RateLimitAdminServlet.class.getName(), false, "/admin/*")
                .context(context -> adminParams.forEach(((Wrapper) context.findChild("admin"))::addInitParameter))
                .context(contextCustomizer)
                .server(serverCustomizer);
        if (withFilter) {
            b.filterClass(RateLimitFilter.class.getName()).filterParam("config", "file:" + rules);
        }
        return b.start();
    }

    private static final Map<String, String> OPEN = Map.of("require-authentication", "false");

    /** Open, and showing the keys of the most-rejected list. */
    private static final Map<String, String> OPEN_SHOWING_KEYS =
            Map.of("require-authentication", "false", "show-values", "always");

    @Test
    void answersOnlyCallersTheContainerAuthenticated(@TempDir Path dir) throws Exception {
        try (TomcatServer server = server(dir, true, Map.of())) {
            for (String path : new String[] {"/admin", "/admin/", "/admin/health", "/admin/keys/api/x"}) {
                RawHttp.Response r = RawHttp.send(server.port(), "GET", path);
                assertThat(r.status()).as(path).isEqualTo(403);
                assertThat(r.header("Content-Type")).startsWith("application/problem+json");
                assertThat(r.body())
                        .contains("\"title\":\"Forbidden\",\"status\":403")
                        .contains("answers authenticated callers only");
            }
        }
    }

    @Test
    void showsRulesRejectedKeysAndHealthAndResetsAKey(@TempDir Path dir) throws Exception {
        try (TomcatServer server = server(dir, true, OPEN_SHOWING_KEYS)) {
            int port = server.port();
            for (int i = 0; i < 3; i++) {
                RawHttp.send(port, "GET", "/api/x", "X-User: mallory");
            }
            assertThat(RawHttp.send(port, "GET", "/api/x", "X-User: mallory").status())
                    .isEqualTo(429);
            RawHttp.Response summary = RawHttp.send(port, "GET", "/admin/");
            assertThat(summary.status()).isEqualTo(200);
            assertThat(summary.header("Content-Type")).startsWith("application/json");
            assertThat(summary.header("Cache-Control")).isEqualTo("no-store");
            assertThat(summary.body())
                    .startsWith("{\"rules\":[{\"name\":\"api\",\"publicName\":\"api\"")
                    .contains("\"limits\":[\"2/1h\"]", "\"mode\":\"HARD\"")
                    .contains("\"stores\":[{\"filter\":\"rateLimit\",\"type\":\"LocalBucketStore\"}]")
                    .contains("\"topRejectedKeys\":[{\"rule\":\"api\",\"key\":\"mallory\",\"count\":2,\"error\":0}]");
            assertThat(RawHttp.send(port, "GET", "/admin/rejected?count=5").body())
                    .isEqualTo(
                            "{\"topRejectedKeys\":[{\"rule\":\"api\",\"key\":\"mallory\",\"count\":2,\"error\":0}]}");
            assertThat(RawHttp.send(port, "GET", "/admin/health").body())
                    .isEqualTo("{\"status\":\"UP\",\"stores\":"
                            + "[{\"filter\":\"rateLimit\",\"type\":\"LocalBucketStore\",\"status\":\"UP\"}]}");
            RawHttp.Response head = RawHttp.send(port, "HEAD", "/admin/health");
            assertThat(head.status()).isEqualTo(200);
            assertThat(head.body()).isEmpty();

            RawHttp.Response reset =
                    RawHttp.send(port, "POST", "/admin/keys/api/mallory?reset=true", "Content-Length: 0");
            assertThat(reset.body())
                    .isEqualTo("{\"rule\":\"api\",\"key\":\"mallory\",\"address\":\"mallory\"," + "\"reset\":true}");
            assertThat(RawHttp.send(port, "GET", "/api/x", "X-User: mallory").status())
                    .isEqualTo(200);
        }
    }

    @Test
    void refusesChangesABrowserSendsFromAnotherSite(@TempDir Path dir) throws Exception {
        try (TomcatServer server = server(dir, true, OPEN)) {
            int port = server.port();
            for (int i = 0; i < 3; i++) {
                RawHttp.send(port, "GET", "/api/x", "X-User: mallory");
            }
            for (String header : new String[] {
                "Origin: https://evil.example",
                "Origin: null",
                "Origin: http://127.0.0.1:1",
                "Sec-Fetch-Site: cross-site",
                "Sec-Fetch-Site: same-site"
            }) {
                RawHttp.Response forged =
                        RawHttp.send(port, "POST", "/admin/keys/api/mallory?reset=true", "Content-Length: 0", header);
                assertThat(forged.status()).as(header).isEqualTo(403);
                assertThat(forged.body()).as(header).contains("from another site is refused");
                assertThat(RawHttp.send(port, "DELETE", "/admin/keys/api/mallory", header)
                                .status())
                        .as(header)
                        .isEqualTo(403);
            }
            assertThat(RawHttp.send(port, "GET", "/api/x", "X-User: mallory").status())
                    .as("still limited")
                    .isEqualTo(429);
            assertThat(RawHttp.send(port, "GET", "/admin/health", "Origin: https://evil.example")
                            .status())
                    .as("reading is no change")
                    .isEqualTo(200);
            RawHttp.Response sameSite = RawHttp.send(
                    port,
                    "POST",
                    "/admin/keys/api/mallory?reset=true",
                    "Content-Length: 0",
                    "Origin: http://127.0.0.1:" + port,
                    "Sec-Fetch-Site: same-origin");
            assertThat(sameSite.status())
                    .as("a page of this site: %s", sameSite.body())
                    .isEqualTo(200);
            assertThat(RawHttp.send(port, "GET", "/api/x", "X-User: mallory").status())
                    .isEqualTo(200);
        }
    }

    @Test
    void answersRequestsItCannotReadWith400Or404NeverA500(@TempDir Path dir) throws Exception {
        try (TomcatServer server = server(dir, true, OPEN)) {
            int port = server.port();
            RawHttp.Response encoding = RawHttp.send(port, "GET", "/admin/rejected?count=%zz");
            assertThat(encoding.status()).as(encoding.body()).isIn(200, 400);
            String form = "reset=true&key=" + "%C3%28"; // not UTF-8
            RawHttp.Response malformed = RawHttp.sendBytes(
                    port,
                    ("POST /admin/keys/api HTTP/1.1\r\nHost: localhost\r\n"
                                    + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: "
                                    + form.length()
                                    + "\r\nConnection: close\r\n\r\n" + form)
                            .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            assertThat(malformed.status()).as(malformed.body()).isIn(200, 400);
            RawHttp.Response unknownRule = RawHttp.send(
                    port, "POST", "/admin/keys/" + "r".repeat(5000) + "/k?reset=true", "Content-Length: 0");
            assertThat(unknownRule.status()).isEqualTo(404);
            assertThat(unknownRule.body()).contains("(5000 characters) is not known here; known rules: [api]");
        }
    }

    @Test
    void answers503UntilAFilterHasStartedOrForAnotherFiltersName(@TempDir Path dir) throws Exception {
        try (TomcatServer server = server(dir, false, OPEN)) {
            RawHttp.Response r = RawHttp.send(server.port(), "GET", "/admin/");
            assertThat(r.status()).isEqualTo(503);
            assertThat(r.body()).contains("no RateLimitFilter configured from a rules file has started");
        }
        try (TomcatServer server =
                server(dir, true, Map.of("require-authentication", "false", "filter-name", "other"))) {
            RawHttp.Response r = RawHttp.send(server.port(), "GET", "/admin/");
            assertThat(r.status()).isEqualTo(503);
            assertThat(r.body()).contains("no RateLimitFilter named 'other' has started");
        }
    }
}
