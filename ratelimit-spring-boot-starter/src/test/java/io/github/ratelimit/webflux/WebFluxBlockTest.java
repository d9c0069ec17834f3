package io.github.ratelimit.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.spring.boot.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.testing.ManualClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * {@code block-for} on WebFlux over real HTTP: a handler's {@code @RateLimit} and a URL rule answer 429 with
 * {@code Retry-After} the block's remaining time after the key's bucket refilled (a manual clock).
 */
class WebFluxBlockTest {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Handlers.class)
    static class App {
        /** The limiter's clock: time stands still unless the test moves it. */
        @Bean(RateLimitAutoConfiguration.TIME_METER_BEAN)
        ManualClock rateLimitTimeMeter() {
            return new ManualClock();
        }
    }

    @RestController
    static class Handlers {
        @GetMapping("/wb/annotated")
        @RateLimit(name = "wb-annotated", key = "header:X-User", perMinute = 2, blockFor = "10m")
        Mono<String> annotated() {
            return Mono.just("annotated");
        }

        @GetMapping("/wb/url")
        Mono<String> url() {
            return Mono.just("url");
        }
    }

    private static EntityExchangeResult<String> get(WebTestClient client, String path, String user) {
        return client.get()
                .uri(path)
                .header("X-User", user)
                .exchange()
                .expectBody(String.class)
                .returnResult();
    }

    @Test
    void answers429WithTheRemainingBlockAfterTheBucketRefilled() {
        try (ConfigurableApplicationContext context = WebFluxApps.start(
                App.class,
                "ratelimit.rules[0].name=wb-url",
                "ratelimit.rules[0].paths=/wb/url",
                "ratelimit.rules[0].key=header:X-User",
                "ratelimit.rules[0].limits=2/1m",
                "ratelimit.rules[0].block-for=5m")) {
            WebTestClient client = WebFluxApps.client(context);
            ManualClock clock = context.getBean(ManualClock.class);
            for (String path : new String[] {"/wb/annotated", "/wb/url"}) {
                assertThat(get(client, path, "grace").getStatus().value()).isEqualTo(200);
                assertThat(get(client, path, "grace").getStatus().value()).isEqualTo(200);
                assertThat(get(client, path, "grace").getStatus().value()).isEqualTo(429);
            }
            clock.advance(Duration.ofMinutes(2));
            EntityExchangeResult<String> annotated = get(client, "/wb/annotated", "grace");
            assertThat(annotated.getStatus().value())
                    .as("the bucket is full again")
                    .isEqualTo(429);
            assertThat(annotated.getResponseHeaders().getFirst("Retry-After")).isEqualTo("480");
            assertThat(annotated.getResponseBody()).contains("blocks this client");
            EntityExchangeResult<String> url = get(client, "/wb/url", "grace");
            assertThat(url.getStatus().value()).isEqualTo(429);
            assertThat(url.getResponseHeaders().getFirst("Retry-After")).isEqualTo("180");
            assertThat(url.getResponseHeaders().getFirst("RateLimit")).isEqualTo("\"wb-url-1m\";r=0;t=180");
            assertThat(get(client, "/wb/url", "heidi").getStatus().value())
                    .as("another key")
                    .isEqualTo(200);
            clock.advance(Duration.ofMinutes(3));
            assertThat(get(client, "/wb/url", "grace").getStatus().value())
                    .as("the URL rule's block ended")
                    .isEqualTo(200);
            assertThat(get(client, "/wb/annotated", "grace").getStatus().value())
                    .as("the handler's still runs")
                    .isEqualTo(429);
        }
    }
}
