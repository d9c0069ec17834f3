package io.github.ratelimit.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimit;
import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A Spring WebFlux application on a real Reactor Netty port, with Boot's own auto-configurations, used over HTTP:
 * URL rules, handler methods' annotations (one decision per request), reactive methods decided on subscription,
 * keys from the exchange (the {@code ip} walk, the principal), the 429 response, and SOFT delays that hold no
 * event loop.
 */
class WebFluxRateLimitTest {

    private static ConfigurableApplicationContext context;
    private static WebTestClient client;

    @BeforeAll
    static void start() {
        context = WebFluxApps.start(
                App.class,
                "ratelimit.rules[0].name=wf-global",
                "ratelimit.rules[0].paths=/wf/limited/**",
                "ratelimit.rules[0].key=global",
                "ratelimit.rules[0].limits=2/1m",
                "ratelimit.rules[1].name=wf-ip",
                "ratelimit.rules[1].paths=/wf/ip",
                "ratelimit.rules[1].key=ip",
                "ratelimit.rules[1].limits=2/1m",
                "ratelimit.rules[2].name=wf-soft",
                "ratelimit.rules[2].paths=/wf/soft",
                "ratelimit.rules[2].key=global",
                "ratelimit.rules[2].limits=2/1s",
                "ratelimit.rules[2].mode=soft",
                "ratelimit.rules[2].max-delay=10s",
                "ratelimit.rules[3].name=wf-user",
                "ratelimit.rules[3].paths=/wf/user",
                "ratelimit.rules[3].key=user",
                "ratelimit.rules[3].limits=1/1m",
                "ratelimit.rules[4].name=wf-both",
                "ratelimit.rules[4].paths=/wf/both",
                "ratelimit.rules[4].key=global",
                "ratelimit.rules[4].limits=100/1m",
                "ratelimit.rules[5].name=wf-proxied",
                "ratelimit.rules[5].paths=/wf/proxied",
                "ratelimit.rules[5].key=ip",
                "ratelimit.rules[5].limits=1/1m",
                "ratelimit.rules[6].name=wf-custom",
                "ratelimit.rules[6].paths=/wf/custom",
                "ratelimit.rules[6].key=account",
                "ratelimit.rules[6].limits=1/1m",
                "ratelimit.rules[7].name=wf-param",
                "ratelimit.rules[7].paths=/wf/param",
                "ratelimit.rules[7].key=param:apiKey",
                "ratelimit.rules[7].limits=1/1m",
                "ratelimit.rules[8].name=wf-shadow",
                "ratelimit.rules[8].paths=/wf/shadow",
                "ratelimit.rules[8].limits=1/1m",
                "ratelimit.rules[8].mode=shadow",
                "ratelimit.trusted-proxies=127.0.0.1,::1",
                "ratelimit.headers=ietf-draft-09,x-ratelimit",
                "server.forward-headers-strategy=framework");
        client = WebFluxApps.client(context);
    }

