package io.github.ratelimit.webflux;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimitHeaders;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;

/**
 * Rejections go through the reactive error handling an application already customises: an
 * {@code @ExceptionHandler} in a {@code @ControllerAdvice} answers those its handler methods raise, a
 * {@code WebExceptionHandler} of higher precedence answers those of the filter. Keys in SpEL read the request
 * ({@code #request}, a {@code ServerHttpRequest}) and the exchange ({@code #exchange}: path variables).
 */
class WebFluxCustomRejectionTest {

    private static ConfigurableApplicationContext context;
    private static WebTestClient client;

    @BeforeAll
    static void start() {
        context = WebFluxApps.start(
                App.class,
                "ratelimit.rules[0].name=wcr-tenant",
                "ratelimit.rules[0].paths=/wcr/url/**",
                "ratelimit.rules[0].key=#request.headers.getFirst('X-Tenant')",
                "ratelimit.rules[0].limits=1/1m");
        client = WebFluxApps.client(context);
    }

    @AfterAll
    static void stop() {
        context.close();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import({Handlers.class, Advice.class})
    static class App {
        /** Answers the filter's rejections before the starter's handler (order -2). */
        @Bean
        @Order(-3)
        WebExceptionHandler teapotForUrlRules() {
            return (exchange, ex) -> {
                if (!(ex instanceof RateLimitExceededException rejected)) {
                    return Mono.error(ex);
                }
                exchange.getResponse().setStatusCode(HttpStatus.I_AM_A_TEAPOT);
                exchange.getResponse()
                        .getHeaders()
                        .set("Retry-After", String.valueOf(RateLimitHeaders.retryAfterSeconds(rejected.decision())));
                byte[] body = ("slow down, "
                                + exchange.getRequest().getHeaders().getFirst("X-Tenant"))
                        .getBytes(StandardCharsets.UTF_8);
                return exchange.getResponse()
                        .writeWith(
                                Mono.just(exchange.getResponse().bufferFactory().wrap(body)));
            };
        }
    }

    @RestController
    static class Handlers {
        @GetMapping("/wcr/url/{id}")
        Mono<String> url(@PathVariable String id) {
            return Mono.just("url " + id);
        }

        /** Keyed by the path variable, read from the exchange: decided by the filter, before the handler. */
        @RateLimit(
                name = "wcr-tenant-path",
                perMinute = 1,
                key =
                        "#exchange.getAttribute('org.springframework.web.reactive.HandlerMapping.uriTemplateVariables')['tenant']")
        @GetMapping("/wcr/tenants/{tenant}")
        Mono<String> tenant(@PathVariable String tenant) {
            return Mono.just("tenant " + tenant);
        }

        /** Keyed by the argument: decided at the call, so its rejection reaches the controller advice. */
        @RateLimit(name = "wcr-order", perMinute = 1, key = "#id")
        @GetMapping("/wcr/orders/{id}")
        Mono<String> order(@PathVariable String id) {
            return Mono.just("order " + id);
        }
    }

    @RestControllerAdvice
    static class Advice {
        @ExceptionHandler(RateLimitExceededException.class)
        ResponseEntity<String> limited(RateLimitExceededException e) {
            return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
                    .header("Retry-After", String.valueOf(RateLimitHeaders.retryAfterSeconds(e.decision())))
                    .body("advice: " + e.decision().verdicts().get(0).rule());
        }
    }

    @Test
    void aUrlRuleKeyedBySpelOverTheRequestAndAnApplicationsWebExceptionHandler() {
        client.get()
                .uri("/wcr/url/1")
                .header("X-Tenant", "acme")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wcr/url/2")
                .header("X-Tenant", "acme")
                .exchange()
                .expectStatus()
                .isEqualTo(HttpStatus.I_AM_A_TEAPOT)
                .expectHeader()
                .exists("Retry-After")
                .expectBody(String.class)
                .isEqualTo("slow down, acme");
        client.get()
                .uri("/wcr/url/3")
                .header("X-Tenant", "globex")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
    }

    @Test
    void aHandlerKeyedByAPathVariableThroughTheExchange() {
        client.get()
                .uri("/wcr/tenants/acme")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wcr/tenants/acme")
                .exchange()
                .expectStatus()
                .isEqualTo(HttpStatus.I_AM_A_TEAPOT)
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wcr/tenants/globex")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
    }

    @Test
    void aHandlersRejectionAtTheCallReachesTheControllerAdvice() {
        client.get()
                .uri("/wcr/orders/7")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wcr/orders/7")
                .exchange()
                .expectStatus()
                .isEqualTo(HttpStatus.SERVICE_UNAVAILABLE)
                .expectHeader()
                .exists("Retry-After")
                .expectBody(String.class)
                .isEqualTo("advice: wcr-order");
        client.get()
                .uri("/wcr/orders/8")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
    }
}
