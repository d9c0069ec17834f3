package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.testing.redis.RedisCluster;
import io.github.ratelimit.testing.redis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A crowd on one key of one instance, against a real Redis: the calls of one JVM never conflict with each other, and
 * however many wait for this instance's own connections or pipelines, no decision is made by a failure policy while
 * Redis answers in time. (Issue 33, items 6 and 8: a contention 429 inside one instance with tokens to spare; 1000
 * clients on one key admitted by fail-open while Redis answered PING within 4 ms.)
 */
class OneInstanceCrowdTest {

    private static RedisServer redis;

    /** One Cluster for the class's crowds on a Cluster: each has a key prefix of its own. */
    private static RedisCluster cluster;

    @BeforeAll
    static void startRedis() {
        redis = RedisServer.start();
        cluster = RedisCluster.start(3, 0);
    }

    @AfterAll
    static void stopRedis() {
        try {
            cluster.close();
        } finally {
            redis.close();
        }
    }

    private static String prefix() {
        return "c" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static JedisBucketStore store() {
        return JedisBucketStore.builder()
                .url(redis.uri().toString())
                .keyPrefix(prefix())
                .build();
    }

    /** Counts the bases of every verdict the limiter hears of. */
    private static final class Bases implements RateLimiter.Listener {
        final Map<Basis, AtomicLong> counts = new ConcurrentHashMap<>();

        @Override
        public void onDecision(Decision decision) {
            decision.verdicts()
                    .forEach(v -> counts.computeIfAbsent(v.basis(), b -> new AtomicLong())
                            .incrementAndGet());
        }

        long of(Basis basis) {
            AtomicLong n = counts.get(basis);
            return n == null ? 0 : n.get();
        }
    }

    /**
     * 64 threads × 50 rounds on one key, every round started together, through a guard of two rules (so each call's
     * two consumes are started apart and travel in one round trip, the path a URL rule and a handler's rule take) and
     * through one rule alone: with tokens to spare, every call is admitted and no compare-and-set conflicts.
     */
    @Test
    void sixtyFourConcurrentCallsOnOneKeyNeverConflictWithinOneInstance() throws Exception {
        Bases bases = new Bases();
        try (JedisBucketStore store = store();
                RateLimiter limiter =
                        RateLimiter.builder().store(store).listener(bases).build()) {
            Guard two = limiter.guard(
                    Rule.builder("site").limits("10000000/1m").build(),
                    Rule.builder("hello").limits("10000000/1m", "1000000/1s").build());
            Guard one =
                    limiter.guard(Rule.builder("alone").limits("10000000/1m").build());
            int threads = 64;
            int rounds = 50;
            CyclicBarrier barrier = new CyclicBarrier(threads);
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            AtomicLong rejected = new AtomicLong();
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int id = t;
                    futures.add(pool.submit(() -> {
                        for (int r = 0; r < rounds; r++) {
                            barrier.await(30, TimeUnit.SECONDS);
                            Guard g = (id + r) % 2 == 0 ? two : one;
                            if (!g.acquire(RequestContext.empty()).permitted()) {
                                rejected.incrementAndGet();
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> f : futures) {
                    f.get(120, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            JedisBucketStore.Stats stats = store.stats();
            assertThat(rejected.get())
                    .as("rejections; bases %s; %s", bases.counts, stats)
                    .isZero();
            assertThat(stats.conflicts()).as("conflicts; %s", stats).isZero();
            assertThat(stats.contended()).isZero();
            assertThat(stats.failures()).isZero();
            assertThat(bases.counts.keySet()).containsOnly(Basis.BUCKET);
        }
    }

    /**
     * 200 calls at once on one key of a sliding window (and of a token bucket): with room for all, every one admitted in
     * fewer script runs than calls (the calls that came while one was on its way were combined into one run, which
     * performs them in order, each exactly as alone); with room for 50 in the hour, exactly 50 admitted.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(
            value = Algorithm.class,
            names = {"SLIDING_WINDOW_LOG", "SLIDING_WINDOW_COUNTER", "TOKEN_BUCKET"})
    void aCrowdOnOneKeyIsCombinedIntoFewerRunsAndAdmitsExactlyTheLimit(Algorithm algorithm) throws Exception {
        try (JedisBucketStore store = store();
                RateLimiter limiter = RateLimiter.builder().store(store).build()) {
            Guard spare = limiter.guard(
                    Rule.builder("spare").limits("1000/1h").algorithm(algorithm).build());
            assertThat(crowd(spare, 200)).isEqualTo(200);
            JedisBucketStore.Stats stats = store.stats();
            assertThat(stats.decisions()).isEqualTo(200);
            assertThat(stats.roundTrips())
                    .as("script runs for 200 calls; %s", stats)
                    .isLessThan(200);
            Guard exact = limiter.guard(
                    Rule.builder("exact").limits("50/1h").algorithm(algorithm).build());
            assertThat(crowd(exact, 200)).as("%s", store.stats()).isEqualTo(50);
            assertThat(store.stats().conflicts()).isZero();
            assertThat(store.stats().failures()).isZero();
        }
    }

    /** @return how many of {@code calls} made at once the guard admitted, each decided by the store */
    private static long crowd(Guard guard, int calls) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(calls);
        AtomicLong admitted = new AtomicLong();
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int c = 0; c < calls; c++) {
                futures.add(pool.submit(() -> {
                    start.await();
                    Decision d = guard.acquire(RequestContext.empty());
                    assertThat(d.binding().basis()).isEqualTo(Basis.BUCKET);
                    if (d.permitted()) {
                        admitted.incrementAndGet();
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        return admitted.get();
    }

    /** Threads that keep cores busy until closed, as a load generator on the same machine does. */
    private static final class Busy implements AutoCloseable {
        private final List<Thread> threads = new ArrayList<>();
        private volatile boolean stop;

        Busy(int n) {
            for (int i = 0; i < n; i++) {
                Thread t = new Thread(
                        () -> {
                            long x = 0;
                            while (!stop) {
                                x += System.nanoTime() % 7;
                            }
                            if (x == 42) {
                                System.out.print("");
                            }
                        },
                        "busy-" + i);
                t.setDaemon(true);
                t.start();
                threads.add(t);
            }
        }

        @Override
        public void close() throws InterruptedException {
            stop = true;
            for (Thread t : threads) {
                t.join();
            }
        }
    }

    static Stream<Arguments> crowds() {
        List<Arguments> all = new ArrayList<>();
        for (Algorithm algorithm : new Algorithm[] {
            Algorithm.TOKEN_BUCKET,
            Algorithm.FIXED_WINDOW,
            Algorithm.LEAKY_BUCKET,
            Algorithm.SLIDING_WINDOW_LOG,
            Algorithm.SLIDING_WINDOW_COUNTER
        }) {
            all.add(Arguments.of(algorithm, Mode.HARD));
            all.add(Arguments.of(algorithm, Mode.SOFT));
        }
        return all.stream();
    }

    /**
     * The same crowd on a Cluster, where calls go one by one on pooled connections (16 per node), not pipelined: a
     * call that finds every connection busy with this instance's calls waits for one while Redis answers them, and
     * the key's calls are combined all the same.
     */
    @ParameterizedTest(name = "{0} {1} on a Cluster")
    @org.junit.jupiter.params.provider.CsvSource({"TOKEN_BUCKET, HARD", "SLIDING_WINDOW_COUNTER, SOFT"})
    void aThousandClientsOnOneKeyOfAClusterAreDecidedByRedis(Algorithm algorithm, Mode mode) throws Exception {
        try (JedisBucketStore store = JedisBucketStore.builder()
                .cluster(cluster.nodes().stream().map(Object::toString).toList())
                .keyPrefix(prefix())
                .build()) {
            crowdOfAThousand(store, algorithm, mode);
        }
    }

    /**
     * 1000 clients at once on one key of each algorithm, HARD and SOFT (the attack's rule: {@code 1/10ms}, SOFT calls
     * waiting up to 640 ms, 1000 of them at most): no decision by a failure policy, and no more admitted than the rule
     * allows over the time the crowd took.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("crowds")
    void aThousandClientsOnOneKeyAreDecidedByRedisNotByAFailurePolicy(Algorithm algorithm, Mode mode) throws Exception {
        try (JedisBucketStore store = store()) {
            crowdOfAThousand(store, algorithm, mode);
        }
    }

    private static void crowdOfAThousand(JedisBucketStore store, Algorithm algorithm, Mode mode) throws Exception {
        Bases bases = new Bases();
        try (RateLimiter limiter = RateLimiter.builder()
                .store(store)
                .listener(bases)
                .maxWaiting(1000)
                .build()) {
            Rule.Builder rule =
                    Rule.builder("crowd").limits("1/10ms").algorithm(algorithm).mode(mode);
            if (mode == Mode.SOFT) {
                rule.maxDelay(Duration.ofMillis(640)).maxWaiting(1000);
            }
            Guard guard = limiter.guard(rule.build());
            guard.acquire(RequestContext.empty()); // loads the script, takes the key's first token
            int clients = 1000;
            CountDownLatch start = new CountDownLatch(1);
            ExecutorService pool = Executors.newFixedThreadPool(clients);
            // A load generator's share of the two cores: the crowd is decided on a busy machine, not an idle one.
            Busy busy = new Busy(1);
            AtomicLong admitted = new AtomicLong();
            long t0;
            long t1;
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int c = 0; c < clients; c++) {
                    futures.add(pool.submit(() -> {
                        start.await();
                        if (guard.acquire(RequestContext.empty()).permitted()) {
                            admitted.incrementAndGet();
                        }
                        return null;
                    }));
                }
                t0 = System.nanoTime();
                start.countDown();
                for (Future<?> f : futures) {
                    f.get(120, TimeUnit.SECONDS);
                }
                t1 = System.nanoTime();
            } finally {
                busy.close();
                pool.shutdownNow();
            }
            JedisBucketStore.Stats stats = store.stats();
            assertThat(bases.of(Basis.FAIL_OPEN) + bases.of(Basis.FAIL_CLOSED) + bases.of(Basis.FALLBACK_BUCKET))
                    .as("decisions by a failure policy; bases %s; %s", bases.counts, stats)
                    .isZero();
            assertThat(stats.failures()).as("%s", stats).isZero();
            // One call per 10 ms after the first, over the time the crowd took, and the SOFT calls' last delay.
            long span = t1 - t0 + (mode == Mode.SOFT ? Duration.ofMillis(640).toNanos() : 0);
            long allowed = 1 + span / 10_000_000L + 1;
            assertThat(admitted.get())
                    .as("admitted of %d in %d ms; bases %s; %s", clients, (t1 - t0) / 1_000_000, bases.counts, stats)
                    .isLessThanOrEqualTo(allowed)
                    .isPositive();
        }
    }
}
