package io.github.ratelimit.spring.boot.concurrency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.RateLimitExceededException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Concurrency rules in a Spring MVC application on Tomcat, over real HTTP, run against each store by a subclass: a URL
 * rule ({@code ratelimit.rules[i].concurrency=2}) lets two requests of an address run at once and answers the others
 * 429 with {@code Retry-After: 1} and the IETF headers; {@code @RateLimit(concurrency = 1)} on a handler holds its slot
 * while the handler runs and gives it back when the handler throws; on a service bean called directly, a second
 * concurrent call throws {@link RateLimitExceededException}, and a method returning a {@link CompletableFuture} holds
 * its slot until the future completes (normally, exceptionally or cancelled); a SOFT rule makes a request wait for a
 * slot, and gives up after its max-delay. Handlers block on {@link Gates} the test opens; each test has its own client
 * address and gates.
 *
 * <p>A slot comes back when the filter sees the request's processing end, which is a moment after Spring MVC has
 * flushed a 200's body to the client: a request sent right after a 200 may still find the slot taken, so the tests
 * wait (Awaitility) for what follows a 200. A handler that throws gives its slot back before the error is answered.
 */
@SpringBootTest(
        classes = ConcurrencyOverHttpContract.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "ratelimit.trusted-proxies=127.0.0.1,::1",
            "ratelimit.rules[0].name=slow",
            "ratelimit.rules[0].paths=/cc/slow",
            "ratelimit.rules[0].key=ip",
            "ratelimit.rules[0].concurrency=2",
            "ratelimit.rules[1].name=queued",
            "ratelimit.rules[1].paths=/cc/queued",
            "ratelimit.rules[1].key=ip",
            "ratelimit.rules[1].concurrency=2",
            "ratelimit.rules[1].mode=soft",
            "ratelimit.rules[1].max-delay=30s",
            "ratelimit.rules[2].name=brief",
            "ratelimit.rules[2].paths=/cc/brief",
            "ratelimit.rules[2].key=ip",
            "ratelimit.rules[2].concurrency=1",
            "ratelimit.rules[2].mode=soft",
            "ratelimit.rules[2].max-delay=300ms"
        })
abstract class ConcurrencyOverHttpContract {

    @SpringBootApplication
    static class App {
        @Bean
        Gates gates() {
            return new Gates();
        }

        @RestController
        static class Api {
            private final Gates gates;

            Api(Gates gates) {
                this.gates = gates;
            }

            @GetMapping({"/cc/slow", "/cc/queued", "/cc/brief"})
            String slow(@RequestParam(defaultValue = "") String gate) {
                return gates.pass(gate);
            }

            @GetMapping("/cc/one")
            @RateLimit(name = "one", key = "ip", concurrency = 1)
            String one(
                    @RequestParam(defaultValue = "") String gate, @RequestParam(defaultValue = "false") boolean fail) {
                String passed = gates.pass(gate);
                if (fail) {
                    throw new IllegalStateException("the handler failed");
                }
                return passed;
            }
        }

        /** Calls a service whose method returns a Mono, inside the request: Spring MVC subscribes to it. */
        @RestController
        static class Streams {
            private final Gates gates;
            private final Exports exports;

            Streams(Gates gates, Exports exports) {
                this.gates = gates;
                this.exports = exports;
            }

            @GetMapping("/cc/stream")
            reactor.core.publisher.Mono<String> stream(
                    @RequestParam String tenant, @RequestParam(defaultValue = "") String gate) {
                return exports.stream(
                        tenant,
                        reactor.core.publisher.Mono.fromCallable(() -> gates.pass(gate))
                                .subscribeOn(reactor.core.scheduler.Schedulers.boundedElastic()));
            }
        }

        /** Its key reads the arguments, so the advisor decides it; Spring MVC finishes its response later. */
        @RestController
        static class Deferred {
            static final java.util.Map<String, org.springframework.web.context.request.async.DeferredResult<String>>
                    PENDING = new java.util.concurrent.ConcurrentHashMap<>();

            @GetMapping("/cc/deferred")
            @RateLimit(name = "deferred", key = "#tenant", concurrency = 1)
            org.springframework.web.context.request.async.DeferredResult<String> deferred(
                    @RequestParam String tenant, @RequestParam String id) {
                org.springframework.web.context.request.async.DeferredResult<String> result =
                        new org.springframework.web.context.request.async.DeferredResult<>(30_000L);
                PENDING.put(id, result);
                return result;
            }
        }

        @Service
        static class Exports {
            private final Gates gates;

            Exports(Gates gates) {
                this.gates = gates;
            }

