package io.github.ratelimit.samples.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The sample's concurrency rule, over real HTTP: rule {@code slow} lets 2 requests per client address run
 * {@code GET /api/slow} at once, so 6 sent together give exactly 2 × 200 and 4 × 429, and a slot comes back when its
 * request has answered. Each test has its own client address.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "ratelimit.trusted-proxies=127.0.0.1,::1")
class SlowCallsTest {

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpRequest slow(String ip, String ms) {
        return HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/api/slow?ms=" + ms))
                .timeout(Duration.ofSeconds(20))
                .header("X-Forwarded-For", ip)
                .build();
    }

    @Test
    void sixAtOnceGiveTwoAnswersAndFourRefusals() throws Exception {
        List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            // 3 s of work: the refusals come back at once, long before either call in flight has answered.
            sent.add(http.sendAsync(slow("198.51.100.20", "3000"), HttpResponse.BodyHandlers.ofString()));
        }
        List<HttpResponse<String>> answers = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> f : sent) {
            answers.add(f.join());
        }
        assertThat(answers)
                .filteredOn(r -> r.statusCode() == 200)
                .hasSize(2)
                .allSatisfy(r -> assertThat(r.body()).isEqualTo("slept 3000 ms"));
        List<HttpResponse<String>> refused =
                answers.stream().filter(r -> r.statusCode() == 429).toList();
        assertThat(refused).hasSize(4).allSatisfy(r -> {
            assertThat(r.headers().firstValue("Retry-After")).contains("1");
            assertThat(r.headers().firstValue("RateLimit-Policy"))
                    .hasValueSatisfying(
                            v -> assertThat(v).contains("\"slow-concurrency\";q=2;qu=\"concurrent-requests\""));
            assertThat(r.headers().firstValue("RateLimit"))
                    .hasValueSatisfying(v -> assertThat(v).contains("\"slow-concurrency\";r=0"));
            assertThat(r.body()).contains("rule 'slow'");
        });

        HttpResponse<String> after = http.send(slow("198.51.100.20", "0"), HttpResponse.BodyHandlers.ofString());
        assertThat(after.statusCode())
                .as("both slots came back with their answers")
                .isEqualTo(200);
        assertThat(after.headers().firstValue("RateLimit"))
                .hasValueSatisfying(v -> assertThat(v).contains("\"slow-concurrency\";r=1"));
    }

    @Test
    void anAnswerOfAnyStatusGivesItsSlotBack() throws Exception {
        String ip = "198.51.100.21";
        for (int i = 0; i < 5; i++) {
            assertThat(http.send(slow(ip, "abc"), HttpResponse.BodyHandlers.ofString())
                            .statusCode())
                    .as("no number: a client error, not a server error")
                    .isEqualTo(400);
        }
        assertThat(http.send(slow(ip, "-5"), HttpResponse.BodyHandlers.ofString())
                        .body())
                .isEqualTo("slept 0 ms");
        CompletableFuture<HttpResponse<String>> a =
                http.sendAsync(slow(ip, "2000"), HttpResponse.BodyHandlers.ofString());
        CompletableFuture<HttpResponse<String>> b =
                http.sendAsync(slow(ip, "2000"), HttpResponse.BodyHandlers.ofString());
        assertThat(a.join().statusCode()).isEqualTo(200);
        assertThat(b.join().statusCode()).isEqualTo(200);
        assertThat(http.send(slow(ip, "0"), HttpResponse.BodyHandlers.ofString())
                        .statusCode())
                .isEqualTo(200);
    }
}
