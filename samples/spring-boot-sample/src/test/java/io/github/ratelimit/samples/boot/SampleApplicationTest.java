package io.github.ratelimit.samples.boot;

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
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/** The sample over real HTTP on a random port; each test uses its own client address where it matters. */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "ratelimit.trusted-proxies=127.0.0.1,::1")
class SampleApplicationTest {

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpRequest request(String method, String path, String ip, String user) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .timeout(Duration.ofSeconds(10))
                .header("X-Forwarded-For", ip)
                .method(method, HttpRequest.BodyPublishers.noBody());
        if (user != null) {
            b.header(
                    "Authorization",
                    "Basic "
                            + Base64.getEncoder().encodeToString((user + ":" + user).getBytes(StandardCharsets.UTF_8)));
        }
        return b.build();
    }

    private HttpResponse<String> send(String method, String path, String ip, String user) throws Exception {
        return http.send(request(method, path, ip, user), HttpResponse.BodyHandlers.ofString());
    }

    private List<Integer> statuses(String method, String path, String ip, String user, int n) throws Exception {
        List<Integer> result = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            result.add(send(method, path, ip, user).statusCode());
        }
        return result;
    }

    /**
     * GETs /api/hello from {@code ip} until an answer is not a 200, at most 100 times, and returns the last answer.
     * hello allows 5 a second and puts a token back every 200 ms: exactly 5 pass when the requests take less than
     * 200 ms, and one more for each 200 ms they took (measured around all of them, so never less than the server
     * saw). Counting from there keeps a slow machine from deciding the test, and still fails one that admits more.
     */
    private HttpResponse<String> helloUntilRejected(String ip) throws Exception {
        List<Integer> statuses = new ArrayList<>();
        long start = System.nanoTime();
        HttpResponse<String> last;
        do {
            last = send("GET", "/api/hello", ip, null);
            statuses.add(last.statusCode());
        } while (last.statusCode() == 200 && statuses.size() < 100);
        long tokensBack = (System.nanoTime() - start) / 200_000_000L;
        assertThat(statuses.stream().filter(s -> s == 200).count())
                .as("%s, %d tokens back meanwhile", statuses, tokensBack)
                .isBetween(5L, 5 + tokensBack);
        return last;
    }

    @Test
    void answersTheSixthHelloWithinASecondWith429() throws Exception {
        HttpResponse<String> rejected = helloUntilRejected("203.0.113.1");
        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(rejected.headers().firstValue("Retry-After")).contains("1");
        assertThat(rejected.headers().firstValue("X-RateLimit-Remaining")).contains("0");
        assertThat(rejected.headers().firstValue("Content-Type"))
                .hasValueSatisfying(v -> assertThat(v).startsWith("application/problem+json"));
        assertThat(rejected.body()).contains("\"status\":429").contains("Rate limit of rule 'hello' exceeded");
        assertThat(send("GET", "/api/hello", "203.0.113.2", null).statusCode()).isEqualTo(200);
    }

    /**
     * The READMEs' burst: seven requests sent at once. The token bucket holds 5 tokens and puts one back every 200 ms,
     * so 5 pass, and one more for each 200 ms the burst lasted: exactly 5 when it took less.
     */
    @Test
    void sevenHellosSentAtOnceGiveFiveAnswersAndTheRest429() {
        long start = System.nanoTime();
        List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            sent.add(http.sendAsync(
                    request("GET", "/api/hello", "203.0.113.11", null), HttpResponse.BodyHandlers.ofString()));
        }
        List<Integer> statuses = sent.stream()
                .map(CompletableFuture::join)
                .map(HttpResponse::statusCode)
                .toList();
        long tokensBack = (System.nanoTime() - start) / 200_000_000L;
        assertThat(statuses).as("answers").allMatch(s -> s == 200 || s == 429);
        assertThat(statuses.stream().filter(s -> s == 200).count())
                .as("%s, %d tokens back during the burst", statuses, tokensBack)
                .isBetween(5L, 5 + tokensBack);
    }

    @Test
    void reportsTheUrlRuleAndTheAnnotationInOneSetOfHeaders() throws Exception {
        HttpResponse<String> r = send("GET", "/api/hello", "203.0.113.8", null);
        assertThat(r.headers().firstValue("RateLimit-Policy"))
                .contains(
                        "\"site-1s\";q=50;w=1, \"site-1h\";q=2000;w=3600, \"hello-1s\";q=5;w=1, \"hello-1m\";q=100;w=60");
        assertThat(r.headers().firstValue("X-RateLimit-Limit")).contains("5");
        assertThat(r.headers().firstValue("X-RateLimit-Remaining")).contains("4");
    }

    @Test
    void delaysReportsInsteadOfRejectingThem() throws Exception {
        List<CompletableFuture<long[]>> calls = new ArrayList<>();
        // Each call's time from one start before any was sent: the limiter's delays count from its first decision,
        // which comes after that start, so they are lower bounds however late a call's own thread began.
        long t0 = System.nanoTime();
        for (int i = 0; i < 4; i++) {
            calls.add(CompletableFuture.supplyAsync(() -> {
                try {
                    int status =
                            send("GET", "/api/reports", "203.0.113.3", null).statusCode();
                    return new long[] {status, (System.nanoTime() - t0) / 1_000_000};
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
        assertThat(results.get(3)[1]).isBetween(800L, 4000L);
    }

    @Test
    void delaysASoftUrlRuleWithAsyncProcessing() throws Exception {
        List<CompletableFuture<long[]>> calls = new ArrayList<>();
        // Each call's time from one start before any was sent: the limiter's delays count from its first decision,
        // which comes after that start, so they are lower bounds however late a call's own thread began.
        long t0 = System.nanoTime();
        for (int i = 0; i < 4; i++) {
            calls.add(CompletableFuture.supplyAsync(() -> {
                try {
                    HttpResponse<String> r = send("GET", "/api/export", "203.0.113.9", null);
                    return new long[] {
                        r.statusCode(),
                        (System.nanoTime() - t0) / 1_000_000,
                        r.body().length()
                    };
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        List<long[]> results = calls.stream()
                .map(CompletableFuture::join)
                .sorted((a, b) -> Long.compare(a[1], b[1]))
                .toList();
        assertThat(results).allSatisfy(r -> {
            assertThat(r[0]).isEqualTo(200);
            assertThat(r[2]).isEqualTo("export ready".length());
        });
        // Two at once, then one every 500 ms: the last waited about a second.
        assertThat(results.get(3)[1]).isBetween(800L, 4000L);
    }

    @Test
    void limitsLoginAttemptsPerClientAddress() throws Exception {
        assertThat(statuses("POST", "/api/login?user=x", "203.0.113.4", null, 6))
                .containsExactly(200, 200, 200, 200, 200, 429);
    }

    @Test
    void limitsPerAuthenticatedUserWithPerUserPlans() throws Exception {
        assertThat(send("GET", "/api/me", "203.0.113.5", null).statusCode()).isEqualTo(401);
        assertThat(statuses("GET", "/api/me", "203.0.113.5", "alice", 4)).containsExactly(200, 200, 200, 429);
        assertThat(statuses("GET", "/api/me", "203.0.113.5", "bob", 11).stream()
                        .filter(s -> s == 200)
                        .count())
                .isEqualTo(10);
    }

    /** carol's plan comes with her granted authority PLAN_pro (ratelimit.plan-from=authority:PLAN_). */
    @Test
    void choosesAUsersPlanFromHerAuthority() throws Exception {
        HttpResponse<String> first = send("GET", "/api/me", "203.0.113.10", "carol");
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.headers().firstValue("RateLimit-Policy"))
                .hasValueSatisfying(v -> assertThat(v).contains("q=10;w=60"));
        assertThat(statuses("GET", "/api/me", "203.0.113.10", "carol", 10))
                .containsExactly(200, 200, 200, 200, 200, 200, 200, 200, 200, 429);
    }

    @Test
    void throttlesTheOutboundClientInSoftMode() throws Exception {
        long t0 = System.nanoTime();
        assertThat(statuses("GET", "/api/quote", "203.0.113.6", null, 3)).containsOnly(200);
        assertThat((System.nanoTime() - t0) / 1_000_000).isGreaterThanOrEqualTo(400);
    }

    @Test
    void describesItsRulesAndRejectedKeysInTheActuatorEndpointToAdminsOnly() throws Exception {
        assertThat(helloUntilRejected("203.0.113.7").statusCode()).isEqualTo(429);
        assertThat(send("GET", "/actuator/ratelimits", "203.0.113.7", null).statusCode())
                .as("anonymous")
                .isEqualTo(401);
        assertThat(send("GET", "/actuator/ratelimits", "203.0.113.7", "alice").statusCode())
                .as("a user")
                .isEqualTo(403);
        HttpResponse<String> r = send("GET", "/actuator/ratelimits", "203.0.113.7", "admin");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body())
                .contains("\"name\":\"hello\"")
                .contains("\"name\":\"site\"")
                .contains("\"LocalBucketStore\"")
                .contains("\"key\":\"203.0.113.7\"");
        assertThat(send("GET", "/actuator/health", "203.0.113.7", null).statusCode())
                .as("health is public")
                .isEqualTo(200);
    }

    @Test
    void publishesItsMetricsThroughBootsOwnRegistry() throws Exception {
        send("GET", "/api/hello", "203.0.113.9", null);
        assertThat(send("GET", "/actuator/metrics/ratelimit.requests", "203.0.113.9", null)
                        .statusCode())
                .isEqualTo(401);
        HttpResponse<String> metrics = send("GET", "/actuator/metrics/ratelimit.requests", "203.0.113.9", "admin");
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body())
                .contains("\"name\":\"ratelimit.requests\"")
                .contains("\"rule\"")
                .contains("\"hello\"")
                .contains("\"outcome\"")
                .contains("\"allowed\"");
    }
}
