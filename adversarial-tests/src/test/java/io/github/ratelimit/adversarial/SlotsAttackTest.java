package io.github.ratelimit.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.Jedis;

/**
 * Attacks a concurrency rule ({@code concurrency=2}) over real HTTP against a real Tomcat: a crowd of 200 requests at
 * once on one key gets exactly 2 into the servlet and 198 answers of 429, on both stores, with no 5xx and no Redis
 * failure; and garbage in the key's leases in Redis (another type, a megabyte, leases that never expire, ten thousand
 * planted leases) is replaced, not obeyed: the rule lets 2 requests in at once as on an empty key, and fails nothing
 * open.
 */
class SlotsAttackTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private Target target;

    @AfterEach
    void stop() throws Exception {
        if (target != null) {
            target.close();
        }
    }

    /** Holds each request until the test lets it go, counting how many are inside at once. */
    static final class HoldingServlet extends HttpServlet {
        final Semaphore go = new Semaphore(0);
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger most = new AtomicInteger();

        @Override
        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            most.accumulateAndGet(inside.incrementAndGet(), Math::max);
            try {
                go.acquireUninterruptibly();
            } finally {
                inside.decrementAndGet();
            }
            resp.getWriter().write("done");
        }
    }

    private HoldingServlet start(StoreKind store) throws Exception {
        HoldingServlet servlet = new HoldingServlet();
        target = Target.builder(store, redis)
                .rule(UrlRule.of(Rule.builder("slow").key("ip").concurrency(2).build(), List.of("/slow/*"), Set.of()))
                .servlet("holding", servlet, "/slow/*")
                .start();
        return servlet;
    }

    private List<CompletableFuture<HttpResponse<Void>>> send(HttpClient client, int n) {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + target.port() + "/slow/x"))
                .timeout(Duration.ofSeconds(60))
                .build();
        List<CompletableFuture<HttpResponse<Void>>> responses = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            responses.add(client.sendAsync(request, HttpResponse.BodyHandlers.discarding()));
        }
        return responses;
    }

    @ParameterizedTest
    @EnumSource(StoreKind.class)
    void aCrowdOnOneKeyGetsExactlyItsSlots(StoreKind store) throws Exception {
        HoldingServlet servlet = start(store);
        ExecutorService executor = Executors.newFixedThreadPool(8);
        HttpClient client = HttpClient.newBuilder()
                .executor(executor)
                .version(HttpClient.Version.HTTP_1_1)
                .build();
        try {
            List<CompletableFuture<HttpResponse<Void>>> responses = send(client, 200);
            await().atMost(Duration.ofSeconds(60))
                    .until(() ->
                            responses.stream().filter(CompletableFuture::isDone).count() == 198
                                    && servlet.inside.get() == 2);
            servlet.go.release(2);
            Map<Integer, Long> statuses = responses.stream()
                    .map(CompletableFuture::join)
                    .collect(Collectors.groupingBy(HttpResponse::statusCode, Collectors.counting()));
            assertThat(statuses).isEqualTo(Map.of(200, 2L, 429, 198L));
            assertThat(servlet.most.get()).as("inside at once").isEqualTo(2);

            // The slots came back with the answers: two more get in.
            List<CompletableFuture<HttpResponse<Void>>> again = send(client, 2);
            await().atMost(Duration.ofSeconds(30)).until(() -> servlet.inside.get() == 2);
            servlet.go.release(2);
            assertThat(again).allSatisfy(f -> assertThat(f.join().statusCode()).isEqualTo(200));
            if (target.redisStore() != null) {
                assertThat(target.redisStore().stats().failures())
                        .as("Redis failures")
                        .isZero();
            }
        } finally {
            executor.shutdownNow();
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(
            strings = {
                "a string",
                "a list",
                "a hash",
                "a set",
                "a 1 MB string",
                "leases at 1e18 and +inf",
                "10,000 planted leases"
            })
    void garbageInTheLeasesIsReplacedNotObeyed(String garbage) throws Exception {
        HoldingServlet servlet = start(StoreKind.REDIS);
        ExecutorService executor = Executors.newFixedThreadPool(4);
        HttpClient client = HttpClient.newBuilder()
                .executor(executor)
                .version(HttpClient.Version.HTTP_1_1)
                .build();
        try {
            // One request in flight makes the client's key; then it is overwritten with garbage, as by hand.
            List<CompletableFuture<HttpResponse<Void>>> first = send(client, 1);
            await().atMost(Duration.ofSeconds(30)).until(() -> servlet.inside.get() == 1);
            List<byte[]> keys = target.redisKeys();
            assertThat(keys).hasSize(1);
            byte[] key = keys.get(0);
            assertThat(new String(key, StandardCharsets.UTF_8)).endsWith(":slots");
            try (Jedis jedis = new Jedis(redis.server().host(), redis.server().port())) {
                jedis.del(key);
                plant(jedis, key, garbage);
            }
            List<CompletableFuture<HttpResponse<Void>>> crowd = send(client, 5);
            await().atMost(Duration.ofSeconds(30))
                    .until(() ->
                            crowd.stream().filter(CompletableFuture::isDone).count() == 3 && servlet.inside.get() == 3);
            servlet.go.release(3);
            assertThat(first.get(0).join().statusCode()).isEqualTo(200);
            Map<Integer, Long> statuses = crowd.stream()
                    .map(CompletableFuture::join)
                    .collect(Collectors.groupingBy(HttpResponse::statusCode, Collectors.counting()));
            assertThat(statuses).as("two slots, as on an empty key").isEqualTo(Map.of(200, 2L, 429, 3L));
            assertThat(target.redisStore().stats().repairs()).as("repairs").isPositive();
            assertThat(target.redisStore().stats().failures())
                    .as("Redis failures")
                    .isZero();
        } finally {
            executor.shutdownNow();
        }
    }

    private static void plant(Jedis jedis, byte[] key, String garbage) {
        byte[] a = "a".getBytes(StandardCharsets.UTF_8);
        switch (garbage) {
            case "a string" -> jedis.set(key, "garbage".getBytes(StandardCharsets.UTF_8));
            case "a list" -> jedis.rpush(key, a);
            case "a hash" -> jedis.hset(key, a, a);
            case "a set" -> jedis.sadd(key, a);
            case "a 1 MB string" -> jedis.set(key, "x".repeat(1 << 20).getBytes(StandardCharsets.UTF_8));
            case "leases at 1e18 and +inf" -> {
                jedis.zadd(key, 1e18, a);
                jedis.zadd(key, Double.POSITIVE_INFINITY, "b".getBytes(StandardCharsets.UTF_8));
            }
            case "10,000 planted leases" -> {
                // Live-looking leases: expiring within a lease's life of the store's time (the target's clock).
                long now = System.currentTimeMillis() * 1_000;
                Map<byte[], Double> members = new java.util.HashMap<>();
                for (int i = 0; i < 10_000; i++) {
                    members.put(("planted-" + i).getBytes(StandardCharsets.UTF_8), (double) now + 5_000_000);
                }
                jedis.zadd(key, members);
            }
            default -> throw new IllegalArgumentException(garbage);
        }
    }
}
