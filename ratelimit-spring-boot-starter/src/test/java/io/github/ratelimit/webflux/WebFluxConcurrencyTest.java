package io.github.ratelimit.webflux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Concurrency rules on WebFlux over real HTTP (Reactor Netty, a real {@link WebClient}), on the local store and on a
 * real Redis: a URL rule's request holds its slot until the handler's {@code Mono} completes, so a third request of
 * the address is answered 429 with {@code Retry-After: 1} and the IETF headers; a request whose client goes away
 * (its subscription cancelled, its connection closed) gives its slot back, which the next request gets, while the
 * other request in flight keeps its own; an annotated handler returning a {@code Mono} (decided by the filter) holds
 * its slot the same way and gives it back when its {@code Mono} fails; and one whose key reads its arguments (decided
 * at the call, on subscription) does too, a cancelled call included. On Redis, a request whose client goes away
 * while the store is still deciding (Redis paused) leaves no slot taken, for the filter's decision and for one made
 * on subscription. Handlers complete when the test opens their gate. One application for the tests of each store
 * ({@link OnTheLocalStore}, {@link OnRedis}; each test has a client address or a tenant of its own), and one for
 * those that pause Redis ({@link WhileRedisDecides}): none runs beside another, so that a thread of the store's
 * scheduler is always the application's own.
 */
class WebFluxConcurrencyTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    /**
     * Per gate: its sink, how many requests' handlers subscribed to it, and how many of those were cancelled; and per
     * path, how many requests the server saw cancelled ({@link CancelRecorder}).
     */
    private static final Map<String, Sinks.One<String>> GATES = new ConcurrentHashMap<>();

    private static final Map<String, AtomicInteger> SUBSCRIBED = new ConcurrentHashMap<>();
    private static final Map<String, AtomicInteger> CANCELLED = new ConcurrentHashMap<>();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import({Handlers.class, CancelRecorder.class})
    static class App {}

    /** Counts, per path, the requests whose client the server saw go away, before any other filter sees them. */
    static class CancelRecorder implements WebFilter, Ordered {
        @Override
        public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
            String path = exchange.getRequest().getPath().value();
            return chain.filter(exchange)
                    .doOnCancel(() -> CANCELLED
                            .computeIfAbsent(path, p -> new AtomicInteger())
                            .incrementAndGet());
        }

        @Override
        public int getOrder() {
            return Ordered.HIGHEST_PRECEDENCE;
        }
    }

    @RestController
    static class Handlers {
        @GetMapping({"/wcc/slow", "/wcc/lone"})
        Mono<String> slow(@RequestParam(defaultValue = "") String gate) {
            return held(gate);
        }

        @GetMapping("/wcc/one")
        @RateLimit(name = "wcc-one", key = "ip", concurrency = 1)
        Mono<String> one(
                @RequestParam(defaultValue = "") String gate, @RequestParam(defaultValue = "false") boolean fail) {
            return fail ? Mono.error(new IllegalStateException("the handler failed")) : held(gate);
        }

        /** Its key reads the method's arguments: decided when its Mono is subscribed, not by the filter. */
        @GetMapping("/wcc/tenant/{tenant}")
        @RateLimit(name = "wcc-tenant", key = "#tenant", concurrency = 1)
        Mono<String> tenant(
                @PathVariable String tenant,
                @RequestParam(defaultValue = "") String gate,
                @RequestParam(defaultValue = "false") boolean throwNow) {
            if (throwNow) {
                throw new IllegalArgumentException("no publisher for tenant " + tenant);
            }
            return held(gate);
        }
    }

    /** @return a Mono that completes when the test opens the gate, at once for none */
    private static Mono<String> held(String gate) {
        if (gate.isEmpty()) {
            return Mono.just("passed");
        }
        return Mono.defer(() -> {
            SUBSCRIBED.computeIfAbsent(gate, g -> new AtomicInteger()).incrementAndGet();
            return sink(gate)
                    .asMono()
                    .map(v -> "passed " + gate)
                    .doOnCancel(() -> CANCELLED
                            .computeIfAbsent(gate, g -> new AtomicInteger())
                            .incrementAndGet());
        });
    }

    private static Sinks.One<String> sink(String gate) {
        return GATES.computeIfAbsent(gate, g -> Sinks.one());
    }

    private static void open(String gate) {
        sink(gate).tryEmitValue("open");
    }

    private static int count(Map<String, AtomicInteger> counts, String gate) {
        AtomicInteger n = counts.get(gate);
        return n == null ? 0 : n.get();
    }

    @AfterEach
    void openEveryGate() {
        GATES.values().forEach(s -> s.tryEmitValue("open"));
        GATES.clear();
        SUBSCRIBED.clear();
        CANCELLED.clear();
    }

    private static ConfigurableApplicationContext start(String store, String commandTimeout) {
        List<String> properties = new ArrayList<>(List.of(
                "ratelimit.trusted-proxies=127.0.0.1,::1",
                "ratelimit.rules[0].name=wcc-slow",
                "ratelimit.rules[0].paths=/wcc/slow",
                "ratelimit.rules[0].key=ip",
                "ratelimit.rules[0].concurrency=2",
                "ratelimit.rules[1].name=wcc-lone",
                "ratelimit.rules[1].paths=/wcc/lone",
                "ratelimit.rules[1].key=ip",
                "ratelimit.rules[1].concurrency=1"));
        if (store.equals("redis")) {
            properties.add("ratelimit.redis.url=" + redis.uri());
            properties.add("ratelimit.redis.key-prefix=wcc-" + System.nanoTime());
            properties.add("ratelimit.redis.command-timeout=" + commandTimeout);
        }
        return WebFluxApps.start(App.class, properties.toArray(String[]::new));
    }

    private static CompletableFuture<ResponseEntity<String>> get(WebClient client, String path, String ip) {
        return client.get()
                .uri(path)
                .header("X-Forwarded-For", ip)
                .exchangeToMono(r -> r.toEntity(String.class))
                .timeout(Duration.ofSeconds(20))
                .toFuture();
    }

    private static ResponseEntity<String> getNow(WebClient client, String path, String ip) throws Exception {
        return get(client, path, ip).get(20, TimeUnit.SECONDS);
    }

    private static void assertRejected(ResponseEntity<String> r, String rule, int max) {
        assertThat(r.getStatusCode().value()).as(r.getBody()).isEqualTo(429);
        assertThat(r.getHeaders().getFirst("Retry-After")).isEqualTo("1");
        assertThat(r.getHeaders().getFirst("RateLimit-Policy"))
                .isEqualTo("\"" + rule + "-concurrency\";q=" + max + ";qu=\"concurrent-requests\"");
        assertThat(r.getHeaders().getFirst("RateLimit")).isEqualTo("\"" + rule + "-concurrency\";r=0");
    }

    /** Waits until the server has seen the client of a request go away, and its handler's Mono cancelled. */
    private static void awaitCancelled(String gate) {
        await("the server cancelled " + gate).atMost(Duration.ofSeconds(10)).until(() -> count(CANCELLED, gate) == 1);
    }

    /** Tests that share one application, started before the first and closed after the last. */
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    abstract class OnOneApplication {

        private ConfigurableApplicationContext context;

        /** A client of the application. */
        WebClient client;

        abstract ConfigurableApplicationContext start();

        @BeforeAll
        void startTheApplication() {
            context = start();
            int port = ((WebServerApplicationContext) context).getWebServer().getPort();
            client = WebClient.create("http://localhost:" + port);
        }

        @AfterAll
        void stopTheApplication() {
            if (context != null) {
                context.close();
            }
        }
    }

    @Nested
    class OnTheLocalStore extends OnAStore {
        @Override
        ConfigurableApplicationContext start() {
            return WebFluxConcurrencyTest.start("local", "2s");
        }
    }

    @Nested
    class OnRedis extends OnAStore {
        @Override
        ConfigurableApplicationContext start() {
            return WebFluxConcurrencyTest.start("redis", "2s");
        }
    }

    /** The tests of each store. */
    abstract class OnAStore extends OnOneApplication {

        @Test
        void aUrlRuleHoldsASlotUntilTheMonoCompletesOrItsClientGoesAway() throws Exception {
            String ip = "192.0.2.1";
            CompletableFuture<ResponseEntity<String>> a = get(client, "/wcc/slow?gate=a", ip);
            CompletableFuture<ResponseEntity<String>> b = get(client, "/wcc/slow?gate=b", ip);
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> count(SUBSCRIBED, "a") == 1 && count(SUBSCRIBED, "b") == 1);
            assertRejected(getNow(client, "/wcc/slow", ip), "wcc-slow", 2);
            ResponseEntity<String> other = getNow(client, "/wcc/slow", "192.0.2.2");
            assertThat(other.getStatusCode().value())
                    .as("another address has slots of its own")
                    .isEqualTo(200);
            assertThat(other.getHeaders().getFirst("RateLimit")).isEqualTo("\"wcc-slow-concurrency\";r=1");

            open("a");
            assertThat(a.get(20, TimeUnit.SECONDS).getBody()).isEqualTo("passed a");
            // The slot comes back when the filter sees the exchange end, a moment after the client has its answer.
            await("a's slot is back")
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> getNow(client, "/wcc/slow", ip).getStatusCode().value() == 200);

            CompletableFuture<ResponseEntity<String>> c = heldAt(client, "/wcc/slow", "c", ip);
            assertRejected(getNow(client, "/wcc/slow", ip), "wcc-slow", 2);
            c.cancel(true);
            awaitCancelled("c");
            await("the cancelled request's slot is back")
                    .atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> {
                        ResponseEntity<String> next = getNow(client, "/wcc/slow", ip);
                        assertThat(next.getStatusCode().value()).isEqualTo(200);
                        assertThat(next.getHeaders().getFirst("RateLimit"))
                                .as("b still holds the other slot")
                                .isEqualTo("\"wcc-slow-concurrency\";r=0");
                    });

            CompletableFuture<ResponseEntity<String>> d = heldAt(client, "/wcc/slow", "d", ip);
            assertRejected(getNow(client, "/wcc/slow", ip), "wcc-slow", 2);
            assertThat(b).as("b ran all along").isNotDone();
            open("b");
            open("d");
            assertThat(b.get(20, TimeUnit.SECONDS).getBody()).isEqualTo("passed b");
            assertThat(d.get(20, TimeUnit.SECONDS).getBody()).isEqualTo("passed d");
        }

        @Test
        void anAnnotatedHandlerHoldsItsSlotUntilItsMonoEnds() throws Exception {
            String ip = "192.0.2.3";
            CompletableFuture<ResponseEntity<String>> running = heldAt(client, "/wcc/one", "one", ip);
            assertRejected(getNow(client, "/wcc/one", ip), "wcc-one", 1);
            open("one");
            ResponseEntity<String> ran = running.get(20, TimeUnit.SECONDS);
            assertThat(ran.getBody()).isEqualTo("passed one");
            assertThat(ran.getHeaders().getFirst("RateLimit")).isEqualTo("\"wcc-one-concurrency\";r=0");

            ResponseEntity<String> failed = await().atMost(Duration.ofSeconds(10))
                    .until(
                            () -> getNow(client, "/wcc/one?fail=true", ip),
                            r -> r.getStatusCode().value() != 429);
            assertThat(failed.getStatusCode().value()).isEqualTo(500);
            await("the failed call's slot is back")
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> getNow(client, "/wcc/one", ip).getStatusCode().value() == 200);

            CompletableFuture<ResponseEntity<String>> leaving = heldAt(client, "/wcc/one", "leaving", ip);
            assertRejected(getNow(client, "/wcc/one", ip), "wcc-one", 1);
            leaving.cancel(true);
            awaitCancelled("leaving");
            await("the cancelled call's slot is back")
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> getNow(client, "/wcc/one", ip).getStatusCode().value() == 200);
        }

        @Test
        void aHandlerDecidedOnSubscriptionHoldsItsSlotUntilItsMonoEnds() throws Exception {
            String ip = "192.0.2.4";
            CompletableFuture<ResponseEntity<String>> running = heldAt(client, "/wcc/tenant/acme", "acme", ip);
            assertRejected(getNow(client, "/wcc/tenant/acme", ip), "wcc-tenant", 1);
            assertThat(getNow(client, "/wcc/tenant/globex", ip).getStatusCode().value())
                    .as("another tenant")
                    .isEqualTo(200);
            open("acme");
            assertThat(running.get(20, TimeUnit.SECONDS).getBody()).isEqualTo("passed acme");
            await("acme's slot is back")
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> getNow(client, "/wcc/tenant/acme", ip)
                                    .getStatusCode()
                                    .value()
                            == 200);

            CompletableFuture<ResponseEntity<String>> leaving = heldAt(client, "/wcc/tenant/acme", "gone", ip);
            assertRejected(getNow(client, "/wcc/tenant/acme", ip), "wcc-tenant", 1);
            leaving.cancel(true);
            awaitCancelled("gone");
            await("the cancelled call's slot is back")
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> getNow(client, "/wcc/tenant/acme", ip)
                                    .getStatusCode()
                                    .value()
                            == 200);
        }

        /** A method that throws instead of returning its publisher has ended: its slot comes back. */
        @Test
        void aMethodThatThrowsBeforeReturningItsPublisherGivesItsSlotBack() throws Exception {
            String ip = "192.0.2.9";
            // Each call fails (500) rather than being refused for a slot the one before kept; on Redis a slot comes
            // back
            // a round trip after the answer, so a call may find it still on its way and is sent again.
            for (int i = 0; i < 3; i++) {
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> getNow(client, "/wcc/tenant/broken?throwNow=true", ip)
                                        .getStatusCode()
                                        .value()
                                == 500);
            }
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> getNow(client, "/wcc/tenant/broken", ip)
                                    .getStatusCode()
                                    .value()
                            == 200);
        }
    }

    /** Whether a thread of the store's scheduler is inside Jedis: a decision waiting for Redis to answer. */
    private static boolean decisionWaitingOnRedis() {
        return Thread.getAllStackTraces().entrySet().stream()
                .anyMatch(t -> t.getKey().getName().startsWith("ratelimit-store")
                        && Arrays.stream(t.getValue())
                                .anyMatch(f -> f.getClassName().startsWith("redis.clients.jedis")));
    }

    /**
     * On Redis a decision runs on the store's scheduler: a client that goes away while Redis answers has its request
     * cancelled before the request has the decision. The slot the decision took must come back: nobody will run
     * that request, and the instance would renew its lease for ever. For the filter's decision (a URL rule) and for
     * one made when a handler's Mono is subscribed (its key reads its arguments).
     */
    @Nested
    class WhileRedisDecides extends OnOneApplication {
        @Override
        ConfigurableApplicationContext start() {
            return WebFluxConcurrencyTest.start("redis", "30s");
        }

        @ParameterizedTest
        @ValueSource(strings = {"/wcc/lone", "/wcc/tenant/lonely"})
        void aRequestWhoseClientLeavesWhileRedisDecidesLeavesNoSlotTaken(String path) throws Exception {
            String ip = "192.0.2.5";
            redis.server().pause();
            try {
                CompletableFuture<ResponseEntity<String>> leaving = get(client, path, ip);
                await("a decision waits on the paused Redis")
                        .atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(5))
                        .until(WebFluxConcurrencyTest::decisionWaitingOnRedis);
                leaving.cancel(true);
                await("the server cancelled the request")
                        .atMost(Duration.ofSeconds(10))
                        .until(() -> count(CANCELLED, path) == 1);
            } finally {
                redis.server().resume();
            }
            await("Redis answered the decision").atMost(Duration.ofSeconds(10)).until(() -> !decisionWaitingOnRedis());
            await("the slot of the request nobody runs is free")
                    .atMost(Duration.ofSeconds(5))
                    .untilAsserted(() -> {
                        ResponseEntity<String> next = getNow(client, path, ip);
                        assertThat(next.getStatusCode().value())
                                .as("%s", next.getHeaders())
                                .isEqualTo(200);
                    });
            assertRejectedWhileHeld(client, path, ip);
        }
    }

    /**
     * Sends a request that waits at {@code gate} in the handler, again while it finds the slot of the request before
     * still on its way back (a moment after that one's answer).
     */
    private static CompletableFuture<ResponseEntity<String>> heldAt(
            WebClient client, String path, String gate, String ip) {
        List<CompletableFuture<ResponseEntity<String>>> sent =
                new ArrayList<>(List.of(get(client, path + "?gate=" + gate, ip)));
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            CompletableFuture<ResponseEntity<String>> last = sent.get(sent.size() - 1);
            if (last.isDone() && last.join().getStatusCode().value() == 429) {
                sent.add(get(client, path + "?gate=" + gate, ip));
            }
            return count(SUBSCRIBED, gate) == 1;
        });
        return sent.get(sent.size() - 1);
    }

    /**
     * The slot is one: a request held in the handler leaves none for the next. (The slot of the request before may
     * still be on its way back when the held one arrives, a moment after its 200: then the held one is sent again.)
     */
    private static void assertRejectedWhileHeld(WebClient client, String path, String ip) throws Exception {
        List<CompletableFuture<ResponseEntity<String>>> held =
                new ArrayList<>(List.of(get(client, path + "?gate=held", ip)));
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            CompletableFuture<ResponseEntity<String>> last = held.get(held.size() - 1);
            if (last.isDone() && last.join().getStatusCode().value() == 429) {
                held.add(get(client, path + "?gate=held", ip));
            }
            return count(SUBSCRIBED, "held") == 1;
        });
        assertThat(getNow(client, path, ip).getStatusCode().value()).isEqualTo(429);
        open("held");
        assertThat(held.get(held.size() - 1).get(20, TimeUnit.SECONDS).getBody())
                .isEqualTo("passed held");
    }
}
