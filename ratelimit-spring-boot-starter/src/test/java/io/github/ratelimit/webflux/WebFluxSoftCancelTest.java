package io.github.ratelimit.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.spring.boot.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.testing.ManualClock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.publisher.Mono;

/**
 * A client that goes away while its request waits out a SOFT delay gives its place back: the reserved tokens are
 * returned and its place among the rule's waiters is freed. On a manual clock, so nothing waits on real time.
 */
class WebFluxSoftCancelTest {

    private static final ManualClock CLOCK = new ManualClock();
    private static ConfigurableApplicationContext context;
    private static WebClient client;

    @BeforeAll
    static void start() {
        context = WebFluxApps.start(
                App.class,
                "ratelimit.rules[0].name=wfc-soft",
                "ratelimit.rules[0].paths=/wfc/soft",
                "ratelimit.rules[0].key=global",
                "ratelimit.rules[0].limits=1/1m",
                "ratelimit.rules[0].mode=soft",
                "ratelimit.rules[0].max-delay=5m",
                "ratelimit.rules[0].max-waiting=1");
        int port = ((WebServerApplicationContext) context).getWebServer().getPort();
        client = WebClient.create("http://localhost:" + port);
    }

    @AfterAll
    static void stop() {
        context.close();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Handler.class)
    static class App {
        @Bean(RateLimitAutoConfiguration.TIME_METER_BEAN)
        ManualClock rateLimitTimeMeter() {
            return CLOCK;
        }
    }

    @RestController
    static class Handler {
        @GetMapping("/wfc/soft")
        Mono<String> soft() {
            return Mono.just("soft");
        }
    }

    private static Mono<String> get() {
        return client.get().uri("/wfc/soft").retrieve().bodyToMono(String.class);
    }

    @Test
    void aClientThatGoesAwayWhileWaitingReturnsItsTokensAndItsPlace() throws Exception {
        assertThat(get().block(Duration.ofSeconds(10))).isEqualTo("soft");
        // The next request waits a minute on the manual clock, and its client goes away.
        delayedRequest().cancel(true);
        // The rule lets one request wait: a second is delayed (not rejected as waiters-full) only once the server
        // has seen the first client go. It goes away too.
        delayedRequest().cancel(true);
        // Both returned their tokens: the request that stays waits one minute, not three.
        CompletableFuture<String> stays = delayedRequest();
        CLOCK.advance(Duration.ofMinutes(1));
        assertThat(stays.get(10, TimeUnit.SECONDS)).isEqualTo("soft");
    }

    /**
     * Sends requests until one is delayed (its timer registered on the manual clock), retrying while the rule's one
     * place for a waiting request is taken (429).
     */
    private static CompletableFuture<String> delayedRequest() {
        return org.awaitility.Awaitility.await("a request the SOFT rule delays")
                .atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(20))
                .until(WebFluxSoftCancelTest::requestDelayedOrNull, Objects::nonNull);
    }

    /** @return a request that waits for its delay, or {@code null} when it was rejected for want of a waiting place */
    private static CompletableFuture<String> requestDelayedOrNull() {
        int timers = CLOCK.pendingTimers();
        CompletableFuture<String> request = get().toFuture();
        org.awaitility.Awaitility.await("the request ends or waits")
                .atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(5))
                .until(() -> request.isDone() || CLOCK.pendingTimers() != timers);
        if (!request.isDone()) {
            return request;
        }
        try {
            request.join();
            throw new AssertionError("a request went through without waiting");
        } catch (java.util.concurrent.CompletionException e) {
            assertThat(e.getCause()).isInstanceOf(WebClientResponseException.class);
            assertThat(((WebClientResponseException) e.getCause())
                            .getStatusCode()
                            .value())
                    .as("rejected only because the place for a waiting request is taken")
                    .isEqualTo(429);
            return null;
        }
    }
}
