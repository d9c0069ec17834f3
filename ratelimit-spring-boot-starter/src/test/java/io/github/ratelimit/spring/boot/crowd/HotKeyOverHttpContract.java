package io.github.ratelimit.spring.boot.crowd;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.redis.JedisBucketStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * One instance, one hot key, over real HTTP on a real Redis (issue 33, item 6): 64 clients at once × 50 rounds on a
 * path whose URL rule and handler rule share the key {@code global}, with tokens to spare. Every request is answered
 * 200, and the store meets no conflict: calls of one JVM on one key never conflict with each other (it answered a
 * contention 429 while tokens remained, with 50 conflicts for 39 operations).
 */
public final class HotKeyOverHttpContract {

    /** The properties of the app under test: Redis, and a URL rule on {@code /hot/**} keyed {@code global}. */
    public static String[] properties(String redisUri) {
        return new String[] {
            "ratelimit.redis.url=" + redisUri,
            "ratelimit.rules[0].name=hot-site",
            "ratelimit.rules[0].paths=/hot/**",
            "ratelimit.rules[0].key=global",
            "ratelimit.rules[0].limits=10000000/1m"
        };
    }

    private HotKeyOverHttpContract() {}

    /**
     * @param context the running app, whose {@code /hot/hello} has a handler rule keyed {@code global} as well
     * @param port its port
     */
    public static void sixtyFourClientsAtOnceForFiftyRoundsAreAllAnsweredWithoutAConflict(
            ConfigurableApplicationContext context, int port) throws Exception {
        JedisBucketStore store = context.getBean(JedisBucketStore.class);
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        URI uri = URI.create("http://localhost:" + port + "/hot/hello");
        http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.discarding()); // warm-up
        long conflictsBefore = store.stats().conflicts();
        int clients = 64;
        int rounds = 50;
        CyclicBarrier barrier = new CyclicBarrier(clients);
        Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                futures.add(pool.submit(() -> {
                    for (int r = 0; r < rounds; r++) {
                        barrier.await(60, TimeUnit.SECONDS);
                        int status = http.send(
                                        HttpRequest.newBuilder(uri)
                                                .timeout(Duration.ofSeconds(30))
                                                .build(),
                                        HttpResponse.BodyHandlers.discarding())
                                .statusCode();
                        statuses.computeIfAbsent(status, s -> new AtomicInteger())
                                .incrementAndGet();
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get(5, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
        JedisBucketStore.Stats stats = store.stats();
        assertThat(new TreeMap<>(statuses)).as("statuses; %s", stats).containsOnlyKeys(200);
        assertThat(statuses.get(200).get()).isEqualTo(clients * rounds);
        assertThat(stats.conflicts() - conflictsBefore)
                .as("conflicts; %s", stats)
                .isZero();
        assertThat(stats.contended()).isZero();
        assertThat(stats.failures()).isZero();
    }
}
