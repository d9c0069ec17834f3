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
 * A plan's limits changed at run time through the {@code ratelimits} Actuator endpoint
 * ({@code POST/DELETE /actuator/ratelimits/plans/{plan}}), over real HTTP with the real auto-configuration: a key
 * assigned the plan in {@code ratelimit.keys} and a call naming it ({@code ratelimit.plan-from}) get the new limits
 * at their next request, the plan is listed as changed, and a delete goes back; with a real Redis, another instance
 * enforces the change within 2 s.
 */
class PlanChangesEndpointTest {

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
            @GetMapping("/plan-changes-test/ping")
            String ping(@RequestHeader("X-User") String user) {
                return "pong " + user;
            }
        }
    }

    private static final String[] PLANS = {
        "ratelimit.rules[0].name=api",
        "ratelimit.rules[0].paths=/plan-changes-test/**",
        "ratelimit.rules[0].key=header:X-User",
        "ratelimit.rules[0].limits=1/1h",
        "ratelimit.plans.gold=2/1h",
        "ratelimit.plans.free=1/1h",
        "ratelimit.keys[0].key=header:X-User:alice",
        "ratelimit.keys[0].plan=gold",
        "ratelimit.plan-from=header:X-Plan",
        "ratelimit.plan-header-trusted=true",
        "ratelimit.plan-rules=api",
        "management.endpoints.web.exposure.include=ratelimits",
        "management.endpoint.ratelimits.access=unrestricted"
    };

    static HttpResponse<String> send(int port, String method, String path, String json) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .timeout(Duration.ofSeconds(10));
        if (json != null) {
            b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(json));
        } else {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** @return the status of a call of the user, naming the plan in X-Plan unless it is {@code null} */
    static int ping(int port, String user, String plan) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(
                        URI.create("http://localhost:" + port + "/plan-changes-test/ping"))
                .timeout(Duration.ofSeconds(10))
                .header("X-User", user);
        if (plan != null) {
            b.header("X-Plan", plan);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString()).statusCode();
    }

    /** @return how many of n calls the user is allowed */
    static int allowed(int port, String user, String plan, int n) throws Exception {
        int allowed = 0;
        for (int i = 0; i < n; i++) {
            if (ping(port, user, plan) == 200) {
                allowed++;
            }
        }
        return allowed;
    }

    static JsonNode plan(int port, String name) throws Exception {
        JsonNode plans = JSON.readTree(
                        send(port, "GET", "/actuator/ratelimits", null).body())
                .get("plans");
        for (JsonNode p : plans) {
            if (p.get("plan").asString().equals(name)) {
                return p;
            }
        }
        throw new AssertionError("plan " + name + " not listed: " + plans);
    }

    @Nested
    @SpringBootTest(
            classes = App.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {
                "ratelimit.rules[0].name=api",
                "ratelimit.rules[0].paths=/plan-changes-test/**",
                "ratelimit.rules[0].key=header:X-User",
                "ratelimit.rules[0].limits=1/1h",
                "ratelimit.plans.gold=2/1h",
                "ratelimit.plans.free=1/1h",
                "ratelimit.keys[0].key=header:X-User:alice",
                "ratelimit.keys[0].plan=gold",
                "ratelimit.plan-from=header:X-Plan",
                "ratelimit.plan-header-trusted=true",
                "ratelimit.plan-rules=api",
                "management.endpoints.web.exposure.include=ratelimits",
                "management.endpoint.ratelimits.access=unrestricted"
            })
    class WithoutRedis {

        @LocalServerPort
        int port;

        @Test
        void aKeyOfRatelimitKeysAndACallNamingThePlanGetTheNewLimitsAndADeleteGoesBack() throws Exception {
            assertThat(allowed(port, "alice", null, 3)).isEqualTo(2);
            assertThat(allowed(port, "p1", "gold", 3)).isEqualTo(2);

            HttpResponse<String> post = send(port, "POST", "/actuator/ratelimits/plans/gold", "{\"limits\":\"4/1h\"}");

            assertThat(post.statusCode()).as(post.body()).isEqualTo(200);
            JsonNode answer = JSON.readTree(post.body());
            assertThat(answer.at("/limits/0").asString()).isEqualTo("4/1h");
            assertThat(answer.at("/configuredLimits/0").asString()).isEqualTo("2/1h");
            assertThat(answer.at("/appliesTo").asString()).isEqualTo("this instance");
            // Buckets keep their state: capacity 2 -> 4 gains 2.
            assertThat(allowed(port, "alice", null, 5)).as("ratelimit.keys").isEqualTo(2);
            assertThat(allowed(port, "p1", "gold", 5)).as("plan-from").isEqualTo(2);
            assertThat(allowed(port, "p2", "gold", 6)).isEqualTo(4);
            JsonNode listed = plan(port, "gold");
            assertThat(listed.at("/changed").asBoolean()).isTrue();
            assertThat(listed.at("/limits/0").asString()).isEqualTo("4/1h");
            assertThat(listed.at("/changedAt").asString()).isNotEmpty();
            assertThat(plan(port, "free").at("/changed").asBoolean()).isFalse();

            HttpResponse<String> delete = send(port, "DELETE", "/actuator/ratelimits/plans/gold", null);
            assertThat(delete.statusCode()).as(delete.body()).isEqualTo(200);
            assertThat(JSON.readTree(delete.body()).at("/restored").asBoolean()).isTrue();
            assertThat(plan(port, "gold").at("/changed").asBoolean()).isFalse();
            assertThat(allowed(port, "p3", "gold", 4)).isEqualTo(2);
        }

        @Test
        void refusesLimitsTheRuleCannotUseWith400AndAnUnknownPlanWith404() throws Exception {
            HttpResponse<String> twice =
                    send(port, "POST", "/actuator/ratelimits/plans/gold", "{\"limits\":\"5/1s,9/1s\"}");
            assertThat(twice.statusCode()).isEqualTo(400);
            assertThat(twice.body()).contains("plan 'gold' (from the call, ratelimit.plan-from) has limits");
            HttpResponse<String> typed = send(port, "POST", "/actuator/ratelimits/plans/gold", "{\"limits\":5}");
            assertThat(typed.statusCode()).isEqualTo(400);
            HttpResponse<String> unknown =
                    send(port, "POST", "/actuator/ratelimits/plans/platinum", "{\"limits\":\"1/1s\"}");
            assertThat(unknown.statusCode()).isEqualTo(404);
            assertThat(unknown.body()).contains("known plans: [free, gold]");
            HttpResponse<String> other = send(port, "POST", "/actuator/ratelimits/other/gold", "{\"limits\":\"1/1s\"}");
            assertThat(other.statusCode()).isEqualTo(404);
            assertThat(plan(port, "gold").at("/changed").asBoolean()).isFalse();
        }
    }

    /** Two instances of one application on one Redis, each with its own Actuator endpoint. */
    @Nested
    class TwoInstancesOnRedis {

        private ConfigurableApplicationContext start(String prefix) {
            return new SpringApplicationBuilder(App.class)
                    .properties(PLANS)
                    .properties(
                            "server.port=0",
                            "ratelimit.redis.url=" + REDIS.uri(),
                            "ratelimit.redis.key-prefix=" + prefix,
                            "ratelimit.limit-store.enabled=true",
                            "ratelimit.limit-store.refresh-interval=1s")
                    .run();
        }

        private static int port(ConfigurableApplicationContext context) {
            return ((WebServerApplicationContext) context).getWebServer().getPort();
        }

        @Test
        void aChangeThroughOneInstanceIsEnforcedByTheOtherWithinTwoSeconds() throws Exception {
            try (ConfigurableApplicationContext one = start("plan-instances");
                    ConfigurableApplicationContext two = start("plan-instances")) {
                int p1 = port(one);
                int p2 = port(two);

                HttpResponse<String> post =
                        send(p1, "POST", "/actuator/ratelimits/plans/gold", "{\"limits\":\"4/1h\"}");
                assertThat(post.statusCode()).as(post.body()).isEqualTo(200);
                assertThat(JSON.readTree(post.body()).at("/appliesTo").asString())
                        .isEqualTo("every instance");

                AtomicInteger clients = new AtomicInteger();
                await().atMost(Duration.ofSeconds(2))
                        .pollInterval(Duration.ofMillis(50))
                        .until(() -> allowed(p2, "c" + clients.incrementAndGet(), "gold", 3) == 3);
                assertThat(allowed(p2, "alice", null, 6))
                        .as("ratelimit.keys on the other instance")
                        .isEqualTo(4);
                assertThat(plan(p2, "gold").at("/limits/0").asString()).isEqualTo("4/1h");

                HttpResponse<String> delete = send(p1, "DELETE", "/actuator/ratelimits/plans/gold", null);
                assertThat(delete.statusCode()).as(delete.body()).isEqualTo(200);
                await().atMost(Duration.ofSeconds(2))
                        .pollInterval(Duration.ofMillis(50))
                        .until(() -> allowed(p2, "d" + clients.incrementAndGet(), "gold", 3) == 2);
                assertThat(plan(p2, "gold").at("/changed").asBoolean()).isFalse();
            }
        }
    }
}
