package io.github.ratelimit.spring.boot.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.testing.redis.RedisServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * The ratelimitkeys endpoint over real HTTP, on a real Redis, with per-key limits switched on by one property:
 * read-only unless its access is raised, then setting limits and plans, resetting and removing keys, each enforced
 * by the next request.
 */
class RateLimitKeysEndpointTest {

    private static final RedisServer REDIS = RedisServer.start();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @AfterAll
    static void stopRedis() {
        REDIS.close();
    }

    @SpringBootApplication
    static class App {
        @RestController
        static class Api {
            @GetMapping("/keys-endpoint-test/ping")
            String ping(@RequestHeader("X-User") String user) {
                return "pong " + user;
            }
        }
    }

    static void redis(DynamicPropertyRegistry registry, String prefix) {
        registry.add("ratelimit.redis.url", () -> REDIS.uri().toString());
        registry.add("ratelimit.redis.key-prefix", () -> prefix);
    }

    static HttpResponse<String> send(int port, String method, String path, String json) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .timeout(Duration.ofSeconds(10))
                .header("X-User", "alice");
        if (json != null) {
            b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(json));
        } else {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Nested
    @SpringBootTest(
            classes = App.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {
                "ratelimit.rules[0].name=api",
                "ratelimit.rules[0].paths=/keys-endpoint-test/**",
                "ratelimit.rules[0].key=header:X-User",
                "ratelimit.rules[0].limits=100/1m",
                "ratelimit.plans.tiny=1/1h",
                "ratelimit.limit-store.enabled=true",
                "management.endpoints.web.exposure.include=ratelimitkeys",
                "management.endpoint.ratelimitkeys.access=unrestricted"
            })
    class WithWritesSwitchedOn {

        @DynamicPropertySource
        static void props(DynamicPropertyRegistry registry) {
            redis(registry, "writes");
        }

        @LocalServerPort
        int port;

        @Test
        void setsReadsResetsAndRemovesAKeysLimitsEachEnforcedByTheNextRequest() throws Exception {
            assertThat(send(port, "GET", "/keys-endpoint-test/ping", null).statusCode())
                    .isEqualTo(200);
            assertThat(send(port, "GET", "/actuator/ratelimitkeys/api/alice", null)
                            .statusCode())
                    .isEqualTo(404);

            HttpResponse<String> set = send(port, "POST", "/actuator/ratelimitkeys/api/alice", "{\"limits\":\"2/1h\"}");
            assertThat(set.statusCode()).as(set.body()).isEqualTo(200);
            JsonNode entry = JSON.readTree(set.body());
            assertThat(entry.at("/limits/0").asString()).isEqualTo("2/1h");
            assertThat(entry.at("/changedBy").asString()).isEqualTo("unknown");
            // The live bucket shrinks to 2: two more calls, then 429.
            assertThat(send(port, "GET", "/keys-endpoint-test/ping", null).statusCode())
                    .isEqualTo(200);
            assertThat(send(port, "GET", "/keys-endpoint-test/ping", null).statusCode())
                    .isEqualTo(200);
            assertThat(send(port, "GET", "/keys-endpoint-test/ping", null).statusCode())
                    .isEqualTo(429);

            assertThat(send(port, "POST", "/actuator/ratelimitkeys/api/alice", "{\"reset\":true}")
                            .statusCode())
                    .isEqualTo(200);
            assertThat(send(port, "GET", "/keys-endpoint-test/ping", null).statusCode())
                    .as("reset: full again")
                    .isEqualTo(200);

            HttpResponse<String> page = send(port, "GET", "/actuator/ratelimitkeys/api?count=10", null);
            assertThat(JSON.readTree(page.body()).at("/entries/0/key").asString())
                    .isEqualTo("alice");

            assertThat(JSON.readTree(send(port, "DELETE", "/actuator/ratelimitkeys/api/alice", null)
                                    .body())
                            .at("/removed")
                            .asBoolean())
                    .isTrue();
            assertThat(send(port, "GET", "/actuator/ratelimitkeys/api/alice", null)
                            .statusCode())
                    .isEqualTo(404);
        }

        @Test
        void refusesBadInputWithAMessageNeverA500() throws Exception {
            for (String body : new String[] {
                "{}",
                "{\"limits\":\"lots\"}",
                "{\"plan\":\"platinum\"}",
                "{\"limits\":\"1/1s\",\"plan\":\"tiny\"}",
                "{\"limits\":\"\"}"
            }) {
                HttpResponse<String> r = send(port, "POST", "/actuator/ratelimitkeys/api/bob", body);
                assertThat(r.statusCode()).as("%s -> %s", body, r.body()).isEqualTo(400);
                assertThat(JSON.readTree(r.body()).at("/message").asString()).isNotBlank();
            }
            assertThat(send(port, "GET", "/actuator/ratelimitkeys/api?count=0", null)
                            .statusCode())
                    .isEqualTo(400);
            assertThat(send(port, "GET", "/actuator/ratelimitkeys/api?cursor=x", null)
                            .statusCode())
                    .isEqualTo(400);
            assertThat(send(port, "GET", "/actuator/ratelimitkeys/api/bob", null)
                            .statusCode())
                    .isEqualTo(404);
        }
    }

    @Nested
    @SpringBootTest(
            classes = App.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {
                "ratelimit.rules[0].name=api",
                "ratelimit.rules[0].paths=/keys-endpoint-test/**",
                "ratelimit.rules[0].key=header:X-User",
                "ratelimit.rules[0].limits=100/1m",
                "ratelimit.limit-store.enabled=true",
                "management.endpoints.web.exposure.include=ratelimitkeys"
            })
    class ReadOnlyByDefault {

        @DynamicPropertySource
        static void props(DynamicPropertyRegistry registry) {
            redis(registry, "readonly");
        }

        @LocalServerPort
        int port;

        @Test
        void changesNothingUntilWritesAreSwitchedOn() throws Exception {
            HttpResponse<String> post =
                    send(port, "POST", "/actuator/ratelimitkeys/api/alice", "{\"limits\":\"1/1h\"}");
            assertThat(post.statusCode()).as(post.body()).isIn(404, 405);
            HttpResponse<String> delete = send(port, "DELETE", "/actuator/ratelimitkeys/api/alice", null);
            assertThat(delete.statusCode()).isIn(404, 405);
            assertThat(send(port, "GET", "/actuator/ratelimitkeys/api/alice", null)
                            .statusCode())
                    .as("read, and nothing was set")
                    .isEqualTo(404);
            for (int i = 0; i < 5; i++) {
                assertThat(send(port, "GET", "/keys-endpoint-test/ping", null).statusCode())
                        .isEqualTo(200);
            }
        }
    }
}