            @RateLimit(name = "export", key = "#tenant", concurrency = 1)
            String export(String tenant, String gate, boolean fail) {
                String passed = gates.pass(gate);
                if (fail) {
                    throw new IllegalStateException("the export failed");
                }
                return passed;
            }

            @RateLimit(name = "report", key = "#tenant", concurrency = 1)
            CompletableFuture<String> report(String tenant, CompletableFuture<String> work) {
                return work;
            }

            @RateLimit(name = "stream", key = "#tenant", concurrency = 1)
            reactor.core.publisher.Mono<String> stream(String tenant, reactor.core.publisher.Mono<String> work) {
                return work;
            }
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    Gates gates;

    @Autowired
    App.Exports exports;

    private final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @AfterEach
    void openEveryGate() {
        gates.openAll();
    }

    private CompletableFuture<HttpResponse<String>> get(String path, String ip) {
        return http.sendAsync(
                HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                        .timeout(Duration.ofSeconds(20))
                        .header("X-Forwarded-For", ip)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> getNow(String path, String ip) throws Exception {
        return get(path, ip).get(20, TimeUnit.SECONDS);
    }

    private static String header(HttpResponse<String> r, String name) {
        return r.headers().firstValue(name).orElse(null);
    }

    private static long done(List<CompletableFuture<HttpResponse<String>>> requests) {
        return requests.stream().filter(CompletableFuture::isDone).count();
    }

    @Test
    void aUrlRuleLetsTwoRequestsOfAnAddressRunAtOnce() throws Exception {
        String ip = "192.0.2.1";
        List<CompletableFuture<HttpResponse<String>>> six = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            six.add(get("/cc/slow?gate=url", ip));
        }
        await("4 answered, 2 in the handler")
                .atMost(Duration.ofSeconds(20))
                .until(() -> done(six) == 4 && gates.entered("url") == 2);
        List<HttpResponse<String>> rejected = six.stream()
                .filter(CompletableFuture::isDone)
                .map(CompletableFuture::join)
                .toList();
        for (HttpResponse<String> r : rejected) {
            assertThat(r.statusCode()).as(r.body()).isEqualTo(429);
            assertThat(header(r, "Retry-After"))
                    .as("nothing says when a call ends: a second")
                    .isEqualTo("1");
            assertThat(header(r, "RateLimit-Policy")).isEqualTo("\"slow-concurrency\";q=2;qu=\"concurrent-requests\"");
            assertThat(header(r, "RateLimit")).isEqualTo("\"slow-concurrency\";r=0");
        }
        HttpResponse<String> other = getNow("/cc/slow", "192.0.2.2");
        assertThat(other.statusCode())
                .as("another address has slots of its own")
                .isEqualTo(200);
        assertThat(header(other, "RateLimit")).isEqualTo("\"slow-concurrency\";r=1");
        assertThat(done(six)).as("the two in the handler are still running").isEqualTo(4);

        gates.open("url");
        List<HttpResponse<String>> served = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> r : six) {
            HttpResponse<String> response = r.get(20, TimeUnit.SECONDS);
            if (response.statusCode() != 429) {
                served.add(response);
            }
        }
        assertThat(served).extracting(HttpResponse::statusCode).containsExactly(200, 200);
        assertThat(served).extracting(HttpResponse::body).containsOnly("passed url");
        assertThat(served)
                .extracting(r -> header(r, "RateLimit"))
                .containsExactlyInAnyOrder("\"slow-concurrency\";r=1", "\"slow-concurrency\";r=0");
        assertThat(gates.entered("url"))
                .as("no rejected request reached the handler")
                .isEqualTo(2);
        await("both slots back").atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            HttpResponse<String> next = getNow("/cc/slow", ip);
            assertThat(next.statusCode()).isEqualTo(200);
            assertThat(header(next, "RateLimit"))
                    .as("it took one of two free slots")
                    .isEqualTo("\"slow-concurrency\";r=1");
        });
    }

