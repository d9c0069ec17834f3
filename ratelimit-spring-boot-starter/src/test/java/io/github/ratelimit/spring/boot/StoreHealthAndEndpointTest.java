package io.github.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.testing.redis.RedisServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * Over real HTTP, with a real Redis that goes away: the store's health says so without turning the application's
 * health DOWN, a health group that orders DEGRADED answers 503, and the ratelimits endpoint does not show keys
 * unless told to.
 */
@SpringBootTest(
        classes = StoreHealthAndEndpointTest.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "management.endpoints.web.exposure.include=health,ratelimits",
            "management.endpoint.health.show-details=always",
            "management.endpoint.health.group.ratelimit.include=rateLimitStore",
            "management.endpoint.health.group.ratelimit.status.order=down,degraded,up",
            "management.endpoint.health.group.ratelimit.status.http-mapping.degraded=503",
            "ratelimit.redis.connect-timeout=100ms",
            "ratelimit.rules[0].name=api",
            "ratelimit.rules[0].paths=/api/**",
            "ratelimit.rules[0].key=ip",
            "ratelimit.rules[0].limits=1/1h",
            "ratelimit.rules[1].name=busy",
            "ratelimit.rules[1].paths=/busy/**",
            "ratelimit.rules[1].key=ip",
            "ratelimit.rules[1].limits=100000/1s"
        })
class StoreHealthAndEndpointTest {

    private static final RedisServer REDIS = RedisServer.start();
    private static final ObjectMapper JSON = new ObjectMapper();

    @SpringBootApplication
    static class App {
        @RestController
        static class Api {
            @GetMapping({"/api/ping", "/busy/ping"})
            String ping() {
                return "pong";
            }
        }
    }

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("ratelimit.redis.url", () -> REDIS.uri().toString());
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

    private JsonNode json(HttpResponse<String> response) {
        return JSON.readTree(response.body());
    }

    @Test
    void redisGoingAwayDegradesTheStoreButNotTheApplication() throws Exception {
        assertThat(get("/busy/ping").statusCode()).isEqualTo(200);
        HttpResponse<String> healthy = get("/actuator/health");
        assertThat(healthy.statusCode()).isEqualTo(200);
        assertThat(json(healthy).at("/components/rateLimitStore/status").asString())
                .isEqualTo("UP");
        assertThat(get("/actuator/health/ratelimit").statusCode()).isEqualTo(200);

        REDIS.kill();
        try {
            // Requests fail open while the breaker counts failures; it opens after a streak of them.
            org.awaitility.Awaitility.await("the store reported degraded")
                    .atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(10))
                    .until(
                            () -> {
                                assertThat(get("/busy/ping").statusCode())
                                        .as("fail-open serves")
                                        .isEqualTo(200);
                                return json(get("/actuator/health"))
                                        .at("/components/rateLimitStore/status")
                                        .asString();
                            },
                            "DEGRADED"::equals);

            HttpResponse<String> application = get("/actuator/health");
            assertThat(application.statusCode())
                    .as("the application stays in its load balancer")
                    .isEqualTo(200);
            assertThat(json(application).at("/status").asString()).isEqualTo("UP");
            assertThat(json(application)
                            .at("/components/rateLimitStore/description")
                            .asString())
                    .contains("store-failure policies");

            HttpResponse<String> group = get("/actuator/health/ratelimit");
            assertThat(group.statusCode()).as("a group that orders DEGRADED").isEqualTo(503);
            assertThat(json(group).at("/status").asString()).isEqualTo("DEGRADED");
        } finally {
            REDIS.restart();
        }
        org.awaitility.Awaitility.await("the store recovers with Redis")
                .atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(10))
                .until(
                        () -> {
                            get("/busy/ping");
                            return json(get("/actuator/health"))
                                    .at("/components/rateLimitStore/status")
                                    .asString();
                        },
                        "UP"::equals);
    }

    @Test
    void theEndpointMasksKeysByDefault() throws Exception {
        for (int i = 0; i < 3; i++) {
            get("/api/masked");
        }
        JsonNode body = json(get("/actuator/ratelimits"));
        JsonNode top = body.at("/topRejectedKeys");
        assertThat(top.isArray() && !top.isEmpty())
                .as("rejected keys listed: %s", body)
                .isTrue();
        top.forEach(entry -> assertThat(entry.at("/key").asString()).isEqualTo("******"));
        assertThat(body.toString()).doesNotContain("127.0.0.1");
        assertThat(body.at("/rules/0/name").asString()).isEqualTo("api");
        assertThat(top.get(0).at("/rule").asString()).isEqualTo("api");
    }
}
