package io.github.ratelimit.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Charging what a call used on WebFlux over real HTTP, on the local store and on a real Redis: a handler's
 * {@code @RateLimit(charge = "#result.usage.totalTokens")} charged with what its {@code Mono} gave (a {@code Flux}
 * with its last element), and a URL rule's {@code charge=response-header:X-Tokens-Used} read once the chain ran.
 * Limits per hour, so the bucket refills one token every 3.6 s: the counts hold on a slow machine. One application per
 * store for the class; each test has its own client address.
 */
class WebFluxChargeWhatWasUsedTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Handlers.class)
    static class App {}

    record Usage(long totalTokens) {}

    record Completion(Usage usage) {}

    @RestController
    static class Handlers {
        @GetMapping("/wu/complete")
        @RateLimit(name = "wu-completions", key = "ip", limits = "1000/1h", charge = "#result.usage.totalTokens")
        Mono<Completion> complete(@RequestParam long tokens) {
            return Mono.just(new Completion(new Usage(tokens)));
        }

        @GetMapping("/wu/stream")
        @RateLimit(name = "wu-stream", key = "ip", limits = "1000/1h", charge = "#result")
        Flux<Long> stream(@RequestParam long tokens) {
            // The running total; the last element is what the call used.
            return Flux.just(tokens / 2, tokens);
        }

        @GetMapping("/wu/url")
        Mono<String> url(@RequestParam String used, ServerHttpResponse response) {
            response.getHeaders().set("X-Tokens-Used", used);
            return Mono.just("done");
        }
    }

    private static final WebFluxApps.Shared APPS = new WebFluxApps.Shared(WebFluxChargeWhatWasUsedTest::start);

    @AfterAll
    static void stop() {
        APPS.close();
    }

    /** The application on {@code store}, its requests from {@code address}. */
    private static WebTestClient client(String store, String address) {
        return WebFluxApps.client(APPS.get(store), address);
    }

    private static ConfigurableApplicationContext start(String store) {
        List<String> properties = new ArrayList<>(List.of(
                "ratelimit.trusted-proxies=127.0.0.1,::1",
                "ratelimit.rules[0].name=wu-url",
                "ratelimit.rules[0].paths=/wu/url",
                "ratelimit.rules[0].key=ip",
                "ratelimit.rules[0].limits=1000/1h",
                "ratelimit.rules[0].charge=response-header:X-Tokens-Used"));
        if (store.equals("redis")) {
            properties.add("ratelimit.redis.url=" + redis.uri());
            properties.add("ratelimit.redis.key-prefix=wu-" + System.nanoTime());
            properties.add("ratelimit.redis.command-timeout=2s");
        }
        return WebFluxApps.start(App.class, properties.toArray(String[]::new));
    }

    /**
     * Two calls of 600 pass; the third is refused for the 200 of debt and its own 1 token: 723.6 s at 1000/1h. A call
     * is charged once its response is written, so the third waits until the second's charge has landed
     * ({@code ratelimit.settlements}): a client that asks again sooner may be decided before it.
     */
    private static void debtRefusesTheThird(String store, String address, String rule, String path) {
        WebTestClient client = client(store, address);
        MeterRegistry meters = APPS.get(store).getBean(MeterRegistry.class);
        double settled = settlements(meters, rule);
        for (int i = 0; i < 2; i++) {
            client.get().uri(path + "600").exchange().expectStatus().isOk();
        }
        Awaitility.await("both charges landed")
                .atMost(Duration.ofSeconds(10))
                .until(() -> settlements(meters, rule) >= settled + 2);
        client.get()
                .uri(path + "600")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectHeader()
                .value("Retry-After", v -> assertThat(Long.parseLong(v)).isBetween(700L, 724L));
    }

    /** @return the settlements of the rule's calls so far, whatever their result */
    private static double settlements(MeterRegistry meters, String rule) {
        return meters.find("ratelimit.settlements").tag("rule", rule).counters().stream()
                .mapToDouble(Counter::count)
                .sum();
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aHandlerIsChargedWhatItsMonoGave(String store) {
        debtRefusesTheThird(store, "192.0.2.20", "wu-completions", "/wu/complete?tokens=");
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aHandlerIsChargedTheLastElementOfItsFlux(String store) {
        debtRefusesTheThird(store, "192.0.2.21", "wu-stream", "/wu/stream?tokens=");
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aUrlRuleIsChargedTheResponseHeader(String store) {
        debtRefusesTheThird(store, "192.0.2.22", "wu-url", "/wu/url?used=");
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aUrlRuleKeepsTheEstimateOfAResponseWithNoNumber(String store) {
        WebTestClient client = client(store, "192.0.2.23");
        for (String garbage : List.of("lots", "-3", "1.5")) {
            client.get()
                    .uri("/wu/url?used=" + garbage)
                    .exchange()
                    .expectStatus()
                    .isOk();
        }
        client.get()
                .uri("/wu/url?used=0")
                .exchange()
                .expectStatus()
                .isOk()
                .expectHeader()
                .value("RateLimit", v -> assertThat(v).containsPattern("\"wu-url-1h\";r=99[67];"));
    }
}