    @Test
    void anAnnotatedHandlerHoldsItsSlotWhileItRunsAndGivesItBackWhenItThrows() throws Exception {
        String ip = "192.0.2.3";
        CompletableFuture<HttpResponse<String>> running = get("/cc/one?gate=one", ip);
        await().atMost(Duration.ofSeconds(20)).until(() -> gates.entered("one") == 1);
        HttpResponse<String> second = getNow("/cc/one", ip);
        assertThat(second.statusCode()).isEqualTo(429);
        assertThat(header(second, "Retry-After")).isEqualTo("1");
        assertThat(header(second, "RateLimit-Policy")).isEqualTo("\"one-concurrency\";q=1;qu=\"concurrent-requests\"");
        assertThat(header(second, "RateLimit")).isEqualTo("\"one-concurrency\";r=0");
        assertThat(getNow("/cc/one", "192.0.2.4").statusCode())
                .as("another address")
                .isEqualTo(200);

        gates.open("one");
        HttpResponse<String> ran = running.get(20, TimeUnit.SECONDS);
        assertThat(ran.statusCode()).isEqualTo(200);
        assertThat(ran.body()).isEqualTo("passed one");
        assertThat(header(ran, "RateLimit")).isEqualTo("\"one-concurrency\";r=0");

        // The first request's slot comes back a moment after its 200: the failing request may find it taken once.
        HttpResponse<String> failed = await().atMost(Duration.ofSeconds(10))
                .until(() -> getNow("/cc/one?fail=true", ip), r -> r.statusCode() != 429);
        assertThat(failed.statusCode()).isEqualTo(500);
        assertThat(getNow("/cc/one", ip).statusCode())
                .as("the handler that threw gave its slot back before its 500")
                .isEqualTo(200);
    }

