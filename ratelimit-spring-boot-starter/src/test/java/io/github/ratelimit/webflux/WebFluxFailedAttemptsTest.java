package io.github.ratelimit.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.spring.boot.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.testing.ManualClock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;
import reactor.core.publisher.Mono;

/**
 * On WebFlux, a URL rule that counts failures (a limit on logins, deciding before authentication on every path)
 * counts failed attempts only: a 401, however it is answered. A server error or a missing page is no wrong password,
 * so it costs the rule nothing: a user whose requests hit a bug, or a scanner's 404s, lock no one out. Over HTTP on a
 * real Netty port; each test counts by a client of its own.
 */
class WebFluxFailedAttemptsTest {

    private static ConfigurableApplicationContext context;
    private static WebTestClient client;

    @BeforeAll
    static void start() {
        context = WebFluxApps.start(
                App.class,
                "ratelimit.rules[0].name=attempts",
                "ratelimit.rules[0].paths=/**",
                "ratelimit.rules[0].key=header:X-Client",
                "ratelimit.rules[0].limits=2/1m",
                "ratelimit.rules[0].phase=before-authentication",
                "ratelimit.rules[0].count=failures");
        client = WebFluxApps.client(context);
    }

    @AfterAll
    static void stop() {
        context.close();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Handlers.class)
    static class App {
        @Bean(RateLimitAutoConfiguration.TIME_METER_BEAN)
        ManualClock rateLimitTimeMeter() {
            return new ManualClock();
        }
    }

    @RestController
    static class Handlers {
        @GetMapping("/wfa/ok")
        Mono<String> ok() {
            return Mono.just("ok");
        }

        @GetMapping("/wfa/broken")
        Mono<String> broken() {
            return Mono.error(new IllegalStateException("a bug"));
        }

        @GetMapping("/wfa/denied")
        Mono<String> denied() {
            return Mono.error(new ResponseStatusException(HttpStatus.UNAUTHORIZED, "wrong password"));
        }
    }

    private static int get(String path, String clientId) {
        return client.get()
                .uri(path)
                .header("X-Client", clientId)
                .exchange()
                .expectBody(String.class)
                .returnResult()
                .getStatus()
                .value();
    }

    @Test
    void serverErrorsAndMissingPagesAreNoFailedAttempts() {
        for (int i = 0; i < 5; i++) {
            assertThat(get("/wfa/broken", "erin")).as("server error %d", i).isEqualTo(500);
            assertThat(get("/wfa/nothing-here", "erin"))
                    .as("missing page %d", i)
                    .isEqualTo(404);
        }
        assertThat(get("/wfa/ok", "erin")).isEqualTo(200);
    }

    @Test
    void anErrorThatAnswers401IsAFailedAttempt() {
        assertThat(get("/wfa/denied", "frank")).isEqualTo(401);
        assertThat(get("/wfa/denied", "frank")).isEqualTo(401);
        assertThat(get("/wfa/ok", "frank")).isEqualTo(429);
    }
}
