package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.servlet.testing.TomcatServer;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Charging what a request used with the {@code web.xml} filter in a real Tomcat, on the local store and on a real
 * Redis: a URL rule with {@code charge=response-header:X-Tokens-Used} admits a request while tokens are left, then
 * takes what the response header says once the servlet has run, going into debt (a token bucket's, or a sliding
 * counter's); a response with no usable number, or a servlet that throws, keeps the request's estimate.
 */
class ChargeWhatWasUsedInContainerTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    /** Reports {@code ?used=} in {@code X-Tokens-Used}; {@code ?used=throw} throws, {@code ?used=none} says nothing. */
    public static final class Completions extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            String used = req.getParameter("used");
            if ("throw".equals(used)) {
                throw new IllegalStateException("the model failed");
            }
            if (!"none".equals(used)) {
                resp.setHeader("X-Tokens-Used", used);
            }
            resp.getWriter().write("done");
        }
    }

    private TomcatServer start(Path dir, String store) throws Exception {
        List<String> lines = new ArrayList<>(List.of(
                "ratelimit.rules[0].name=completions",
                "ratelimit.rules[0].paths=/complete",
                "ratelimit.rules[0].key=ip",
                // An hour, so the bucket refills one token every 3.6 s: the counts below hold on a slow machine.
                "ratelimit.rules[0].limits=1000/1h",
                "ratelimit.rules[0].charge=response-header:X-Tokens-Used",
                // The same on a sliding-window counter: its debt is a count above the limit in the hour it was made.
                "ratelimit.rules[1].name=sliding",
                "ratelimit.rules[1].paths=/sliding",
                "ratelimit.rules[1].key=ip",
                "ratelimit.rules[1].limits=1000/1h",
                "ratelimit.rules[1].algorithm=sliding-window-counter",
                "ratelimit.rules[1].charge=response-header:X-Tokens-Used"));
        if (store.equals("redis")) {
            lines.add("ratelimit.redis.url=" + redis.uri());
            lines.add("ratelimit.redis.key-prefix=charge-" + System.nanoTime());
        }
        Path rules = Files.writeString(dir.resolve("ratelimit.properties"), String.join("\n", lines));
        return TomcatServer.builder()
                .filterClass(RateLimitFilter.class.getName())
                .filterParam("config", "file:" + rules)
                .servletClass("completions", Completions.class.getName(), false, "/*")
                .start();
    }

    private static RawHttp.Response complete(TomcatServer server, String used) throws IOException {
        return RawHttp.send(server.port(), "GET", "/complete?used=" + used);
    }

    private static long remaining(RawHttp.Response response) {
        Matcher m = Pattern.compile("\"completions-1h\";r=(\\d+);").matcher(response.header("RateLimit"));
        assertThat(m.find()).as(response.header("RateLimit")).isTrue();
        return Long.parseLong(m.group(1));
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void theResponseHeaderIsChargedIntoDebt(String store, @TempDir Path dir) throws Exception {
        try (TomcatServer server = start(dir, store)) {
            assertThat(complete(server, "600").status()).isEqualTo(200);
            RawHttp.Response second = complete(server, "600");
            assertThat(second.status()).as("400 left: admitted").isEqualTo(200);
            RawHttp.Response third = complete(server, "600");
            assertThat(third.status()).isEqualTo(429);
            // 200 tokens of debt and the next request's 1, at 1000 an hour: 723.6 s (less what refilled meanwhile).
            assertThat(Long.parseLong(third.header("Retry-After"))).isBetween(700L, 724L);
            assertThat(third.body()).contains("'completions'");
        }
    }

    /**
     * Two requests of 600 leave 1200 counted in this clock hour: the next waits until that hour's count, weighted by
     * what the sliding window still covers of it, leaves room for 1, 603 s into the next hour (1200 x (1 - 603 / 3600)
     * = 999).
     */
    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aSlidingCounterIsChargedIntoDebtToo(String store, @TempDir Path dir) throws Exception {
        // Within one clock hour (the counter's intervals are aligned to it): not in its last seconds.
        await().atMost(Duration.ofSeconds(15)).until(() -> millisToNextHour(System.currentTimeMillis()) > 10_000);
        try (TomcatServer server = start(dir, store)) {
            long before = System.currentTimeMillis();
            assertThat(RawHttp.send(server.port(), "GET", "/sliding?used=600").status())
                    .isEqualTo(200);
            assertThat(RawHttp.send(server.port(), "GET", "/sliding?used=600").status())
                    .as("600 counted: admitted")
                    .isEqualTo(200);
            RawHttp.Response third = RawHttp.send(server.port(), "GET", "/sliding?used=600");
            long after = System.currentTimeMillis();
            assertThat(third.status()).isEqualTo(429);
            assertThat(third.body()).contains("'sliding'");
            assertThat(Long.parseLong(third.header("Retry-After")))
                    .isBetween(millisToNextHour(after) / 1000 + 603 - 1, millisToNextHour(before) / 1000 + 603 + 1);
        }
    }

    private static long millisToNextHour(long epochMillis) {
        return 3_600_000 - epochMillis % 3_600_000;
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void noUsableNumberKeepsTheEstimate(String store, @TempDir Path dir) throws Exception {
        try (TomcatServer server = start(dir, store)) {
            assertThat(complete(server, "none").status()).isEqualTo(200);
            assertThat(complete(server, "-5").status()).isEqualTo(200);
            assertThat(complete(server, "lots").status()).isEqualTo(200);
            assertThat(complete(server, "99999999999999999999999999").status())
                    .as("a number past a long is the most: the debt bound holds it")
                    .isEqualTo(200);
            RawHttp.Response after = complete(server, "0");
            assertThat(after.status())
                    .as("the huge report left the key owing at most a day of refill, refused now")
                    .isEqualTo(429);
            long retry = Long.parseLong(after.header("Retry-After"));
            // Owing a day of refill (24,000 at 1000 an hour), the next request needs 24,001 tokens: about 86,404 s,
            // a day, never centuries.
            assertThat(retry).isBetween(86_300L, 86_404L);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aServletThatThrowsKeepsItsEstimateAndARequestThatUsedNothingGivesItBack(String store, @TempDir Path dir)
            throws Exception {
        try (TomcatServer server = start(dir, store)) {
            assertThat(complete(server, "throw").status()).isEqualTo(500);
            assertThat(complete(server, "0").status()).isEqualTo(200);
            RawHttp.Response third = complete(server, "0");
            // The throw kept its 1; the request that used 0 gave its 1 back: 998 left once this one took its 1.
            assertThat(remaining(third)).isBetween(998L, 999L);
        }
    }
}
