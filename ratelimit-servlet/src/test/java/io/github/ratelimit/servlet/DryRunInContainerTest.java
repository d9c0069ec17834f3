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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code web.xml} filter with {@code ratelimit.shadow=true} in its rules file, in a real Tomcat: a rule that would
 * reject lets every request through and writes no header that claims a limit.
 */
class DryRunInContainerTest {

    public static final class Ok extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.getWriter().write("ok");
        }
    }

    @Test
    void aRuleThatWouldRejectLetsEveryRequestThrough(@TempDir Path dir) throws Exception {
        Path rules = Files.writeString(
                dir.resolve("ratelimit.properties"),
                String.join(
                        "\n",
                        "ratelimit.shadow=true",
                        "ratelimit.rules[0].name=api",
                        "ratelimit.rules[0].paths=/api/**",
                        "ratelimit.rules[0].key=ip",
                        "ratelimit.rules[0].limits=2/1h"));
        try (TomcatServer server = TomcatServer.builder()
                .filterClass(RateLimitFilter.class.getName())
                .filterParam("config", "file:" + rules)
                .servletClass("ok", Ok.class.getName(), false, "/*")
                .start()) {
            for (int i = 0; i < 4; i++) {
                RawHttp.Response response = RawHttp.send(server.port(), "GET", "/api/x");
                assertThat(response.status()).as("request %d", i).isEqualTo(200);
                assertThat(response.headers())
                        .as("request %d", i)
                        .noneMatch(
                                h -> h[0].toLowerCase().contains("ratelimit") || h[0].equalsIgnoreCase("Retry-After"));
            }
        }
    }

    /**
     * A request no window could hold ({@code X-Items: 11} on 10/1m) is answered 413 without the dry run; with it, the
     * servlet answers. (Issue 33, item 3.)
     */
    @Test
    void aRequestNoWindowCouldHoldReachesTheServlet(@TempDir Path dir) throws Exception {
        for (boolean shadow : new boolean[] {true, false}) {
            Path rules = Files.writeString(
                    dir.resolve("ratelimit-" + shadow + ".properties"),
                    String.join(
                            "\n",
                            "ratelimit.shadow=" + shadow,
                            "ratelimit.rules[0].name=items",
                            "ratelimit.rules[0].paths=/api/**",
                            "ratelimit.rules[0].key=ip",
                            "ratelimit.rules[0].limits=10/1m",
                            "ratelimit.rules[0].permits=header:X-Items"));
            try (TomcatServer server = TomcatServer.builder()
                    .filterClass(RateLimitFilter.class.getName())
                    .filterParam("config", "file:" + rules)
                    .servletClass("ok", Ok.class.getName(), false, "/*")
                    .start()) {
                RawHttp.Response response = RawHttp.send(server.port(), "GET", "/api/x", "X-Items: 11");
                assertThat(response.status()).as("shadow=%s", shadow).isEqualTo(shadow ? 200 : 413);
            }
        }
    }
}
