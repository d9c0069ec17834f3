package io.github.ratelimit.webflux;

import io.github.ratelimit.RateLimit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
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
    static class App {
    }

    @RestController
    static class Handlers {
        @GetMapping("/dry/hello")
        @RateLimit(name = "wdr-hello", key = "ip", perHour = 1)
        Mono<String> hello() {
            return Mono.just("hello");
        }
    }

    @Test
    void rulesThatWouldRejectLetEveryRequestThrough() {
        try (ConfigurableApplicationContext context = WebFluxApps.start(App.class, "ratelimit.shadow=true",
                "ratelimit.rules[0].name=wdr-site", "ratelimit.rules[0].paths=/dry/**", "ratelimit.rules[0].key=ip",
                "ratelimit.rules[0].limits=2/1h")) {
            WebTestClient client = WebFluxApps.client(context);
            for (int i = 0; i < 4; i++) {
                client.get().uri("/dry/hello").exchange()
                        .expectStatus().isOk()
                        .expectHeader().doesNotExist("RateLimit")
                        .expectHeader().doesNotExist("RateLimit-Policy")
                        .expectHeader().doesNotExist("X-RateLimit-Limit")
                        .expectHeader().doesNotExist("Retry-After");
            }
        }
    }
}
