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

/**
 * Over real HTTP, on a real Redis: once a client is rejected, its flood of requests costs Redis (almost) nothing,
 * counted by Redis itself ({@code INFO commandstats}), and every request of the flood still gets its 429 with a
 * Retry-After.
 */
@SpringBootTest(
        classes = RejectedFloodOverHttpTest.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "ratelimit.rules[0].name=api",
            "ratelimit.rules[0].paths=/api/**",
            "ratelimit.rules[0].key=ip",
            "ratelimit.rules[0].limits=3/1h"
        })
class RejectedFloodOverHttpTest {

    private static final RedisServer REDIS = RedisServer.start();

    @SpringBootApplication
    static class App {
        @RestController
        static class Api {
            @GetMapping("/api/ping")
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

    @Test
    void aRejectedClientsFloodCostsRedisAtMostOneCommandInTwentyRequests() throws Exception {
        for (int i = 0; i < 3; i++) {
            assertThat(get("/api/ping").statusCode()).isEqualTo(200);
        }
        assertThat(get("/api/ping").statusCode())
                .as("the first rejection, decided by Redis")
                .isEqualTo(429);
        long before = REDIS.commandCalls();
        int flood = 1000;
        for (int i = 0; i < flood; i++) {
            HttpResponse<String> response = get("/api/ping");
            assertThat(response.statusCode()).as("request %d of the flood", i).isEqualTo(429);
            assertThat(response.headers().firstValue("Retry-After")).isPresent();
        }
        long spent = REDIS.commandCalls() - before;
        // The store asks Redis again at most once a second; the flood takes about that long here.
        assertThat((double) spent / flood)
                .as("Redis commands per rejected request (%d in all)", spent)
                .isLessThanOrEqualTo(0.05);
    }
}
