package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimit;
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
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Every method that reaches a servlet's code is counted by the rules meant for it, in a real Tomcat: HEAD is
 * served by {@code doGet}, so it counts under a GET rule and a {@code doGet} annotation; other methods reaching
 * a servlet's {@code service()} count under its type's annotations; method names match regardless of case.
 */
class MethodsInContainerTest {

    private final ManualClock clock = new ManualClock();
    private TomcatServer server;

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    /** Limited on doGet only; HEAD reaches doGet through HttpServlet. */
    public static final class AnnotatedGet extends HttpServlet {
        @Override
        @RateLimit(name = "annotated-get", perHour = 3)
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.getWriter().write("ok");
        }
    }

    /** Limited as a type, and answering every method itself. */
    @RateLimit(name = "any-method", perHour = 3)
    public static final class AnyMethod extends HttpServlet {
        @Override
        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.getWriter().write("served " + req.getMethod());
        }
    }

    public static final class Plain extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.getWriter().write("ok");
        }
    }

    private void start() throws Exception {
        RateLimiter limiter = RateLimiter.builder().timeMeter(clock).build();
        Rule getOnly = Rule.builder("get-only").limits("5/1h").build();
        server = TomcatServer.builder()
                .filter(RateLimitFilter.builder(limiter)
                        .urlRule(getOnly, Set.of("GET"), List.of("/plain"))
                        .headers(Set.of(HeaderStyle.X_RATELIMIT))
                        .rejectionHandler(new ProblemDetailsRejectionHandler(429))
                        .annotations(true)
                        .build())
                .servletClass("annotated", AnnotatedGet.class.getName(), true, "/annotated")
                .servletClass("any", AnyMethod.class.getName(), true, "/any")
                .servletClass("plain", Plain.class.getName(), true, "/plain")
                .start();
    }

    private int admitted(String path, List<String> methods) throws IOException {
        int admitted = 0;
        for (String method : methods) {
            int status = RawHttp.send(server.port(), method, path).status();
            assertThat(status).as("%s %s", method, path).isNotEqualTo(500);
            if (status != 429) {
                admitted++;
            }
        }
        return admitted;
    }

    @Test
    void headCountsUnderAGetUrlRule() throws Exception {
        start();
        assertThat(admitted("/plain", List.of("HEAD", "HEAD", "HEAD", "HEAD", "HEAD", "HEAD", "HEAD", "HEAD")))
                .isEqualTo(5);
        assertThat(admitted("/plain", List.of("GET"))).isZero();
    }

    @Test
    void headCountsUnderTheAnnotationOnDoGet() throws Exception {
        start();
        assertThat(admitted("/annotated", java.util.Collections.nCopies(30, "HEAD")))
                .isEqualTo(3);
        assertThat(admitted("/annotated", List.of("GET"))).isZero();
    }

    @Test
    void anyMethodReachingServiceCountsUnderTheTypesAnnotation() throws Exception {
        start();
        assertThat(admitted("/any", List.of("PROPFIND", "get", "BREW", "PURGE", "X")))
                .isEqualTo(3);
    }

    @Test
    void methodNamesMatchRegardlessOfCase() throws Exception {
        start();
        assertThat(admitted("/plain", List.of("get", "Get", "gEt", "head", "GET", "GET", "GET")))
                .isEqualTo(5);
    }
}
