package io.github.ratelimit.samples.webflux;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

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
        return WebTestClient.bindToServer().baseUrl("http://localhost:" + port).responseTimeout(Duration.ofSeconds(20))
                .build();
    }

    @Test
    void helloAnswers429WithRetryAfterAndTheProblemBodyAfterFivePerSecond() {
        for (int i = 0; i < 5; i++) {
            client.get().uri("/api/hello").exchange().expectStatus().isOk().expectBody(String.class).isEqualTo("hello");
        }
        EntityExchangeResult<String> rejected = client.get().uri("/api/hello").exchange()
                .expectStatus().isEqualTo(429)
                .expectHeader().exists("Retry-After")
                .expectHeader().valueEquals("X-RateLimit-Remaining", "0")
                .expectHeader().contentType("application/problem+json")
                .expectBody(String.class).returnResult();
        assertThat(rejected.getResponseBody()).startsWith("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\","
                + "\"status\":429,\"detail\":\"Rate limit of rule 'hello' exceeded").contains("\"instance\":\"/api/hello\"");
    }

    @Test
    void meCountsByTheAuthenticatedUserFromSpringSecurity() {
        for (int i = 0; i < 3; i++) {
            client.get().uri("/api/me").headers(h -> h.setBasicAuth("alice", "alice")).exchange()
                    .expectStatus().isOk().expectBody(String.class).isEqualTo("you are alice");
        }
        client.get().uri("/api/me").headers(h -> h.setBasicAuth("alice", "alice")).exchange()
                .expectStatus().isEqualTo(429).expectBody().returnResult();
        client.get().uri("/api/me").headers(h -> h.setBasicAuth("bob", "bob")).exchange().expectStatus().isOk()
                .expectBody().returnResult();
        client.get().uri("/api/me").exchange().expectStatus().isUnauthorized().expectBody().returnResult();
    }

    @Test
    void anOrdersLimitCountsByTheIdInThePath() {
        client.get().uri("/api/orders/1").exchange().expectStatus().isOk().expectBody().returnResult();
        client.get().uri("/api/orders/1").exchange().expectStatus().isOk().expectBody().returnResult();
        client.get().uri("/api/orders/1").exchange().expectStatus().isEqualTo(429).expectBody().returnResult();
        client.get().uri("/api/orders/2").exchange().expectStatus().isOk().expectBody().returnResult();
    }

    @Test
    void theQuoteClientsQuotaRejectsWithoutNamingItsRule() {
        for (int i = 0; i < 10; i++) {
            client.get().uri("/api/quotes").exchange().expectStatus().isOk().expectBody().returnResult();
        }
        EntityExchangeResult<String> rejected = client.get().uri("/api/quotes").exchange()
                .expectStatus().isEqualTo(429).expectHeader().exists("Retry-After")
                .expectBody(String.class).returnResult();
        assertThat(rejected.getResponseBody()).contains("rule 'internal'").doesNotContain("quote-api");
    }

    @Test
    void softBurstsWaitTheirTurnWhileAnUnlimitedEndpointAnswersAtOnce() throws Exception {
        List<CompletableFuture<Integer>> waiting = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            waiting.add(CompletableFuture.supplyAsync(() -> client.get().uri("/api/export").exchange()
                    .expectBody(String.class).returnResult().getStatus().value()));
            waiting.add(CompletableFuture.supplyAsync(() -> client.get().uri("/api/reports").exchange()
                    .expectBody(String.class).returnResult().getStatus().value()));
        }
        org.awaitility.Awaitility.await("the four requests that need no wait").atMost(Duration.ofSeconds(10))
                .until(() -> waiting.stream().filter(CompletableFuture::isDone).count() >= 4);
        for (int i = 0; i < 10; i++) {
            client.get().uri("/api/status").exchange().expectStatus().isOk().expectBody().returnResult();
        }
        assertThat(waiting.stream().filter(f -> !f.isDone()).count())
                .as("the status endpoint answered while SOFT requests waited").isGreaterThan(0);
        for (CompletableFuture<Integer> f : waiting) {
            assertThat(f.get(20, TimeUnit.SECONDS)).as("every request of the burst went through").isEqualTo(200);
        }
    }

    @Test
    void metricsAndTheRatelimitsEndpointAreThereForAdminsOnly() {
        client.get().uri("/api/status").exchange().expectStatus().isOk().expectBody().returnResult();
        client.get().uri("/actuator/metrics/ratelimit.requests").exchange().expectStatus().isUnauthorized()
                .expectBody().returnResult();
        client.get().uri("/actuator/metrics/ratelimit.requests").headers(h -> h.setBasicAuth("alice", "alice"))
                .exchange().expectStatus().isForbidden().expectBody().returnResult();
        String metrics = client.get().uri("/actuator/metrics/ratelimit.requests")
                .headers(h -> h.setBasicAuth("admin", "admin")).exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
        assertThat(metrics).contains("\"name\":\"ratelimit.requests\"").contains("site");
        String endpoint = client.get().uri("/actuator/ratelimits").headers(h -> h.setBasicAuth("admin", "admin"))
                .exchange().expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
        assertThat(endpoint).contains("\"site\"").contains("\"hello\"").contains("\"quote-api\"");
    }
}
