package io.github.ratelimit.samples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The sample as its README runs it: the application's own main class on a real Reactor Netty port, Spring
 * Security's reactive chain in front, used over HTTP. Buckets in this JVM ({@link WebFluxSampleRedisTest} runs it on
 * Redis).
 */
class WebFluxSampleTest {

    private static ConfigurableApplicationContext app;
    private static WebTestClient client;

    @BeforeAll
    static void start() {
        app = SpringApplication.run(WebFluxSampleApplication.class, "--server.port=0");
        client = clientOf(app);
    }

    @AfterAll
    static void stop() {
        app.close();
    }

    static WebTestClient clientOf(ConfigurableApplicationContext context) {
        int port = ((WebServerApplicationContext) context).getWebServer().getPort();
        return WebTestClient.bindToServer()
                .baseUrl("http://localhost:" + port)
                .responseTimeout(Duration.ofSeconds(20))
                .build();
    }

    /**
     * hello allows 5 a second and puts a token back every 200 ms: exactly 5 pass when the requests take less than
     * 200 ms, and one more for each 200 ms they took (measured around all of them, so never less than the server
     * saw). The requests go on until one is not a 200 (at most 100): a slow machine must not decide the test.
     */
    @Test
    void helloAnswers429WithRetryAfterAndTheProblemBodyAfterFivePerSecond() {
        long start = System.nanoTime();
        long allowed = 0;
        EntityExchangeResult<String> answer;
        while ((answer = client.get()
                                        .uri("/api/hello")
                                        .exchange()
                                        .expectBody(String.class)
                                        .returnResult())
                                .getStatus()
                                .value()
                        == 200
                && allowed < 100) {
            assertThat(answer.getResponseBody()).isEqualTo("hello");
            allowed++;
        }
        long tokensBack = (System.nanoTime() - start) / 200_000_000L;
        assertThat(allowed).as("allowed, %d tokens back meanwhile", tokensBack).isBetween(5L, 5 + tokensBack);
        EntityExchangeResult<String> rejected = answer;
        assertThat(rejected.getStatus().value()).isEqualTo(429);
        assertThat(rejected.getResponseHeaders().getFirst("Retry-After")).isNotNull();
        assertThat(rejected.getResponseHeaders().get("X-RateLimit-Remaining")).containsExactly("0");
        assertThat(rejected.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
        assertThat(rejected.getResponseBody())
                .startsWith("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\","
                        + "\"status\":429,\"detail\":\"Rate limit of rule 'hello' exceeded")
                .contains("\"instance\":\"/api/hello\"");
    }

    @Test
    void meCountsByTheAuthenticatedUserFromSpringSecurity() {
        for (int i = 0; i < 3; i++) {
            client.get()
                    .uri("/api/me")
                    .headers(h -> h.setBasicAuth("alice", "alice"))
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody(String.class)
                    .isEqualTo("you are alice");
        }
        client.get()
                .uri("/api/me")
                .headers(h -> h.setBasicAuth("alice", "alice"))
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectBody()
                .returnResult();
        client.get()
                .uri("/api/me")
                .headers(h -> h.setBasicAuth("bob", "bob"))
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        client.get()
                .uri("/api/me")
                .exchange()
                .expectStatus()
                .isUnauthorized()
                .expectBody()
                .returnResult();
    }

    @Test
    void anOrdersLimitCountsByTheIdInThePath() {
        client.get()
                .uri("/api/orders/1")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        client.get()
                .uri("/api/orders/1")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        client.get()
                .uri("/api/orders/1")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectBody()
                .returnResult();
        client.get()
                .uri("/api/orders/2")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
    }

    @Test
    void theQuoteClientsQuotaRejectsWithoutNamingItsRule() {
        for (int i = 0; i < 10; i++) {
            client.get()
                    .uri("/api/quotes")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody()
                    .returnResult();
        }
        EntityExchangeResult<String> rejected = client.get()
                .uri("/api/quotes")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectHeader()
                .exists("Retry-After")
                .expectBody(String.class)
                .returnResult();
        assertThat(rejected.getResponseBody()).contains("rule 'internal'").doesNotContain("quote-api");
    }

    @Test
    void softBurstsWaitTheirTurnWhileAnUnlimitedEndpointAnswersAtOnce() throws Exception {
        List<CompletableFuture<Integer>> waiting = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            waiting.add(CompletableFuture.supplyAsync(() -> client.get()
                    .uri("/api/export")
                    .exchange()
                    .expectBody(String.class)
                    .returnResult()
                    .getStatus()
                    .value()));
            waiting.add(CompletableFuture.supplyAsync(() -> client.get()
                    .uri("/api/reports")
                    .exchange()
                    .expectBody(String.class)
                    .returnResult()
                    .getStatus()
                    .value()));
        }
        org.awaitility.Awaitility.await("the four requests that need no wait")
                .atMost(Duration.ofSeconds(10))
                .until(() -> waiting.stream().filter(CompletableFuture::isDone).count() >= 4);
        for (int i = 0; i < 10; i++) {
            client.get()
                    .uri("/api/status")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody()
                    .returnResult();
        }
        assertThat(waiting.stream().filter(f -> !f.isDone()).count())
                .as("the status endpoint answered while SOFT requests waited")
                .isGreaterThan(0);
        for (CompletableFuture<Integer> f : waiting) {
            assertThat(f.get(20, TimeUnit.SECONDS))
                    .as("every request of the burst went through")
                    .isEqualTo(200);
        }
    }

    @Test
    void metricsAndTheRatelimitsEndpointAreThereForAdminsOnly() {
        client.get()
                .uri("/api/status")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        client.get()
                .uri("/actuator/metrics/ratelimit.requests")
                .exchange()
                .expectStatus()
                .isUnauthorized()
                .expectBody()
                .returnResult();
        client.get()
                .uri("/actuator/metrics/ratelimit.requests")
                .headers(h -> h.setBasicAuth("alice", "alice"))
                .exchange()
                .expectStatus()
                .isForbidden()
                .expectBody()
                .returnResult();
        String metrics = client.get()
                .uri("/actuator/metrics/ratelimit.requests")
                .headers(h -> h.setBasicAuth("admin", "admin"))
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
        assertThat(metrics).contains("\"name\":\"ratelimit.requests\"").contains("site");
        String endpoint = client.get()
                .uri("/actuator/ratelimits")
                .headers(h -> h.setBasicAuth("admin", "admin"))
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
        assertThat(endpoint).contains("\"site\"").contains("\"hello\"").contains("\"quote-api\"");
    }
}