    @Test
    void aServiceBeanMethodHoldsItsSlotUntilItReturnsOrThrows() throws Exception {
        String tenant = "t-" + UUID.randomUUID();
        String gate = "export-" + tenant;
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<String> running = pool.submit(() -> exports.export(tenant, gate, false));
            await().atMost(Duration.ofSeconds(10)).until(() -> gates.entered(gate) == 1);
            assertThatThrownBy(() -> exports.export(tenant, "", false))
                    .isInstanceOfSatisfying(RateLimitExceededException.class, e -> {
                        assertThat(e.decision().binding().rule()).isEqualTo("export");
                        assertThat(e.decision().retryAfterNanos()).isEqualTo(TimeUnit.SECONDS.toNanos(1));
                    });
            assertThat(exports.export("other-" + tenant, "", false))
                    .as("another key")
                    .isEqualTo("passed");

            gates.open(gate);
            assertThat(running.get(10, TimeUnit.SECONDS)).isEqualTo("passed " + gate);
            assertThat(exports.export(tenant, "", false))
                    .as("it returned: its slot is back")
                    .isEqualTo("passed");
            assertThatThrownBy(() -> exports.export(tenant, "", true)).isInstanceOf(IllegalStateException.class);
            assertThat(exports.export(tenant, "", false))
                    .as("it threw: its slot is back")
                    .isEqualTo("passed");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aMethodReturningAFutureHoldsItsSlotUntilTheFutureCompletes() {
        String tenant = "t-" + UUID.randomUUID();
        CompletableFuture<String> work = new CompletableFuture<>();
        CompletableFuture<String> returned = exports.report(tenant, work);
        assertThat(returned).isNotDone();
        assertThatThrownBy(() -> exports.report(tenant, CompletableFuture.completedFuture("x")))
                .as("the first call's future is pending")
                .isInstanceOf(RateLimitExceededException.class);
        work.complete("done");
        assertThat(returned.join()).isEqualTo("done");
        assertThat(exports.report(tenant, CompletableFuture.completedFuture("again"))
                        .join())
                .as("completed: its slot is back, and a completed future's call ends at once")
                .isEqualTo("again");

        CompletableFuture<String> failing = new CompletableFuture<>();
        exports.report(tenant, failing);
        assertThatThrownBy(() -> exports.report(tenant, CompletableFuture.completedFuture("x")))
                .isInstanceOf(RateLimitExceededException.class);
        failing.completeExceptionally(new IllegalStateException("the work failed"));
        assertThat(exports.report(tenant, CompletableFuture.completedFuture("after a failure"))
                        .join())
                .as("completed exceptionally: its slot is back")
                .isEqualTo("after a failure");

        CompletableFuture<String> abandoned = new CompletableFuture<>();
        exports.report(tenant, abandoned);
        assertThatThrownBy(() -> exports.report(tenant, CompletableFuture.completedFuture("x")))
                .isInstanceOf(RateLimitExceededException.class);
        abandoned.cancel(true);
        assertThat(exports.report(tenant, CompletableFuture.completedFuture("after a cancel"))
                        .join())
                .as("cancelled: its slot is back")
                .isEqualTo("after a cancel");
    }

    @Test
    void aSoftRuleMakesARequestWaitForASlot() throws Exception {
        String ip = "192.0.2.5";
        CompletableFuture<HttpResponse<String>> first = get("/cc/queued?gate=queued", ip);
        CompletableFuture<HttpResponse<String>> second = get("/cc/queued?gate=queued", ip);
        await().atMost(Duration.ofSeconds(20)).until(() -> gates.entered("queued") == 2);
        CompletableFuture<HttpResponse<String>> third = get("/cc/queued", ip);
        await("the third waits while both slots are held")
                .during(Duration.ofMillis(500))
                .atMost(Duration.ofSeconds(5))
                .until(() -> !third.isDone());

        gates.open("queued");
        HttpResponse<String> waited = third.get(20, TimeUnit.SECONDS);
        assertThat(waited.statusCode()).as(waited.body()).isEqualTo(200);
        assertThat(waited.body()).isEqualTo("passed");
        assertThat(first.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        assertThat(second.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }

    @Test
    void aSoftRuleGivesUpAfterItsMaxDelay() throws Exception {
        String ip = "192.0.2.6";
        CompletableFuture<HttpResponse<String>> holder = get("/cc/brief?gate=brief", ip);
        await().atMost(Duration.ofSeconds(20)).until(() -> gates.entered("brief") == 1);
        long start = System.nanoTime();
        HttpResponse<String> gaveUp = getNow("/cc/brief", ip);
        assertThat(gaveUp.statusCode()).isEqualTo(429);
        assertThat(header(gaveUp, "Retry-After")).isEqualTo("1");
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .as("it waited its max-delay")
                .isGreaterThanOrEqualTo(Duration.ofMillis(300));
        assertThat(holder).isNotDone();
        gates.open("brief");
        assertThat(holder.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }

    /** A handler Spring MVC finishes later holds its slot until its async processing completes. */
    @Test
    void aDeferredResultHoldsItsSlotUntilItIsSet() throws Exception {
        String ip = "198.51.100.90";
        CompletableFuture<HttpResponse<String>> first = get("/cc/deferred?tenant=acme&id=d1", ip);
        await().atMost(Duration.ofSeconds(20)).until(() -> App.Deferred.PENDING.containsKey("d1"));
        HttpResponse<String> second = getNow("/cc/deferred?tenant=acme&id=d2", ip);
        assertThat(second.statusCode()).as("the first is still in flight").isEqualTo(429);
        App.Deferred.PENDING.get("d1").setResult("done");
        assertThat(first.get(20, TimeUnit.SECONDS).body()).isEqualTo("done");
        // The slot comes back as the first's async processing completes, a moment after its answer: a third
        // request reaches the handler, sent again while it finds the slot still on its way back.
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            CompletableFuture<HttpResponse<String>> third = get("/cc/deferred?tenant=acme&id=d3", ip);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> App.Deferred.PENDING.containsKey("d3") || third.isDone());
            return App.Deferred.PENDING.containsKey("d3");
        });
        App.Deferred.PENDING.get("d3").setResult("done");
    }

    /** A service method returning a Mono holds its slot until the Mono ends (here: subscribed and completed). */
    @Test
    void aMonoHoldsItsSlotUntilItEnds() {
        reactor.core.publisher.Sinks.One<String> work = reactor.core.publisher.Sinks.one();
        reactor.core.publisher.Mono<String> running = exports.stream("acme", work.asMono());
        reactor.core.Disposable subscribed = running.subscribe();
        // Decided when subscribed (on Redis, on the store's threads): the work starts once the call has its slot.
        await().atMost(Duration.ofSeconds(10)).until(() -> work.currentSubscriberCount() > 0);
        assertThatThrownBy(() -> exports.stream("acme", reactor.core.publisher.Mono.just("x"))
                        .block())
                .isInstanceOf(RateLimitExceededException.class);
        work.tryEmitValue("done");
        // The slot comes back as the Mono ends (on Redis, a round trip later).
        await().atMost(Duration.ofSeconds(10))
                .ignoreExceptions()
                .until(() -> "x"
                        .equals(exports.stream("acme", reactor.core.publisher.Mono.just("x"))
                                .block()));
        subscribed.dispose();
    }

    /** Inside a request, a service's Mono holds its slot until Spring MVC has its value, not until it is returned. */
    @Test
    void aServicesMonoInsideARequestHoldsItsSlotUntilItEnds() throws Exception {
        String ip = "198.51.100.91";
        CompletableFuture<HttpResponse<String>> first = get("/cc/stream?tenant=globex&gate=s1", ip);
        await().atMost(Duration.ofSeconds(20)).until(() -> gates.entered("s1") == 1);
        assertThat(getNow("/cc/stream?tenant=globex", ip).statusCode())
                .as("the first is still in flight")
                .isEqualTo(429);
        gates.open("s1");
        assertThat(first.get(20, TimeUnit.SECONDS).body()).isEqualTo("passed s1");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> getNow("/cc/stream?tenant=globex", ip).statusCode() == 200);
    }
}