    @AfterAll
    static void stop() {
        context.close();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import({Handlers.class, Outbound.class})
    static class App {

        /** A custom key that reads the principal, which the filter must resolve first on WebFlux. */
        @Bean
        io.github.ratelimit.key.KeyResolver account() {
            return context -> context.principal() == null ? null : "account-of-" + context.principal();
        }

        /** A stand-in for an authentication filter: the principal named by a header, as Spring Security would set it. */
        @Bean
        @Order(-150)
        WebFilter testPrincipal() {
            return (exchange, chain) -> {
                String user = exchange.getRequest().getHeaders().getFirst("X-Test-User");
                if (user == null) {
                    return chain.filter(exchange);
                }
                Principal principal = () -> user;
                return chain.filter(
                        exchange.mutate().principal(Mono.just(principal)).build());
            };
        }
    }

    @RestController
    static class Handlers {
        private final Outbound outbound;

        Handlers(Outbound outbound) {
            this.outbound = outbound;
        }

        @GetMapping("/wf/limited/{id}")
        Mono<String> limited(@PathVariable String id) {
            return Mono.just("limited " + id);
        }

        @GetMapping("/wf/ip")
        Mono<String> ip() {
            return Mono.just("ip");
        }

        @GetMapping("/wf/proxied")
        Mono<String> proxied() {
            return Mono.just("proxied");
        }

        @GetMapping("/wf/soft")
        Mono<String> soft() {
            return Mono.just("soft");
        }

        @GetMapping("/wf/free")
        Mono<String> free() {
            return Mono.just("free");
        }

        @org.springframework.web.bind.annotation.RequestMapping("/wf/param")
        Mono<String> param() {
            return Mono.just("param");
        }

        @GetMapping("/wf/shadow")
        Mono<String> shadow() {
            return Mono.just("shadow");
        }

        @GetMapping("/wf/custom")
        Mono<String> custom() {
            return Mono.just("custom");
        }

        @GetMapping("/wf/user")
        Mono<String> user() {
            return Mono.just("user");
        }

        @RateLimit(name = "wf-handler", perMinute = 3)
        @GetMapping("/wf/both")
        Mono<String> both() {
            return Mono.just("both");
        }

        @RateLimit(name = "wf-by-id", key = "#id", perMinute = 1)
        @GetMapping("/wf/by-id/{id}")
        Mono<String> byId(@PathVariable String id) {
            return Mono.just("id " + id);
        }

        /** Builds the outbound call three times and subscribes to one of them. */
        @GetMapping("/wf/outbound")
        Mono<String> outbound() {
            outbound.fetch();
            outbound.fetch();
            return outbound.fetch();
        }

        @GetMapping("/wf/stream")
        Flux<String> stream() {
            return outbound.stream();
        }

        /** A handler that returns its result: decided by the filter, once. */
        @RateLimit(name = "wf-plain-handler", perMinute = 2)
        @GetMapping("/wf/plain")
        String plain() {
            return "plain";
        }

        /** Allows CORS from one origin: a preflight is answered by the CORS processing, not this handler. */
        @org.springframework.web.bind.annotation.CrossOrigin("https://app.example")
        @RateLimit(name = "wf-cors", perMinute = 1)
        @GetMapping("/wf/cors")
        Mono<String> cors() {
            return Mono.just("cors");
        }

        /** A controller method returning a future, called on the event loop: decided once, by the filter. */
        @RateLimit(name = "wf-future-handler", perMinute = 1)
        @GetMapping("/wf/future-handler")
        CompletableFuture<String> futureHandler() {
            return CompletableFuture.completedFuture("future handler");
        }

        /** Called on the event loop: the future's method is decided without blocking. */
        @GetMapping("/wf/future")
        Mono<String> future() {
            return Mono.fromFuture(outbound.future());
        }

        /** Called on the event loop: a method that returns its result is decided there, which is logged. */
        @GetMapping("/wf/sync")
        Mono<String> sync() {
            return Mono.just(outbound.sync());
        }
    }

    static class Outbound {
        /** Static: the bean is a proxy, whose own fields are not the target's. */
        static final AtomicInteger RUNS = new AtomicInteger();

        @RateLimit(name = "wf-outbound", perMinute = 2)
        public Mono<String> fetch() {
            RUNS.incrementAndGet();
            return Mono.just("fetched");
        }

        @RateLimit(name = "wf-stream", perMinute = 1)
        public Flux<String> stream() {
            return Flux.just("a", "b");
        }

        @RateLimit(name = "wf-future", perMinute = 1)
        public CompletableFuture<String> future() {
            return CompletableFuture.completedFuture("future");
        }

        @RateLimit(name = "wf-sync", perMinute = 100, mode = Mode.SOFT, maxDelay = "1s")
        public String sync() {
            return "sync";
        }
    }

    @Test
    void aUrlRuleRejectsWith429RetryAfterTheHeadersAndTheProblemBodyOfTheServletPath() {
        client.get()
                .uri("/wf/limited/1")
                .exchange()
                .expectStatus()
                .isOk()
                .expectHeader()
                .valueEquals("X-RateLimit-Limit", "2")
                .expectHeader()
                .valueEquals("X-RateLimit-Remaining", "1")
                .expectHeader()
                .exists("RateLimit-Policy")
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wf/limited/2")
                .exchange()
                .expectStatus()
                .isOk()
                .expectHeader()
                .valueEquals("X-RateLimit-Remaining", "0")
                .expectBody()
                .returnResult();
        EntityExchangeResult<String> rejected = client.get()
                .uri("/wf/limited/3?x=<y>")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectHeader()
                .contentType(MediaType.parseMediaType("application/problem+json"))
                .expectHeader()
                .valueEquals("X-RateLimit-Remaining", "0")
                .expectBody(String.class)
                .returnResult();
        long retryAfter = Long.parseLong(rejected.getResponseHeaders().getFirst("Retry-After"));
        assertThat(retryAfter).isBetween(1L, 60L);
        assertThat(rejected.getResponseBody())
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\","
                        + "\"status\":429,\"detail\":\"Rate limit of rule 'wf-global' exceeded; retry after "
                        + retryAfter
                        + " s.\",\"instance\":\"/wf/limited/3\",\"retryAfter\":" + retryAfter + "}");
    }

