package io.github.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimit;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.spring.boot.actuate.RateLimitsEndpoint;
import io.github.ratelimit.testing.RateLimitFields;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * Spring MVC over real HTTP: an unnamed {@code @RateLimit} rule is named after its class and method for operators
 * (the decisions metrics and logs get, the {@code ratelimits} endpoint), but no response header or body a client reads names them, whether the
 * filter decided the handler's rules or the advisor did at the call (a key that reads the method's arguments) and
 * the exception resolver answered. What clients read is the same on every response, and differs between the rules
 * of one response.
 */
@SpringBootTest(
        classes = UnnamedRulesOverHttpTest.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "ratelimit.headers=x-ratelimit, ietf-draft-09",
            "management.endpoints.web.exposure.include=ratelimits"
        })
class UnnamedRulesOverHttpTest {

    @SpringBootApplication
    static class App {

        @Bean
        RateLimiter.Listener recordingListener() {
            return decision -> {
                if (!decision.permitted()) {
                    DECISIONS.add(decision);
                }
            };
        }

        /** Two unnamed rules on each request: the type's, and the method's. */
        @RestController
        @RateLimit(perHour = 100)
        static class QuarterlyFigures {

            @GetMapping("/figures")
            @RateLimit(perHour = 2)
            String compileFigures() {
                return "figures";
            }

            /** Decided at the call, by the advisor: its key reads the argument. */
            @GetMapping("/figures/{region}")
            @RateLimit(key = "#region", perHour = 1)
            String compileRegion(@PathVariable String region) {
                return region;
            }
        }
    }

    @LocalServerPort
    int port;

    static final List<Decision> DECISIONS = new CopyOnWriteArrayList<>();

    @Autowired
    RateLimitsEndpoint endpoint;

    private final HttpClient http = HttpClient.newHttpClient();

    /** A response whose every header and body names neither the controller nor its methods. */
    private HttpResponse<String> get(String path) throws Exception {
        HttpResponse<String> response = http.send(
                HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        response.headers()
                .map()
                .forEach((name, values) -> assertThat(values)
                        .as("header %s", name)
                        .allSatisfy(v -> assertThat(v)
                                .doesNotContain("Quarterly")
                                .doesNotContain("compile")
                                .doesNotContain("#")));
        assertThat(response.body())
                .doesNotContain("Quarterly")
                .doesNotContain("compile")
                .doesNotContain("#");
        return response;
    }

    private static List<String> items(HttpResponse<String> response) {
        List<String> policy = new ArrayList<>(RateLimitFields.parse(
                        response.headers().firstValue("RateLimit-Policy").orElseThrow(), "q", "w")
                .keySet());
        assertThat(RateLimitFields.parse(
                                response.headers().firstValue("RateLimit").orElseThrow(), "r", "t")
                        .keySet())
                .containsExactlyElementsOf(policy);
        return policy;
    }

    @Test
    void aHandlerDecidedByTheFilterNamesNoClassOrMethod() throws Exception {
        HttpResponse<String> first = get("/figures");
        assertThat(first.statusCode()).isEqualTo(200);
        List<String> items = items(first);
        assertThat(items)
                .as("the type's rule and the method's, told apart")
                .hasSize(2)
                .doesNotHaveDuplicates();
        assertThat(items(get("/figures"))).as("the same on every response").isEqualTo(items);
        HttpResponse<String> rejected = get("/figures");
        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(items(rejected)).isEqualTo(items);
        String methodRule = items.get(1).substring(0, items.get(1).lastIndexOf("-1h"));
        assertThat(rejected.body()).contains("Rate limit of rule '" + methodRule + "' exceeded");

        // Operators know the rules by their class and method: in what listeners (metrics, logs) get, and in the
        // endpoint, beside what clients see.
        assertThat(DECISIONS)
                .anySatisfy(d -> assertThat(d.binding().rule()).isEqualTo("QuarterlyFigures#compileFigures"));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> rules =
                (List<Map<String, Object>>) endpoint.rateLimits().get("rules");
        assertThat(rules)
                .anySatisfy(rule -> assertThat(rule)
                        .containsEntry("name", "QuarterlyFigures#compileFigures")
                        .containsEntry("publicName", methodRule));
    }

    @Test
    void aHandlerDecidedAtTheCallNamesNoClassOrMethod() throws Exception {
        HttpResponse<String> first = get("/figures/north");
        assertThat(first.statusCode()).isEqualTo(200);
        List<String> items = items(first);
        assertThat(items).hasSize(2).doesNotHaveDuplicates();
        HttpResponse<String> rejected = get("/figures/north");
        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(items(rejected)).isEqualTo(items);
        String methodRule = items.get(1).substring(0, items.get(1).lastIndexOf("-1h"));
        assertThat(rejected.body()).contains("Rate limit of rule '" + methodRule + "' exceeded");
    }
}
