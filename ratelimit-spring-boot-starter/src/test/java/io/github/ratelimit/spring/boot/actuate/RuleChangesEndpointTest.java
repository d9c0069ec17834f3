package io.github.ratelimit.spring.boot.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.ratelimit.testing.redis.RedisServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * A rule's own limits and mode changed at run time through the {@code ratelimits} Actuator endpoint, over real HTTP
 * with the real auto-configuration: read-only by default, checked as at start-up, listed as changed, enforced by the
 * next request; and with a real Redis, enforced by another instance within 2 s.
 */
class RuleChangesEndpointTest {

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
            @GetMapping("/rule-changes-test/ping")
            String ping(@RequestHeader("X-User") String user) {
                return "pong " + user;
            }
        }
    }

    private static final String[] RULE = {
        "ratelimit.rules[0].name=api",
        "ratelimit.rules[0].paths=/rule-changes-test/**",
        "ratelimit.rules[0].key=header:X-User",
        "ratelimit.rules[0].limits=1/1h",
        "management.endpoints.web.exposure.include=ratelimits"
    };

    static HttpResponse<String> send(int port, String method, String path, String user, String json) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .timeout(Duration.ofSeconds(10))
                .header("X-User", user);
        if (json != null) {
            b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(json));
        } else {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static int ping(int port, String user) throws Exception {
        return send(port, "GET", "/rule-changes-test/ping", user, null).statusCode();
    }

    static JsonNode rule(int port) throws Exception {
        JsonNode rules = JSON.readTree(
                        send(port, "GET", "/actuator/ratelimits", "x", null).body())
                .get("rules");
        for (JsonNode r : rules) {
            if (r.get("name").asString().equals("api")) {
                return r;
            }
        }
        throw new AssertionError("rule api not listed: " + rules);
    }

    @Nested
    @SpringBootTest(
            classes = App.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {
                "ratelimit.rules[0].name=api",
                "ratelimit.rules[0].paths=/rule-changes-test/**",
                "ratelimit.rules[0].key=header:X-User",
                "ratelimit.rules[0].limits=1/1h",
                "management.endpoints.web.exposure.include=ratelimits"
            })
    class ReadOnlyByDefault {

        @LocalServerPort
        int port;

        @Test
        void aChangeIsNotAcceptedAndTheRuleKeepsItsLimits() throws Exception {
            HttpResponse<String> post = send(port, "POST", "/actuator/ratelimits/api", "ops", "{\"limits\":\"5/1h\"}");
            assertThat(post.statusCode()).as(post.body()).isNotEqualTo(200);
            assertThat(send(port, "DELETE", "/actuator/ratelimits/api", "ops", null)
                            .statusCode())
                    .isNotEqualTo(200);
            assertThat(ping(port, "alice")).isEqualTo(200);
            assertThat(ping(port, "alice")).isEqualTo(429);
            assertThat(rule(port).has("configuredLimits")).isFalse();
        }
    }

    @Nested
    @SpringBootTest(
            classes = App.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {
                "ratelimit.rules[0].name=api",
                "ratelimit.rules[0].paths=/rule-changes-test/**",
                "ratelimit.rules[0].key=header:X-User",
                "ratelimit.rules[0].limits=1/1h",
                "management.endpoints.web.exposure.include=ratelimits",
                "management.endpoint.ratelimits.access=unrestricted"
            })
    class WithoutRedis {

        @LocalServerPort
        int port;

        @Test
        void changesListsAndTakesBackARuleInThisInstance() throws Exception {
            HttpResponse<String> post = send(port, "POST", "/actuator/ratelimits/api", "ops", "{\"limits\":\"3/1h\"}");
            assertThat(post.statusCode()).as(post.body()).isEqualTo(200);
            JsonNode answer = JSON.readTree(post.body());
            assertThat(answer.at("/limits/0").asString()).isEqualTo("3/1h");
            assertThat(answer.at("/configuredLimits/0").asString()).isEqualTo("1/1h");
            assertThat(answer.at("/appliesTo").asString()).isEqualTo("this instance");

            assertThat(ping(port, "bob")).isEqualTo(200);
            assertThat(ping(port, "bob")).isEqualTo(200);
            assertThat(ping(port, "bob")).isEqualTo(200);
            assertThat(ping(port, "bob")).isEqualTo(429);
            JsonNode listed = rule(port);
            assertThat(listed.at("/limits/0").asString()).isEqualTo("3/1h");
            assertThat(listed.at("/configuredLimits/0").asString()).isEqualTo("1/1h");
            assertThat(listed.at("/changedBy").asString()).isEqualTo("unknown");
            assertThat(listed.at("/changedAt").asString()).isNotEmpty();

            HttpResponse<String> delete = send(port, "DELETE", "/actuator/ratelimits/api", "ops", null);
            assertThat(delete.statusCode()).as(delete.body()).isEqualTo(200);
            assertThat(JSON.readTree(delete.body()).at("/restored").asBoolean()).isTrue();
            assertThat(rule(port).has("configuredLimits")).isFalse();
            assertThat(ping(port, "carol")).isEqualTo(200);
            assertThat(ping(port, "carol")).isEqualTo(429);
        }

        @Test
        void refusesWhatTheRuleCannotTakeWith400AndTheMessage() throws Exception {
            HttpResponse<String> burst =
                    send(port, "POST", "/actuator/ratelimits/api", "ops", "{\"limits\":\"5/1s,9/1s\"}");
            assertThat(burst.statusCode()).isEqualTo(400);
            assertThat(burst.body()).contains("two limits share the window 1s");
            HttpResponse<String> soft = send(port, "POST", "/actuator/ratelimits/api", "ops", "{\"mode\":\"SOFT\"}");
            assertThat(soft.statusCode()).isEqualTo(400);
            assertThat(soft.body()).contains("only HARD and SHADOW change into each other");
            HttpResponse<String> typed = send(port, "POST", "/actuator/ratelimits/api", "ops", "{\"limits\":5}");
            assertThat(typed.statusCode()).isEqualTo(400);
            HttpResponse<String> unknown =
                    send(port, "POST", "/actuator/ratelimits/nope", "ops", "{\"limits\":\"1/1s\"}");
            assertThat(unknown.statusCode()).isEqualTo(404);
            // Actuator merges body fields over the path's selectors: a body naming another rule is refused.
            HttpResponse<String> other =
                    send(port, "POST", "/actuator/ratelimits/nope", "ops", "{\"rule\":\"api\",\"limits\":\"9/1s\"}");
            assertThat(other.statusCode()).isEqualTo(400);
            assertThat(other.body()).contains("the path names rule");
            HttpResponse<String> taken = send(port, "DELETE", "/actuator/ratelimits/nope?rule=api", "ops", null);
            assertThat(taken.statusCode()).isEqualTo(400);
            assertThat(rule(port).has("configuredLimits")).isFalse();
        }
    }

    /** Two instances of one application on one Redis, each with its own Actuator endpoint. */
    @Nested
    class TwoInstancesOnRedis {

        private ConfigurableApplicationContext start(String prefix) {
            return new SpringApplicationBuilder(App.class)
                    .properties(RULE)
                    .properties(
                            "server.port=0",
                            "management.endpoint.ratelimits.access=unrestricted",
                            "ratelimit.redis.url=" + REDIS.uri(),
                            "ratelimit.redis.key-prefix=" + prefix,
                            "ratelimit.limit-store.enabled=true",
                            // the default, said here: the bound on how long the other instance keeps the old limits
                            "ratelimit.limit-store.refresh-interval=1s")
                    .run();
        }

        private static int port(ConfigurableApplicationContext context) {
            return ((WebServerApplicationContext) context).getWebServer().getPort();
        }

        @Test
        void aChangeThroughOneInstanceIsEnforcedByTheOtherWithinTwoSeconds() throws Exception {
            try (ConfigurableApplicationContext one = start("two-instances");
                    ConfigurableApplicationContext two = start("two-instances")) {
                int p1 = port(one);
                int p2 = port(two);
                assertThat(ping(p2, "dave")).isEqualTo(200);
                assertThat(ping(p2, "dave")).isEqualTo(429);

                HttpResponse<String> post =
                        send(p1, "POST", "/actuator/ratelimits/api", "ops", "{\"limits\":\"4/1h\"}");
                assertThat(post.statusCode()).as(post.body()).isEqualTo(200);
                assertThat(JSON.readTree(post.body()).at("/appliesTo").asString())
                        .isEqualTo("every instance");

                // dave's bucket on the other instance grows 1 -> 4 (additive): 3 more calls, then 429.
                // Enforced: a new client gets a second call (the configured 1/1h would refuse it).
                AtomicInteger clients = new AtomicInteger();
                await().atMost(Duration.ofSeconds(2))
                        .pollInterval(Duration.ofMillis(50))
                        .until(() -> {
                            String client = "c" + clients.incrementAndGet();
                            return ping(p2, client) == 200 && ping(p2, client) == 200;
                        });
                assertThat(ping(p2, "dave"))
                        .as("dave's bucket grew additively, 1 -> 4")
                        .isEqualTo(200);
                assertThat(rule(p2).at("/limits/0").asString()).isEqualTo("4/1h");
                assertThat(ping(p2, "erin")).isEqualTo(200);
                assertThat(ping(p2, "erin")).isEqualTo(200);
                assertThat(ping(p2, "erin")).isEqualTo(200);
                assertThat(ping(p2, "erin")).isEqualTo(200);
                assertThat(ping(p2, "erin")).isEqualTo(429);

                HttpResponse<String> delete = send(p1, "DELETE", "/actuator/ratelimits/api", "ops", null);
                assertThat(delete.statusCode()).as(delete.body()).isEqualTo(200);
                await().atMost(Duration.ofSeconds(2))
                        .pollInterval(Duration.ofMillis(50))
                        .until(() -> {
                            String client = "d" + clients.incrementAndGet();
                            return ping(p2, client) == 200 && ping(p2, client) == 429;
                        });
                assertThat(rule(p2).has("configuredLimits")).isFalse();
                assertThat(ping(p2, "frank")).isEqualTo(200);
                assertThat(ping(p2, "frank")).isEqualTo(429);
            }
        }
    }
}