    @Test
    void theIpKeyWalksForwardedForThroughTrustedProxiesOnlyAndRotatingItDoesNotHelpAnUntrustedPeer() {
        // The peer (127.0.0.1) is a trusted proxy: each client behind it has its own bucket, even though Spring's
        // ForwardedHeaderTransformer (forward-headers-strategy=framework) removed the header from the request.
        for (String client1 : List.of("203.0.113.1", "203.0.113.2")) {
            client.get()
                    .uri("/wf/proxied")
                    .header("X-Forwarded-For", client1)
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody()
                    .returnResult();
            client.get()
                    .uri("/wf/proxied")
                    .header("X-Forwarded-For", client1)
                    .exchange()
                    .expectStatus()
                    .isEqualTo(429)
                    .expectBody()
                    .returnResult();
        }
        // A client that writes a forged address before the real one gets the address the proxy appended.
        client.get()
                .uri("/wf/proxied")
                .header("X-Forwarded-For", "198.51.100.9, 203.0.113.3")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wf/proxied")
                .header("X-Forwarded-For", "198.51.100.10, 203.0.113.3")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectBody()
                .returnResult();
        // Without a header, the trusted proxy itself is the client.
        client.get().uri("/wf/ip").exchange().expectStatus().isOk().expectBody().returnResult();
        client.get().uri("/wf/ip").exchange().expectStatus().isOk().expectBody().returnResult();
        client.get()
                .uri("/wf/ip")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectBody()
                .returnResult();
    }

    @Test
    void aUserKeyCountsByTheExchangesPrincipal() {
        client.get()
                .uri("/wf/user")
                .header("X-Test-User", "alice")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wf/user")
                .header("X-Test-User", "alice")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wf/user")
                .header("X-Test-User", "bob")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
    }

