package io.github.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.testing.redis.RedisServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * The readiness group of docs/operations.md ("Keep readiness on the limiter's word"), over real HTTP with a real Redis
 * that goes away, Spring Data Redis configured ({@code spring.data.redis.*}, which the limiter's store uses too): Boot's
 * own {@code redis} indicator turns the application's health DOWN, while the readiness group, holding the availability
 * state and {@code rateLimitStore} but not {@code redis}, stays UP as the limiter serves by its failure policies.
 */
@SpringBootTest(
        classes = ReadinessOnTheLimitersWordTest.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "management.endpoints.web.exposure.include=health",
            "management.endpoint.health.show-details=always",
            "management.endpoint.health.group.readiness.include=readinessState,rateLimitStore",
            "management.endpoint.health.group.readiness.show-details=always",
            "spring.data.redis.connect-timeout=2s",
            "spring.data.redis.timeout=2s",
            "ratelimit.redis.connect-timeout=100ms",
            "ratelimit.rules[0].name=busy",
            "ratelimit.rules[0].paths=/busy/**",
            "ratelimit.rules[0].key=ip",
            "ratelimit.rules[0].limits=100000/1s"
        })
class ReadinessOnTheLimitersWordTest {

    private static final RedisServer REDIS = RedisServer.start();
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Not scanned: the package holds other tests' applications. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Api.class)
    static class App {}

    @RestController
    static class Api {
        @GetMapping("/busy/ping")
        String ping() {
            return "pong";
        }
    }

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.host", REDIS::host);
        registry.add("spring.data.redis.port", REDIS::port);
    }

    @AfterAll
    static void stopRedis() {
        REDIS.close();
    }

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode json(HttpResponse<String> response) {
        return JSON.readTree(response.body());
    }

    @Test
    void readinessFollowsTheLimiterNotBootsRedisIndicator() throws Exception {
        assertThat(get("/busy/ping").statusCode()).isEqualTo(200);
        // Boot's own indicator is there, UP once its client has connected (on busy cores, not at its first call).
        Awaitility.await("Boot's redis indicator UP")
                .atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(50))
                .until(
                        () -> json(get("/actuator/health"))
                                .at("/components/redis/status")
                                .asString(),
                        "UP"::equals);
        HttpResponse<String> ready = get("/actuator/health/readiness");
        assertThat(ready.statusCode()).isEqualTo(200);
        assertThat(json(ready).at("/components").propertyNames())
                .containsExactlyInAnyOrder("rateLimitStore", "readinessState");

        REDIS.kill();
        try {
            Awaitility.await("the store reported degraded")
                    .atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(10))
                    .until(
                            () -> {
                                assertThat(get("/busy/ping").statusCode())
                                        .as("fail-open serves")
                                        .isEqualTo(200);
                                // The store's component alone: the whole health waits out Boot's redis indicator
                                // (its 2 s timeout) each time, and the breaker opens only as calls fail.
                                return json(get("/actuator/health/rateLimitStore"))
                                        .at("/status")
                                        .asString();
                            },
                            "DEGRADED"::equals);
            HttpResponse<String> down = get("/actuator/health");
            assertThat(down.statusCode())
                    .as("Boot's redis indicator: the application is DOWN")
                    .isEqualTo(503);
            assertThat(json(down).at("/components/redis/status").asString()).isEqualTo("DOWN");
            HttpResponse<String> stillReady = get("/actuator/health/readiness");
            assertThat(stillReady.statusCode())
                    .as("readiness on the limiter's word")
                    .isEqualTo(200);
            assertThat(json(stillReady).at("/status").asString()).isEqualTo("UP");
            assertThat(json(stillReady).at("/components/rateLimitStore/status").asString())
                    .isEqualTo("DEGRADED");
        } finally {
            REDIS.restart();
        }
    }
}
