package io.github.ratelimit.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimit;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * {@code ratelimit.shadow=true} on WebFlux over real HTTP: the WebFilter's URL rule and a handler's {@code @RateLimit}
 * that would reject let every request through and write no header that claims a limit.
 */
class WebFluxDryRunTest {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Handlers.class)
    static class App {}

    @RestController
    static class Handlers {
        @GetMapping("/dry/hello")
        @RateLimit(name = "wdr-hello", key = "ip", perHour = 1)
        Mono<String> hello() {
            return Mono.just("hello");
        }

        @GetMapping("/dry/items")
        Mono<String> items() {
            return Mono.just("items");
        }

        @PostMapping("/dry/batch")
        @RateLimit(name = "wdr-batch", key = "ip", perMinute = 10, permits = "#items.size()")
        Mono<String> batch(@RequestBody List<String> items) {
            return Mono.just("took " + items.size());
        }
    }

    @Test
    void rulesThatWouldRejectLetEveryRequestThrough() {
        try (ConfigurableApplicationContext context = WebFluxApps.start(
                App.class,
                "ratelimit.shadow=true",
                "ratelimit.rules[0].name=wdr-site",
                "ratelimit.rules[0].paths=/dry/**",
                "ratelimit.rules[0].key=ip",
                "ratelimit.rules[0].limits=2/1h")) {
            WebTestClient client = WebFluxApps.client(context);
            for (int i = 0; i < 4; i++) {
                client.get()
                        .uri("/dry/hello")
                        .exchange()
                        .expectStatus()
                        .isOk()
                        .expectHeader()
                        .doesNotExist("RateLimit")
                        .expectHeader()
                        .doesNotExist("RateLimit-Policy")
                        .expectHeader()
                        .doesNotExist("X-RateLimit-Limit")
                        .expectHeader()
                        .doesNotExist("Retry-After");
            }
        }
    }

    /**
     * A call no window could hold is answered 413 without the dry run; with it, the handler answers and the rule counts
     * what it would have rejected. (Issue 33, item 3.)
     */
    @Test
    void aCallNoWindowCouldHoldReachesTheHandlerAndIsCounted() {
        try (ConfigurableApplicationContext context = WebFluxApps.start(
                App.class,
                "ratelimit.shadow=true",
                "ratelimit.rules[0].name=wdr-items",
                "ratelimit.rules[0].paths=/dry/items",
                "ratelimit.rules[0].key=ip",
                "ratelimit.rules[0].limits=10/1m",
                "ratelimit.rules[0].permits=header:X-Items")) {
            WebTestClient client = WebFluxApps.client(context);
            client.get()
                    .uri("/dry/items")
                    .header("X-Items", "11")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody(String.class)
                    .isEqualTo("items");
            client.post()
                    .uri("/dry/batch")
                    .header("Content-Type", "application/json")
                    .bodyValue(List.of("x", "x", "x", "x", "x", "x", "x", "x", "x", "x", "x"))
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody(String.class)
                    .isEqualTo("took 11");
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.get("ratelimit.requests")
                            .tag("rule", "wdr-items")
                            .tag("outcome", "shadow_rejected")
                            .counter()
                            .count())
                    .isEqualTo(1);
            assertThat(registry.get("ratelimit.requests")
                            .tag("rule", "wdr-batch")
                            .tag("outcome", "shadow_rejected")
                            .counter()
                            .count())
                    .isEqualTo(1);
        }
    }
}
