package io.github.ratelimit.samples.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The sample as its README runs it: the application's own main class on a real port, the gateway routing to its
 * upstream over HTTP, used over HTTP.
 */
class GatewaySampleTest {

    private static ConfigurableApplicationContext app;
    private static String base;
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @BeforeAll
    static void start() {
        app = SpringApplication.run(GatewaySampleApplication.class, "--server.port=0");
        base = "http://localhost:"
                + ((WebServerApplicationContext) app).getWebServer().getPort();
    }

    @AfterAll
    static void stop() {
        app.close();
    }

    private static CompletableFuture<HttpResponse<String>> get(String path) {
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(Duration.ofSeconds(20))
                .build();
        return HTTP.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    }

    /**
     * hello allows 5 a second per address and puts a token back every 200 ms: of seven requests sent at once, exactly
     * 5 pass when they take less than 200 ms, and one more for each 200 ms they took (measured around all of them,
     * so never less than the server saw).
     */
    @Test
    void sevenAtOnceGiveFiveAnswersAndTwo429sWithTheRateLimitHeaders() {
        long start = System.nanoTime();
        List<HttpResponse<String>> answers = IntStream.range(0, 7).mapToObj(i -> get("/api/hello")).toList().stream()
                .map(CompletableFuture::join)
                .toList();
        long tokensBack = (System.nanoTime() - start) / 200_000_000L;
        List<HttpResponse<String>> allowed =
                answers.stream().filter(r -> r.statusCode() == 200).toList();
        List<HttpResponse<String>> rejected =
                answers.stream().filter(r -> r.statusCode() == 429).toList();
        assertThat(allowed.size() + rejected.size()).as("200s and 429s").isEqualTo(7);
        assertThat((long) allowed.size())
                .as("allowed, %d tokens back meanwhile", tokensBack)
                .isBetween(5L, Math.min(7, 5 + tokensBack));
        for (HttpResponse<String> ok : allowed) {
            assertThat(ok.body()).isEqualTo("hello\n");
            assertThat(ok.headers().firstValue("X-RateLimit-Limit")).hasValue("5");
            assertThat(ok.headers().firstValue("X-RateLimit-Remaining")).isPresent();
            assertThat(ok.headers().firstValue("RateLimit-Policy").orElseThrow())
                    .contains("\"hello-1s\";q=5;w=1")
                    .contains("\"site-1s\";q=50;w=1");
        }
        for (HttpResponse<String> no : rejected) {
            assertThat(no.headers().firstValue("Retry-After")).isPresent();
            assertThat(no.headers().allValues("X-RateLimit-Remaining")).containsExactly("0");
            assertThat(no.headers().firstValue("RateLimit").orElseThrow()).contains("\"hello-1s\";r=0");
        }
        if (tokensBack == 0) {
            assertThat(rejected).hasSize(2);
        }
    }

    @Test
    void theRestOfTheApiIsRoutedUnderTheUrlRuleOnly() {
        HttpResponse<String> status = get("/api/status").join();
        assertThat(status.statusCode()).isEqualTo(200);
        assertThat(status.body()).isEqualTo("up\n");
        assertThat(status.headers().firstValue("RateLimit-Policy").orElseThrow())
                .contains("\"site-1s\";q=50;w=1")
                .doesNotContain("hello");
    }
}
