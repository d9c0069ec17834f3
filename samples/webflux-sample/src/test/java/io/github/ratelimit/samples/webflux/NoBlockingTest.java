package io.github.ratelimit.samples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.testing.redis.RedisServer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.blockhound.BlockHound;

/**
 * BlockHound instruments the JVM's blocking methods (socket reads, sleeps, parking, file writes) and reports every
 * call of one on a non-blocking thread (Netty's event loops, Reactor's parallel scheduler) while the sample serves
 * every kind of request over HTTP: allowed and rejected, keyed by address and by user behind Spring Security, a
 * handler decided at the call, a throttled reactive client, SOFT bursts that wait, on the local store and on a real
 * Redis. None may be found: the limiter never blocks an event loop.
 */
class NoBlockingTest {

    private static final List<String> BLOCKING = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void installBlockHound() {
        // Reported, not thrown: a throw inside Netty would turn into a failed request and hide where it came from.
        // One allowance, for Netty and not for us: when two threads contend for a buffer, Netty 4.2's adaptive
        // allocator grows its magazine array under a StampedLock held for a few instructions, which BlockHound sees
        // as a park. Netty's own BlockHound integration (netty-common's Hidden) does not list it yet; other projects
        // that run BlockHound on Netty 4.2 (Armeria) make the same allowance. Nothing of the limiter is inside it.
        BlockHound.install(builder -> builder.allowBlockingCallsInside(
                        "io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines")
                .blockingMethodCallback(method ->
                        BLOCKING.add(method + " on " + Thread.currentThread().getName() + "\n" + stack())));
        // Test classes that ran before in this JVM may have started Reactor's shared schedulers. Their idle workers
        // wait inside ScheduledThreadPoolExecutor$DelayedWorkQueue.take, which Reactor's integration allows, but a
        // call entered before the instrumentation does not carry the allowance: its next park was reported
        // ("Unsafe#park on parallel-1", idle in take, when NoBlockingTest ran after WebFluxSampleTest). Fresh
        // schedulers start their threads, and every call of theirs, under BlockHound.
        reactor.core.scheduler.Schedulers.shutdownNow();
    }

    private static String stack() {
        StringBuilder s = new StringBuilder();
        StackTraceElement[] trace = new Throwable().getStackTrace();
        for (int i = 0; i < Math.min(trace.length, 40); i++) {
            s.append("    at ").append(trace[i]).append('\n');
        }
        return s.toString();
    }

    @org.junit.jupiter.api.BeforeEach
    void forgetEarlierCalls() {
        BLOCKING.clear();
    }

    /** The control: BlockHound is installed in this JVM and reports a blocking call on a non-blocking thread. */
    @Test
    void blockHoundReportsABlockingCallOnANonBlockingThread() {
        reactor.core.publisher.Mono.fromCallable(() -> {
                    Thread.sleep(1); // the blocking call BlockHound must report
                    return 1;
                })
                .subscribeOn(reactor.core.scheduler.Schedulers.parallel())
                .block();
        assertThat(BLOCKING)
                .hasSize(1)
                .allSatisfy(call ->
                        assertThat(call).startsWith("java.lang.Thread.sleep").contains(" on parallel-"));
    }

    @Test
    void theLocalStoreNeverBlocksAnEventLoop() throws Exception {
        try (ConfigurableApplicationContext app = SpringApplication.run(
                WebFluxSampleApplication.class, "--server.port=0", "--spring.main.banner-mode=off")) {
            exercise(WebFluxSampleTest.clientOf(app));
        }
        assertThat(BLOCKING).as("blocking calls on non-blocking threads").isEmpty();
    }

    @Test
    void theRedisStoreNeverBlocksAnEventLoop() throws Exception {
        try (RedisServer redis = RedisServer.start();
                ConfigurableApplicationContext app = SpringApplication.run(
                        WebFluxSampleApplication.class,
                        "--server.port=0",
                        "--spring.main.banner-mode=off",
                        "--ratelimit.redis.url=" + redis.uri())) {
            exercise(WebFluxSampleTest.clientOf(app));
        }
        assertThat(BLOCKING).as("blocking calls on non-blocking threads").isEmpty();
    }

