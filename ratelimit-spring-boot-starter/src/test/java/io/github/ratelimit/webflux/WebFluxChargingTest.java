package io.github.ratelimit.webflux;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;
import reactor.core.publisher.Mono;

/**
 * Charging by size and by outcome on WebFlux over real HTTP, on the local store and on a real Redis: a handler's
 * {@code @RateLimit(permits = "#items.size()")} (413 for a batch no window holds), a URL rule's count from a header,
 * and the WebFilter's URL rule with
 * {@code count=statuses:404,5xx}, where an error's status is the one its handler answers (a 404 for no handler); and
 * exemptions, which charge nothing. One application per store for the class; each test has its own client address.
 */
class WebFluxChargingTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Handlers.class)
    static class App {}

    @RestController
    static class Handlers {
        @PostMapping("/wc/batch")
        @RateLimit(name = "wc-batch", key = "ip", perMinute = 10, permits = "#items.size()")
        Mono<String> batch(@RequestBody List<String> items) {
            return Mono.just("accepted " + items.size());
        }

        @PostMapping("/wc/upload")
        Mono<String> upload() {
            return Mono.just("uploaded");
        }

        @GetMapping("/wc/status/{code}")
        Mono<String> status(@PathVariable int code) {
            return code == 200 ? Mono.just("fine") : Mono.error(new ResponseStatusException(HttpStatus.valueOf(code)));
        }

        @GetMapping("/wc/boom")
        Mono<String> boom() {
            return Mono.error(new IllegalStateException("the handler failed"));
        }
    }

    private static final WebFluxApps.Shared APPS = new WebFluxApps.Shared(WebFluxChargingTest::start);

    @AfterAll
    static void stop() {
        APPS.close();
    }

    private static ConfigurableApplicationContext start(String store) {
        List<String> properties = new ArrayList<>(List.of(
                "ratelimit.rules[0].name=wc-errors",
                "ratelimit.rules[0].paths=/wc/**",
                "ratelimit.rules[0].key=ip",
                "ratelimit.rules[0].limits=4/1m",
                "ratelimit.rules[0].count=statuses:404,5xx",
                "ratelimit.trusted-proxies=127.0.0.1,::1",
                "ratelimit.exempt=203.0.113.0/24",
                "ratelimit.rules[0].exempt=198.51.100.7",
                "ratelimit.rules[1].name=wc-upload",
                "ratelimit.rules[1].paths=/wc/upload",
                "ratelimit.rules[1].key=ip",
                "ratelimit.rules[1].limits=5/1m",
                "ratelimit.rules[1].permits=header:X-Items"));
        if (store.equals("redis")) {
            properties.add("ratelimit.redis.url=" + redis.uri());
            properties.add("ratelimit.redis.key-prefix=wc-" + System.nanoTime());
            properties.add("ratelimit.redis.command-timeout=2s");
        }
        return WebFluxApps.start(App.class, properties.toArray(String[]::new));
    }

    private static WebTestClient.ResponseSpec batch(WebTestClient client, int n) {
        List<String> items = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            items.add("i" + i);
        }
        return client.post()
                .uri("/wc/batch")
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(items)
                .exchange();
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aHandlerChargesTheArraysSize(String store) {
        WebTestClient client = WebFluxApps.client(APPS.get(store), "192.0.2.10");
        batch(client, 7).expectStatus().isOk().expectBody(String.class).isEqualTo("accepted 7");
        batch(client, 4).expectStatus().isEqualTo(429).expectHeader().valueEquals("Retry-After", "6");
        batch(client, 3).expectStatus().isOk();
        batch(client, 11)
                .expectStatus()
                .isEqualTo(413)
                .expectHeader()
                .doesNotExist("Retry-After")
                .expectBody(String.class)
                .value(body -> org.assertj.core.api.Assertions.assertThat(body)
                        .contains("'wc-batch'")
                        .contains("at most 10"));
    }

    /**
     * A URL rule's count from a header: 19 digits and more are a count too large for any window (413), not a missing
     * one (429); leading zeros are no digits; what is no whole number is still refused.
     */
    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aCountTooLargeForALongIsACallTooLarge(String store) {
        WebTestClient client = WebFluxApps.client(APPS.get(store), "192.0.2.11");
        for (String huge : List.of("9223372036854775808", "99999999999999999999", "1" + "0".repeat(100))) {
            client.post()
                    .uri("/wc/upload")
                    .header("X-Items", huge)
                    .exchange()
                    .expectStatus()
                    .isEqualTo(413)
                    .expectHeader()
                    .doesNotExist("Retry-After")
                    .expectBody(String.class)
                    .value(body -> org.assertj.core.api.Assertions.assertThat(body)
                            .contains("'wc-upload'")
                            .contains("at most 5"));
        }
        client.post()
                .uri("/wc/upload")
                .header("X-Items", "lots")
                .exchange()
                .expectStatus()
                .isEqualTo(429);
        client.post()
                .uri("/wc/upload")
                .header("X-Items", "0000000000000000000005")
                .exchange()
                .expectStatus()
                .isOk();
        client.post()
                .uri("/wc/upload")
                .header("X-Items", "1")
                .exchange()
                .expectStatus()
                .isEqualTo(429);
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void onlyTheCountedStatusesKeepTheirTokens(String store) {
        WebTestClient client = WebFluxApps.client(APPS.get(store), "192.0.2.12");
        for (int i = 0; i < 8; i++) {
            client.get().uri("/wc/status/200").exchange().expectStatus().isOk();
            client.get().uri("/wc/status/403").exchange().expectStatus().isForbidden();
        }
        client.get().uri("/wc/status/404").exchange().expectStatus().isNotFound();
        client.get().uri("/wc/no-such-handler").exchange().expectStatus().isNotFound();
        client.get().uri("/wc/status/503").exchange().expectStatus().isEqualTo(503);
        client.get().uri("/wc/boom").exchange().expectStatus().isEqualTo(500);
        client.get()
                .uri("/wc/status/200")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectHeader()
                .valueEquals("Retry-After", "15");
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void exemptClientsAreChargedNothing(String store) {
        // Each request names its own client address.
        WebTestClient client = WebFluxApps.client(APPS.get(store));
        for (int i = 0; i < 5; i++) {
            client.post()
                    .uri("/wc/batch")
                    .header("X-Forwarded-For", "203.0.113.4")
                    .contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(List.of("1", "2", "3", "4", "5", "6"))
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectHeader()
                    .doesNotExist("RateLimit");
            client.get()
                    .uri("/wc/status/404")
                    .header("X-Forwarded-For", "198.51.100.7")
                    .exchange()
                    .expectStatus()
                    .isNotFound();
        }
        client.get()
                .uri("/wc/status/404")
                .header("X-Forwarded-For", "198.51.100.8")
                .exchange()
                .expectStatus()
                .isNotFound();
    }
}
