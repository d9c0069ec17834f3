package io.github.ratelimit.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.testing.RateLimitFields;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpHeaders;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * Spring WebFlux on a real Reactor Netty port: no response header or body a client reads names the class or method
 * of an unnamed {@code @RateLimit} rule, whether the filter decided the handler's rules or the advisor did on
 * subscription (a key that reads the method's arguments) and the exception handler answered. What clients read is
 * the same on every response, and differs between the rules of one response. And the headers of a call the advisor
 * refuses report the URL rules with the token they gave back.
 */
class WebFluxUnnamedRulesTest {

    private static ConfigurableApplicationContext context;
    private static WebTestClient client;

    @BeforeAll
    static void start() {
        context = WebFluxApps.start(
                App.class,
                "ratelimit.headers=ietf-draft-09,x-ratelimit",
                "ratelimit.rules[0].name=regions",
                "ratelimit.rules[0].paths=/regions/*",
                "ratelimit.rules[0].limits=10/1h");
        client = WebFluxApps.client(context);
    }

    @AfterAll
    static void stop() {
        context.close();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import({QuarterlyFigures.class, Regions.class})
    static class App {}

    /** Two unnamed rules on each request: the type's, and the method's. */
    @RestController
    @RateLimit(perHour = 100)
    static class QuarterlyFigures {

        @GetMapping("/figures")
        @RateLimit(perHour = 2)
        Mono<String> compileFigures() {
            return Mono.just("figures");
        }

        /** Decided by the advisor on subscription: its key reads the argument. */
        @GetMapping("/figures/{region}")
        @RateLimit(key = "#region", perHour = 1)
        Mono<String> compileRegion(@PathVariable String region) {
            return Mono.just(region);
        }
    }

    /** A URL rule, and a rule decided on subscription. */
    @RestController
    static class Regions {

        @GetMapping("/regions/{region}")
        @RateLimit(name = "region", key = "#region", perHour = 1)
        Mono<String> region(@PathVariable String region) {
            return Mono.just(region);
        }
    }

    /** A response whose every header and body names neither the controller nor its methods. */
    private static EntityExchangeResult<String> get(String path, int status) {
        EntityExchangeResult<String> result = client.get()
                .uri(path)
                .exchange()
                .expectStatus()
                .isEqualTo(status)
                .expectBody(String.class)
                .returnResult();
        result.getResponseHeaders()
                .forEach((name, values) -> assertThat(values)
                        .as("header %s", name)
                        .allSatisfy(v -> assertThat(v)
                                .doesNotContain("Quarterly")
                                .doesNotContain("compile")
                                .doesNotContain("#")));
        assertThat(String.valueOf(result.getResponseBody()))
                .doesNotContain("Quarterly")
                .doesNotContain("compile")
                .doesNotContain("#");
        return result;
    }

    private static List<String> items(EntityExchangeResult<String> result) {
        HttpHeaders headers = result.getResponseHeaders();
        List<String> policy = new ArrayList<>(RateLimitFields.parse(headers.getFirst("RateLimit-Policy"), "q", "w")
                .keySet());
        assertThat(RateLimitFields.parse(headers.getFirst("RateLimit"), "r", "t")
                        .keySet())
                .containsExactlyElementsOf(policy);
        return policy;
    }

    @Test
    void aHandlerDecidedByTheFilterNamesNoClassOrMethod() {
        List<String> items = items(get("/figures", 200));
        assertThat(items)
                .as("the type's rule and the method's, told apart")
                .hasSize(2)
                .doesNotHaveDuplicates();
        assertThat(items(get("/figures", 200))).as("the same on every response").isEqualTo(items);
        EntityExchangeResult<String> rejected = get("/figures", 429);
        assertThat(items(rejected)).isEqualTo(items);
        String methodRule = items.get(1).substring(0, items.get(1).lastIndexOf("-1h"));
        assertThat(rejected.getResponseBody()).contains("Rate limit of rule '" + methodRule + "' exceeded");
    }

    @Test
    void aRejectionOnSubscriptionReportsTheUrlRuleWithItsTokenBack() {
        assertThat(RateLimitFields.parse(
                        get("/regions/south", 200).getResponseHeaders().getFirst("RateLimit"), "r", "t"))
                .containsKey("regions-1h")
                .extractingByKey("regions-1h")
                .extracting(m -> m.get("r"))
                .isEqualTo(9L);
        // The URL rule took a token for the call the handler's rule refused, and got it back.
        assertThat(RateLimitFields.parse(
                        get("/regions/south", 429).getResponseHeaders().getFirst("RateLimit"), "r", "t"))
                .extractingByKey("regions-1h")
                .extracting(m -> m.get("r"))
                .isEqualTo(9L);
        assertThat(RateLimitFields.parse(
                        get("/regions/west", 200).getResponseHeaders().getFirst("RateLimit"), "r", "t"))
                .extractingByKey("regions-1h")
                .extracting(m -> m.get("r"))
                .isEqualTo(8L);
    }

    @Test
    void aHandlerDecidedOnSubscriptionNamesNoClassOrMethod() {
        List<String> items = items(get("/figures/north", 200));
        assertThat(items).hasSize(2).doesNotHaveDuplicates();
        EntityExchangeResult<String> rejected = get("/figures/north", 429);
        assertThat(items(rejected)).isEqualTo(items);
        String methodRule = items.get(1).substring(0, items.get(1).lastIndexOf("-1h"));
        assertThat(rejected.getResponseBody()).contains("Rate limit of rule '" + methodRule + "' exceeded");
    }
}