    /**
     * Operations on a live system: per-key limits in Redis by one property, the ratelimitkeys endpoint's writes
     * switched on, only ADMIN past Spring Security. An admin's change is enforced at once and attributed; a reset
     * unblocks; the endpoint's Redis calls run off the event loops too.
     */
    @Test
    void theOperationsEndpointChangesLimitsWithoutBlockingAnEventLoop() throws Exception {
        try (RedisServer redis = RedisServer.start();
                ConfigurableApplicationContext app = SpringApplication.run(
                        WebFluxSampleApplication.class,
                        "--server.port=0",
                        "--spring.main.banner-mode=off",
                        "--ratelimit.redis.url=" + redis.uri(),
                        "--ratelimit.limit-store.enabled=true",
                        "--management.endpoints.web.exposure.include=health,ratelimits,ratelimitkeys",
                        "--management.endpoint.ratelimitkeys.access=unrestricted")) {
            WebTestClient client = WebFluxSampleTest.clientOf(app);
            String path = "/actuator/ratelimitkeys/me/alice";
            assertThat(change(client, path, null, "{\"limits\":\"1/1m\"}")
                            .getStatus()
                            .value())
                    .isEqualTo(401);
            assertThat(change(client, path, "alice:alice", "{\"limits\":\"1/1m\"}")
                            .getStatus()
                            .value())
                    .isEqualTo(403);
            var set = change(client, path, "admin:admin", "{\"limits\":\"1/1m\"}");
            assertThat(set.getStatus().value()).as(set.getResponseBody()).isEqualTo(200);
            assertThat(set.getResponseBody())
                    .contains("\"changedBy\":\"admin\"")
                    .contains("1/1m");
            assertThat(status(client, "/api/me", "alice:alice")).isEqualTo(200);
            assertThat(status(client, "/api/me", "alice:alice")).isEqualTo(429);
            assertThat(status(client, "/api/me", "bob:bob"))
                    .as("bob keeps the rule's limits")
                    .isEqualTo(200);
            assertThat(change(client, path, "admin:admin", "{\"reset\":true}")
                            .getStatus()
                            .value())
                    .isEqualTo(200);
            assertThat(status(client, "/api/me", "alice:alice")).as("unblocked").isEqualTo(200);
        }
        assertThat(BLOCKING).as("blocking calls on non-blocking threads").isEmpty();
    }

    private static org.springframework.test.web.reactive.server.EntityExchangeResult<String> change(
            WebTestClient client, String path, String credentials, String json) {
        return client.post()
                .uri(path)
                .headers(h -> {
                    if (credentials != null) {
                        String[] userAndPassword = credentials.split(":");
                        h.setBasicAuth(userAndPassword[0], userAndPassword[1]);
                    }
                })
                .contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                .bodyValue(json)
                .exchange()
                .expectBody(String.class)
                .returnResult();
    }

    /** Every kind of request the sample serves, several times, with SOFT bursts in flight. */
    private static void exercise(WebTestClient client) throws Exception {
        List<CompletableFuture<Integer>> bursts = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            bursts.add(CompletableFuture.supplyAsync(() -> status(client, "/api/export", null)));
            bursts.add(CompletableFuture.supplyAsync(() -> status(client, "/api/reports", null)));
        }
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            statuses.add(status(client, "/api/hello", null));
            statuses.add(status(client, "/api/me", "alice:alice"));
            statuses.add(status(client, "/api/me", "alice:wrong"));
            statuses.add(status(client, "/api/orders/" + (i % 3), null));
            statuses.add(status(client, "/api/quotes", null));
            statuses.add(status(client, "/api/status", null));
        }
        for (CompletableFuture<Integer> f : bursts) {
            statuses.add(f.get(30, TimeUnit.SECONDS));
        }
        assertThat(statuses)
                .as("allowed, rejected and refused requests all answered")
                .contains(200, 401, 429)
                .allMatch(s -> s == 200 || s == 401 || s == 429);
    }

    private static int status(WebTestClient client, String path, String credentials) {
        return client.get()
                .uri(path)
                .headers(h -> {
                    if (credentials != null) {
                        String[] userAndPassword = credentials.split(":");
                        h.setBasicAuth(userAndPassword[0], userAndPassword[1]);
                    }
                })
                .exchange()
                .expectBody(String.class)
                .returnResult()
                .getStatus()
                .value();
    }
}
