package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.servlet.testing.TomcatServer;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Charging by size and by outcome with the {@code web.xml} filter in a real Tomcat, on the local store and on a real
 * Redis: a URL rule whose {@code permits} reads a header counts a request as that many (413 for more than a window
 * holds), and one with {@code count=statuses:404,5xx} keeps the tokens of those answers only (a servlet that throws
 * counts as 500); exemptions charge nothing.
 */
class ChargingInContainerTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    /** Answers the status its path names: /x/200, /x/404, /x/503; /x/throw throws. */
    public static final class Statuses extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            String last = req.getRequestURI().substring(req.getRequestURI().lastIndexOf('/') + 1);
            if (last.equals("throw")) {
                throw new IllegalStateException("the handler failed");
            }
            if (last.equals("404")) {
                resp.sendError(404);
                return;
            }
            resp.setStatus(Integer.parseInt(last));
            resp.getWriter().write("status " + last);
        }

        @Override
        protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.getWriter().write("accepted");
        }
    }

    private TomcatServer start(Path dir, String store) throws Exception {
        List<String> lines = new ArrayList<>(List.of(
                "ratelimit.rules[0].name=batch",
                "ratelimit.rules[0].paths=/batch",
                "ratelimit.rules[0].key=ip",
                "ratelimit.rules[0].limits=10/1m",
                "ratelimit.rules[0].permits=header:X-Items",
                "ratelimit.rules[1].name=errors",
                "ratelimit.rules[1].paths=/x/**",
                "ratelimit.rules[1].key=ip",
                "ratelimit.rules[1].limits=3/1m",
                "ratelimit.rules[1].count=statuses:404,5xx",
                "ratelimit.rules[1].exempt=198.51.100.0/24",
                "ratelimit.trusted-proxies=127.0.0.1, ::1",
                "ratelimit.exempt=203.0.113.0/24"));
        if (store.equals("redis")) {
            lines.add("ratelimit.redis.url=" + redis.uri());
            lines.add("ratelimit.redis.key-prefix=charging-" + System.nanoTime());
        }
        Path rules = Files.writeString(dir.resolve("ratelimit.properties"), String.join("\n", lines));
        return TomcatServer.builder()
                .filterClass(RateLimitFilter.class.getName())
                .filterParam("config", "file:" + rules)
                .servletClass("statuses", Statuses.class.getName(), false, "/*")
                .start();
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aHeaderCountsTheRequestAsThatMany(String store, @TempDir Path dir) throws Exception {
        try (TomcatServer server = start(dir, store)) {
            assertThat(post(server, "7").status()).isEqualTo(200);
            RawHttp.Response four = post(server, "4");
            assertThat(four.status()).isEqualTo(429);
            assertThat(four.header("Retry-After")).isEqualTo("6");
            assertThat(post(server, "3").status()).isEqualTo(200);
            RawHttp.Response eleven = post(server, "11");
            assertThat(eleven.status()).isEqualTo(413);
            assertThat(eleven.body()).contains("'batch'").contains("at most 10");
            assertThat(eleven.header("Retry-After")).isNull();
            assertThat(post(server, "many").status())
                    .as("no number: the key is missing, rejected")
                    .isEqualTo(429);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void onlyTheCountedStatusesKeepTheirTokens(String store, @TempDir Path dir) throws Exception {
        try (TomcatServer server = start(dir, store)) {
            for (int i = 0; i < 10; i++) {
                assertThat(RawHttp.send(server.port(), "GET", "/x/200").status())
                        .as("200s cost nothing")
                        .isEqualTo(200);
                assertThat(RawHttp.send(server.port(), "GET", "/x/403").status())
                        .as("403s neither")
                        .isEqualTo(403);
            }
            assertThat(RawHttp.send(server.port(), "GET", "/x/404").status()).isEqualTo(404);
            assertThat(RawHttp.send(server.port(), "GET", "/x/503").status()).isEqualTo(503);
            assertThat(RawHttp.send(server.port(), "GET", "/x/throw").status()).isEqualTo(500);
            RawHttp.Response over = RawHttp.send(server.port(), "GET", "/x/200");
            assertThat(over.status()).as("a 404, a 503 and a 500 of 3/1m").isEqualTo(429);
            assertThat(over.body()).contains("'errors'");
        }
    }

    private static RawHttp.Response post(TomcatServer server, String items) throws IOException {
        return RawHttp.send(server.port(), "POST", "/batch", "X-Items: " + items, "Content-Length: 0");
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void exemptClientsAreChargedNothing(String store, @TempDir Path dir) throws Exception {
        try (TomcatServer server = start(dir, store)) {
            for (int i = 0; i < 5; i++) {
                RawHttp.Response batch = RawHttp.send(
                        server.port(),
                        "POST",
                        "/batch",
                        "X-Items: 10",
                        "X-Forwarded-For: 203.0.113.20",
                        "Content-Length: 0");
                assertThat(batch.status()).as("batch %d of an exempt client", i).isEqualTo(200);
                assertThat(batch.header("RateLimit")).isNull();
                assertThat(RawHttp.send(server.port(), "GET", "/x/404", "X-Forwarded-For: 198.51.100.20")
                                .status())
                        .as("errors never limits 198.51.100.0/24")
                        .isEqualTo(404);
            }
            for (int i = 0; i < 3; i++) {
                RawHttp.send(server.port(), "GET", "/x/404", "X-Forwarded-For: 192.0.2.20");
            }
            assertThat(RawHttp.send(server.port(), "GET", "/x/404", "X-Forwarded-For: 192.0.2.20")
                            .status())
                    .as("anyone else")
                    .isEqualTo(429);
        }
    }
}
