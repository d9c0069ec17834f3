package io.github.ratelimit.samples.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The sample's real web.xml and rules file in a real Tomcat, over real HTTP. Each test gets a fresh server and
 * its own client address (sent through the trusted proxy's X-Forwarded-For), so tests do not share buckets.
 */
abstract class ServletSampleContract {

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private SampleServer server;
    private final String clientIp = "203.0.113." + (1 + (int) (Math.random() * 250));

    /** Context-params selecting the store, e.g. {@code ratelimit.store=redis}. */
    protected abstract Map<String, String> storeParams();

    @BeforeEach
    void start() throws Exception {
        server = SampleServer.start(0, storeParams());
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    protected HttpResponse<String> get(String path, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + server.port() + path))
                .timeout(Duration.ofSeconds(10))
                .header("X-Forwarded-For", clientIp);
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** What {@link #untilRejected} sent: the responses, the last one the first that was not a 200. */
    protected record Burst(List<HttpResponse<String>> responses, long tokensBack) {

        List<Integer> statuses() {
            return responses.stream().map(HttpResponse::statusCode).toList();
        }

        List<String> remaining() {
            return responses.stream()
                    .map(r -> r.headers().firstValue("X-RateLimit-Remaining").orElse("-"))
                    .toList();
        }

        long allowed() {
            return responses.stream().filter(r -> r.statusCode() == 200).count();
        }

        HttpResponse<String> last() {
            return responses.get(responses.size() - 1);
        }
    }

    /**
     * GETs {@code path} until an answer is not a 200, at most 100 times. The rule {@code hello} allows 5 a second and
     * puts a token back every 200 ms: exactly 5 pass when the requests take less than 200 ms, and one more for each
     * 200 ms they took ({@link Burst#tokensBack()}, measured around all of them, so never fewer than the server's).
     * Counting from there keeps a slow machine from deciding the test, and still fails one that admits more.
     */
    protected Burst untilRejected(String path) throws Exception {
        List<HttpResponse<String>> responses = new ArrayList<>();
        long start = System.nanoTime();
        do {
            responses.add(get(path));
        } while (responses.get(responses.size() - 1).statusCode() == 200 && responses.size() < 100);
        return new Burst(responses, (System.nanoTime() - start) / 200_000_000L);
    }

    private static String[] basic(String user) {
        String token = Base64.getEncoder().encodeToString((user + ":" + user).getBytes(StandardCharsets.UTF_8));
        return new String[] {"Authorization", "Basic " + token};
    }

    @Test
    void answers429OnTheSixthRequestWithinOneSecond() throws Exception {
        Burst burst = untilRejected("/hello");
        assertThat(burst.last().statusCode()).as("%s", burst.statuses()).isEqualTo(429);
        assertThat(burst.allowed())
                .as("%s, %d tokens back meanwhile", burst.statuses(), burst.tokensBack())
                .isBetween(5L, 5 + burst.tokensBack());
        assertThat(burst.remaining().get(0)).isEqualTo("4");
        assertThat(burst.last().headers().firstValue("X-RateLimit-Remaining")).contains("0");
        if (burst.tokensBack() == 0) {
            assertThat(burst.statuses()).containsExactly(200, 200, 200, 200, 200, 429);
            assertThat(burst.remaining()).containsExactly("4", "3", "2", "1", "0", "0");
        }
    }

    @Test
    void sendsTheRateLimitHeadersOnAllowedResponses() throws Exception {
        HttpResponse<String> r = get("/hello");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("hello\n");
        assertThat(r.headers().firstValue("X-RateLimit-Limit")).contains("5");
        assertThat(r.headers().firstValue("X-RateLimit-Reset")).contains("1");
        assertThat(r.headers().firstValue("RateLimit-Policy"))
                .contains(
                        "\"site-1s\";q=50;w=1, \"site-1h\";q=2000;w=3600, \"hello-1s\";q=5;w=1, \"hello-1m\";q=100;w=60");
        assertThat(r.headers().firstValue("RateLimit"))
                .hasValueSatisfying(
                        v -> assertThat(v).contains("\"hello-1s\";r=4;t=1").contains("\"site-1s\";r=49;t=1"));
        assertThat(r.headers().firstValue("Retry-After")).isEmpty();
    }

    @Test
    void answersARejectionWithProblemDetailsAndAnHonestRetryAfter() throws Exception {
        Burst burst = untilRejected("/hello");
        assertThat(burst.allowed())
                .as("%s, %d tokens back meanwhile", burst.statuses(), burst.tokensBack())
                .isBetween(5L, 5 + burst.tokensBack());
        HttpResponse<String> rejected = burst.last();
        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(rejected.headers().firstValue("Content-Type"))
                .hasValueSatisfying(v -> assertThat(v).startsWith("application/problem+json"));
        assertThat(rejected.body())
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\",\"status\":429,"
                        + "\"detail\":\"Rate limit of rule 'hello' exceeded; retry after 1 s.\",\"instance\":\"/hello\","
                        + "\"retryAfter\":1}");
        long retryAfter =
                Long.parseLong(rejected.headers().firstValue("Retry-After").orElseThrow());
        assertThat(retryAfter).isEqualTo(1);
        // Waiting out the Retry-After the server gave is what this checks: polling would pass at any later time.
        Thread.sleep(Duration.ofSeconds(retryAfter).toMillis());
        assertThat(get("/hello").statusCode()).isEqualTo(200);
    }

    @Test
    void keysByTheClientAddressBehindTheTrustedProxy() throws Exception {
        Burst burst = untilRejected("/hello");
        assertThat(burst.last().statusCode()).isEqualTo(429);
        assertThat(burst.allowed())
                .as("%s, %d tokens back meanwhile", burst.statuses(), burst.tokensBack())
                .isBetween(5L, 5 + burst.tokensBack());
        assertThat(get("/hello", "X-Forwarded-For", "198.51.100.77").statusCode())
                .isEqualTo(200);
    }

    @Test
    void delaysSoftLimitedRequestsInsteadOfRejectingThem() throws Exception {
        // 2 per second, up to 2 s of waiting: of 5 at once, two go now and three wait 0.5, 1 and 1.5 s.
        List<CompletableFuture<long[]>> calls = new ArrayList<>();
        // Each call's time from one start before any was sent: the limiter's delays count from its first decision,
        // which comes after that start, so they are lower bounds however late a call's own thread began.
        long t0 = System.nanoTime();
        for (int i = 0; i < 5; i++) {
            calls.add(CompletableFuture.supplyAsync(() -> {
                try {
                    HttpResponse<String> r = get("/reports");
                    return new long[] {r.statusCode(), (System.nanoTime() - t0) / 1_000_000};
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        List<long[]> results = calls.stream()
                .map(CompletableFuture::join)
                .sorted((a, b) -> Long.compare(a[1], b[1]))
                .toList();
        assertThat(results).allSatisfy(r -> assertThat(r[0]).isEqualTo(200));
        // The slowest waited about 1.5 s: at least 1.3 s (timer granularity), and not unboundedly more.
        assertThat(results.get(4)[1]).isBetween(1300L, 4000L);
        assertThat(results.get(2)[1]).isGreaterThanOrEqualTo(400L);
    }

    @Test
    void rejectsSoftRequestsThatWouldWaitLongerThanMaxDelay() throws Exception {
        List<CompletableFuture<Integer>> calls = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            calls.add(CompletableFuture.supplyAsync(() -> {
                long t0 = System.nanoTime();
                try {
                    return get("/reports").statusCode();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        List<Integer> statuses = calls.stream().map(CompletableFuture::join).toList();
        // 2 at once and 4 within the 2 s maxDelay; the rest would wait longer.
        assertThat(statuses.stream().filter(s -> s == 200).count()).isBetween(6L, 7L);
        assertThat(statuses.stream().filter(s -> s == 429).count()).isBetween(2L, 3L);
    }

    @Test
    void shadowRulesServeEveryRequest() throws Exception {
        for (int i = 0; i < 5; i++) {
            assertThat(get("/search").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void limitsPerAuthenticatedUserWithPerUserPlans() throws Exception {
        List<Integer> alice = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            alice.add(get("/me", basic("alice")).statusCode());
        }
        assertThat(alice).containsExactly(200, 200, 200, 429);
        int bobAllowed = 0;
        for (int i = 0; i < 11; i++) {
            if (get("/me", basic("bob")).statusCode() == 200) {
                bobAllowed++;
            }
        }
        assertThat(bobAllowed).isEqualTo(10);
        assertThat(get("/me").statusCode()).isEqualTo(401);
    }

    /** Stops the server now (the test's own cleanup then does nothing). */
    protected void stopServer() throws Exception {
        server.close();
    }

    protected static String uniquePrefix() {
        return "servlet-" + UUID.randomUUID();
    }
}
