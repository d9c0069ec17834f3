package io.github.ratelimit.spring.boot.actuate;

import static io.github.ratelimit.spring.boot.actuate.RateLimitKeysEndpointTest.send;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.testing.redis.RedisServer;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
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
 * The Actuator endpoints of an application with concurrency rules, over real HTTP, on a real Redis with per-key limits
 * switched on: {@code ratelimits} lists a concurrency rule (a URL rule's and an annotation's) with its
 * {@code concurrency} and no {@code limits}; {@code ratelimitkeys} refuses limits or a plan for a key of a
 * concurrency rule with a 400 that says why, and stores nothing, while a rule of windows beside it still takes them.
 */
@SpringBootTest(
        classes = ConcurrencyRulesEndpointsTest.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "ratelimit.rules[0].name=cre-slow",
            "ratelimit.rules[0].paths=/cre/slow",
            "ratelimit.rules[0].key=ip",
            "ratelimit.rules[0].concurrency=2",
            "ratelimit.rules[1].name=cre-rate",
            "ratelimit.rules[1].paths=/cre/**",
            "ratelimit.rules[1].key=ip",
            "ratelimit.rules[1].limits=100/1m",
            "ratelimit.plans.gold=1000/1h",
            "ratelimit.limit-store.enabled=true",
            "management.endpoints.web.exposure.include=ratelimits,ratelimitkeys",
            "management.endpoint.ratelimitkeys.access=unrestricted"
        })
class ConcurrencyRulesEndpointsTest {

    private static final RedisServer REDIS = RedisServer.start();
    private static final ObjectMapper JSON = new ObjectMapper();

    @AfterAll
    static void stopRedis() {
        REDIS.close();
    }

    @DynamicPropertySource
    static void props(DynamicPropertyRegistry registry) {
        registry.add("ratelimit.redis.url", () -> REDIS.uri().toString());
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Api.class)
    static class App {}

    @RestController
    static class Api {
        @GetMapping("/cre/export")
        @RateLimit(name = "cre-exports", key = "ip", concurrency = 3)
        String export() {
            return "exported";
        }
    }

    @LocalServerPort
    int port;

    private JsonNode rule(JsonNode listing, String name) {
        for (JsonNode rule : listing.at("/rules")) {
            if (rule.at("/name").asString().equals(name)) {
                return rule;
            }
        }
        throw new AssertionError("no rule " + name + " in " + listing);
    }

    private static List<String> texts(JsonNode array) {
        List<String> all = new ArrayList<>();
        array.forEach(n -> all.add(n.asString()));
        return all;
    }

    @Test
    void theListingShowsAConcurrencyRulesConcurrencyAndNoLimits() throws Exception {
        HttpResponse<String> response = send(port, "GET", "/actuator/ratelimits", null);
        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode listing = JSON.readTree(response.body());

        JsonNode slow = rule(listing, "cre-slow");
        assertThat(slow.at("/concurrency").asInt()).isEqualTo(2);
        assertThat(slow.at("/limits").isArray() && slow.at("/limits").isEmpty())
                .as("%s", slow)
                .isTrue();
        assertThat(slow.at("/key").asString()).isEqualTo("ip");

        JsonNode exports = rule(listing, "cre-exports");
        assertThat(exports.at("/concurrency").asInt()).as("an annotation's").isEqualTo(3);
        assertThat(exports.at("/limits").isEmpty()).isTrue();

        JsonNode rate = rule(listing, "cre-rate");
        assertThat(texts(rate.at("/limits"))).containsExactly("100/1m");
        assertThat(rate.has("concurrency")).as("a rule of windows has none").isFalse();
    }

    @Test
    void perKeyLimitsAndPlansForAConcurrencyRuleAreRefused() throws Exception {
        String[][] refused = {
            {"/actuator/ratelimitkeys/cre-slow/alice", "{\"limits\":\"5/1s\"}"},
            {"/actuator/ratelimitkeys/cre-slow/alice", "{\"plan\":\"gold\"}"},
            {"/actuator/ratelimitkeys/cre-exports", "{\"key\":\"alice\",\"limits\":\"5/1s,100/1m\"}"},
            {"/actuator/ratelimitkeys/cre-exports", "{\"key\":\"alice\",\"plan\":\"gold\"}"}
        };
        for (String[] change : refused) {
            HttpResponse<String> r = send(port, "POST", change[0], change[1]);
            assertThat(r.statusCode())
                    .as("%s %s -> %s", change[0], change[1], r.body())
                    .isEqualTo(400);
            assertThat(JSON.readTree(r.body()).at("/message").asString())
                    .as(r.body())
                    .contains("concurrency")
                    .contains("alice");
        }
        for (String rule : List.of("cre-slow", "cre-exports")) {
            assertThat(send(port, "GET", "/actuator/ratelimitkeys/" + rule + "/alice", null)
                            .statusCode())
                    .as("nothing was stored for %s", rule)
                    .isEqualTo(404);
            HttpResponse<String> page = send(port, "GET", "/actuator/ratelimitkeys/" + rule, null);
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(JSON.readTree(page.body()).at("/entries").isEmpty())
                    .as(page.body())
                    .isTrue();
        }

        HttpResponse<String> windows =
                send(port, "POST", "/actuator/ratelimitkeys/cre-rate/alice", "{\"limits\":\"5/1s\"}");
        assertThat(windows.statusCode())
                .as("a rule of windows takes them: %s", windows.body())
                .isEqualTo(200);
        assertThat(texts(JSON.readTree(windows.body()).at("/limits"))).containsExactly("5/1s");
    }
}