    @Test
    void aParamKeyReadsTheQueryStringNotAFormBody() {
        client.get()
                .uri("/wf/param?apiKey=k1")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wf/param?apiKey=k1")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wf/param?apiKey=k2")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        // A form body is not read before the handler: no key, and the rule's missing-key policy (reject) applies.
        client.post()
                .uri("/wf/param")
                .contentType(MediaType.APPLICATION_FORM_URLENCODED)
                .bodyValue("apiKey=k3")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectBody()
                .returnResult();
    }

    @Test
    void corsPreflightsCostTheHandlersRuleNothing() {
        for (int i = 0; i < 3; i++) {
            client.options()
                    .uri("/wf/cors")
                    .header("Origin", "https://app.example")
                    .header("Access-Control-Request-Method", "GET")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody()
                    .returnResult();
        }
        client.get()
                .uri("/wf/cors")
                .header("Origin", "https://app.example")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .isEqualTo("cors");
        client.get()
                .uri("/wf/cors")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectBody()
                .returnResult();
    }

    @Test
    void aHandlerReturningAFutureIsDecidedOnceByTheFilter() {
        client.get()
                .uri("/wf/future-handler")
                .exchange()
                .expectStatus()
                .isOk()
                .expectHeader()
                .valueEquals("X-RateLimit-Remaining", "0")
                .expectBody(String.class)
                .isEqualTo("future handler");
        EntityExchangeResult<String> rejected = client.get()
                .uri("/wf/future-handler")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectBody(String.class)
                .returnResult();
        assertThat(rejected.getResponseBody())
                .as("the handler's own rule is named")
                .contains("wf-future-handler");
    }

    @Test
    void aShadowRuleOnlyRecords() {
        for (int i = 0; i < 3; i++) {
            client.get()
                    .uri("/wf/shadow")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody(String.class)
                    .isEqualTo("shadow");
        }
    }

    @Test
    void aCustomKeyReadsThePrincipalToo() {
        client.get()
                .uri("/wf/custom")
                .header("X-Test-User", "carol")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wf/custom")
                .header("X-Test-User", "carol")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wf/custom")
                .header("X-Test-User", "dave")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        // No principal, no key: the rule's missing-key policy (reject) applies.
        client.get()
                .uri("/wf/custom")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectBody()
                .returnResult();
    }

    @Test
    void urlRulesAndTheHandlersAnnotationAreOneDecisionPerRequest() {
        for (int i = 0; i < 3; i++) {
            client.get()
                    .uri("/wf/both")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectHeader()
                    .value(
                            "RateLimit-Policy",
                            policy -> assertThat(policy).contains("wf-both").contains("wf-handler"))
                    .expectBody()
                    .returnResult();
        }
        EntityExchangeResult<String> rejected = client.get()
                .uri("/wf/both")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectBody(String.class)
                .returnResult();
        assertThat(rejected.getResponseBody()).contains("Rate limit of rule 'wf-handler' exceeded");
    }

    @Test
    void aHandlerReturningItsResultIsDecidedOnceByTheFilter() {
        client.get()
                .uri("/wf/plain")
                .exchange()
                .expectStatus()
                .isOk()
                .expectHeader()
                .valueEquals("X-RateLimit-Remaining", "1")
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wf/plain")
                .exchange()
                .expectStatus()
                .isOk()
                .expectHeader()
                .valueEquals("X-RateLimit-Remaining", "0")
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wf/plain")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectBody()
                .returnResult();
    }

    @Test
    void aHandlerRuleOverItsArgumentsIsDecidedAtTheCallAndNamesTheRule() {
        client.get()
                .uri("/wf/by-id/7")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        EntityExchangeResult<String> rejected = client.get()
                .uri("/wf/by-id/7")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectHeader()
                .exists("Retry-After")
                .expectBody(String.class)
                .returnResult();
        assertThat(rejected.getResponseBody()).contains("Rate limit of rule 'wf-by-id' exceeded");
        client.get()
                .uri("/wf/by-id/8")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
    }

    @Test
    void aReactiveMethodIsDecidedWhenSubscribedAndItsRejectionDoesNotNameItsRule() {
        int before = Outbound.RUNS.get();
        client.get()
                .uri("/wf/outbound")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .isEqualTo("fetched");
        client.get()
                .uri("/wf/outbound")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        assertThat(Outbound.RUNS.get() - before)
                .as("built three times per request, run once")
                .isEqualTo(2);
        EntityExchangeResult<String> rejected = client.get()
                .uri("/wf/outbound")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectHeader()
                .exists("Retry-After")
                .expectHeader()
                .doesNotExist("RateLimit-Policy")
                .expectBody(String.class)
                .returnResult();
        assertThat(rejected.getResponseBody()).contains("rule 'internal'").doesNotContain("wf-outbound");
        assertThat(Outbound.RUNS.get() - before)
                .as("a rejected subscription does not run the method")
                .isEqualTo(2);

        client.get()
                .uri("/wf/stream")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wf/stream")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectBody()
                .returnResult();
    }

    @Test
    void aFutureMethodCalledOnTheEventLoopIsDecidedWithoutBlockingAndNamesNoRule() {
        client.get()
                .uri("/wf/future")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .isEqualTo("future");
        EntityExchangeResult<String> rejected = client.get()
                .uri("/wf/future")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectHeader()
                .exists("Retry-After")
                .expectBody(String.class)
                .returnResult();
        assertThat(rejected.getResponseBody()).contains("rule 'internal'").doesNotContain("wf-future");
    }

    @Test
    @org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
    void aMethodReturningItsResultOnTheEventLoopIsDecidedThereAndSaysSoOnce(
            org.springframework.boot.test.system.CapturedOutput output) {
        client.get()
                .uri("/wf/sync")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wf/sync")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        String warning = "@RateLimit method Outbound#sync was called on the non-blocking thread reactor-http-";
        assertThat(output.getAll()).contains(warning);
        assertThat(output.getAll().split(java.util.regex.Pattern.quote(warning), -1))
                .hasSize(2);
    }

    @Test
    void softDelaysHoldNoEventLoopAnUnlimitedEndpointAnswersWhileTheyWait() throws Exception {
        WebTestClient slow =
                client.mutate().responseTimeout(Duration.ofSeconds(30)).build();
        List<CompletableFuture<Integer>> soft = new ArrayList<>();
        // 2 per second: the 12th of these waits about 5 s. Netty has at most a few event loops on this machine, so a
        // delay that held one would stall every request on it.
        for (int i = 0; i < 12; i++) {
            soft.add(CompletableFuture.supplyAsync(() -> slow.get()
                    .uri("/wf/soft")
                    .exchange()
                    .expectBody(String.class)
                    .returnResult()
                    .getStatus()
                    .value()));
        }
        waitUntilWaiting(soft);
        List<Integer> free = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            free.add(client.get()
                    .uri("/wf/free")
                    .exchange()
                    .expectBody(String.class)
                    .returnResult()
                    .getStatus()
                    .value());
        }
        long softStillWaiting = soft.stream().filter(f -> !f.isDone()).count();
        assertThat(free).containsOnly(200);
        assertThat(softStillWaiting)
                .as("the unlimited endpoint answered 20 times while SOFT requests waited")
                .isGreaterThan(0);
        List<Integer> softStatuses = new ArrayList<>();
        for (CompletableFuture<Integer> f : soft) {
            softStatuses.add(f.get(30, TimeUnit.SECONDS));
        }
        assertThat(softStatuses)
                .as("every SOFT request went through after its delay")
                .containsOnly(200);
    }

    /** Waits until the SOFT rule has delayed requests: the first two go at once, the rest wait. */
    private static void waitUntilWaiting(List<CompletableFuture<Integer>> soft) throws InterruptedException {
        org.awaitility.Awaitility.await("the two SOFT requests that need no delay")
                .atMost(java.time.Duration.ofSeconds(10))
                .until(() -> soft.stream().filter(CompletableFuture::isDone).count() >= 2);
    }
}
