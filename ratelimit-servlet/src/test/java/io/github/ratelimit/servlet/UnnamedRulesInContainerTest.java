package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.RateLimitHeaders.HeaderStyle;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.servlet.testing.TomcatServer;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.RateLimitFields;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An unnamed {@code @RateLimit} rule is named after its class and method for operators, but a client of a real
 * Tomcat never reads that name: not in {@code RateLimit-Policy}, {@code RateLimit} or any other header, nor in the
 * problem+json body. What it reads instead is the same on every response and every instance, and differs between
 * the rules of one response.
 */
class UnnamedRulesInContainerTest {

    private final ManualClock clock = new ManualClock();
    private final List<TomcatServer> servers = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (TomcatServer server : servers) {
            server.close();
        }
    }

    /** Two unnamed rules on one request: the type's and {@code doGet}'s. */
    @RateLimit(perHour = 100)
    public static final class QuarterlyFiguresServlet extends HttpServlet {
        @Override
        @RateLimit(perHour = 2)
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.getWriter().write("figures");
        }
    }

    private int start() throws Exception {
        RateLimiter limiter = RateLimiter.builder().timeMeter(clock).build();
        TomcatServer server = TomcatServer.builder()
                .filter(RateLimitFilter.builder(limiter)
                        .headers(EnumSet.allOf(HeaderStyle.class))
                        .rejectionHandler(new ProblemDetailsRejectionHandler(429))
                        .annotations(true)
                        .build())
                .servletClass("figures", QuarterlyFiguresServlet.class.getName(), true, "/figures")
                .start();
        servers.add(server);
        return server.port();
    }

    /** Every header a client reads, and the body, none naming the servlet's class or method. */
    private static RawHttp.Response get(int port) throws IOException {
        RawHttp.Response response = RawHttp.send(port, "GET", "/figures");
        for (String[] header : response.headers()) {
            assertThat(header[1])
                    .as("header %s", header[0])
                    .doesNotContain("Quarterly")
                    .doesNotContain("doGet")
                    .doesNotContain("#");
        }
        assertThat(response.body())
                .doesNotContain("Quarterly")
                .doesNotContain("doGet")
                .doesNotContain("#");
        return response;
    }

    private static List<String> items(RawHttp.Response response) {
        List<String> policy = new ArrayList<>(RateLimitFields.parse(response.header("RateLimit-Policy"), "q", "w")
                .keySet());
        assertThat(RateLimitFields.parse(response.header("RateLimit"), "r", "t").keySet())
                .containsExactlyElementsOf(policy);
        return policy;
    }

    @Test
    void clientsNeverReadTheClassOrMethodOfAnUnnamedRule() throws Exception {
        int port = start();
        RawHttp.Response first = get(port);
        assertThat(first.status()).isEqualTo(200);
        List<String> items = items(first);
        assertThat(items)
                .as("the type's rule and doGet's, told apart")
                .hasSize(2)
                .doesNotHaveDuplicates();
        assertThat(items(get(port))).as("the same on every response").isEqualTo(items);
        RawHttp.Response rejected = get(port);
        assertThat(rejected.status()).isEqualTo(429);
        assertThat(items(rejected)).isEqualTo(items);
        // The body names the rule as the headers do.
        String doGetRule = items.get(1).substring(0, items.get(1).lastIndexOf("-1h"));
        assertThat(rejected.body()).contains("Rate limit of rule '" + doGetRule + "' exceeded");
        assertThat(items(get(start()))).as("the same on another instance").isEqualTo(items);
    }
}
