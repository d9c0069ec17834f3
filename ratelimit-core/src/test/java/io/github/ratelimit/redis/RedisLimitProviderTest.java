package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Limit;
import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.testing.redis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisClusterClient;

/** Per-key limits in Redis, changed at run time, on real Redis servers, as two instances see them. */
class RedisLimitProviderTest {

    private static final Rule API =
            Rule.builder("api").key("user").limits("100/1m").build();

    private static RedisServer redis;
    private static RedisClient client;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
        client = RedisClient.builder().hostAndPort(redis.hostAndPort()).build();
    }

    @AfterAll
    static void stop() {
        if (client != null) {
            client.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    private static String prefix() {
        return "t" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static RedisLimitProvider.Builder limitStore(String prefix) {
        return RedisLimitProvider.builder()
                .client(client)
                .keyPrefix(prefix)
                .plan("gold", List.of(Limit.parse("1000/1m")));
    }

    private static RequestContext user(String name) {
        return RequestContext.builder().principal(name).build();
    }

    /** One application instance: its own bucket store and limit store on the shared Redis. */
    private record Instance(JedisBucketStore buckets, RedisLimitProvider limits, RateLimiter limiter)
            implements AutoCloseable {
        static Instance start(String prefix) {
            JedisBucketStore buckets = JedisBucketStore.builder()
                    .url(redis.uri().toString())
                    .keyPrefix(prefix)
                    .build();
            RedisLimitProvider limits = limitStore(prefix).build();
            // The limiter's own cache would keep an answer a minute; the store's changes clear it sooner.
            RateLimiter limiter = RateLimiter.builder()
                    .store(buckets)
                    .limitProvider(limits, Duration.ofMinutes(10))
                    .build();
            return new Instance(buckets, limits, limiter);
        }

        @Override
        public void close() {
            limiter.close();
            limits.close();
        }
    }

    @Test
    void setsReadsListsAndRemovesEntriesWithWhoMadeThem() {
        java.time.Instant now = java.time.Instant.parse("2026-01-02T03:04:05.678Z");
        try (RedisLimitProvider store = limitStore(prefix())
                .clock(java.time.Clock.fixed(now, java.time.ZoneOffset.UTC))
                .build()) {
            store.setLimits(API, "alice", List.of(Limit.parse("5/1s"), Limit.parse("100/1m burst=150")), "ops-bob");
            store.assignPlan(API, "carol", "gold", null);
            RedisLimitProvider.Entry alice = store.get("api", "alice").orElseThrow();
            assertThat(alice.limits()).containsExactly(Limit.parse("5/1s"), Limit.parse("100/1m burst=150"));
            assertThat(alice.plan()).isNull();
            assertThat(alice.changedBy()).isEqualTo("ops-bob");
            assertThat(alice.changedAt())
                    .as("stamped by the store's clock, not only present")
                    .isEqualTo(now);
            RedisLimitProvider.Entry carol = store.get("api", "carol").orElseThrow();
            assertThat(carol.plan()).isEqualTo("gold");
            assertThat(carol.limits()).containsExactly(Limit.parse("1000/1m"));
            assertThat(carol.changedBy()).isEqualTo("unknown");
            assertThat(store.get("api", "dave")).isEmpty();
            assertThat(store.get("other-rule", "alice")).isEmpty();

            assertThat(store.remove("api", "alice", "ops-bob")).isTrue();
            assertThat(store.remove("api", "alice", "ops-bob")).isFalse();
            assertThat(store.get("api", "alice")).isEmpty();
        }
    }

    @Test
    void answersFromItsDefaultsForKeysWithoutAnEntryOfTheirOwn() {
        io.github.ratelimit.LimitProvider configured = io.github.ratelimit.LimitProvider.builder()
                .limits("user:alice", "7/1m")
                .limits("user:bob", "8/1m")
                .build();
        try (RedisLimitProvider store =
                limitStore(prefix()).defaults(configured).build()) {
            store.setLimits(API, "alice", List.of(Limit.parse("70/1m")), "ops");
            assertThat(store.limitsFor(API, "alice")).as("Redis wins").containsExactly(Limit.parse("70/1m"));
            assertThat(store.limitsFor(API, "bob")).as("configured").containsExactly(Limit.parse("8/1m"));
            assertThat(store.limitsFor(API, "carol")).as("the rule's own").isNull();
            store.remove("api", "alice", "ops");
            assertThat(store.limitsFor(API, "alice")).containsExactly(Limit.parse("7/1m"));
        }
    }

    @Test
    void worksOnACluster() throws Exception {
        try (io.github.ratelimit.testing.redis.RedisCluster cluster =
                        io.github.ratelimit.testing.redis.RedisCluster.start(3, 0);
                RedisClusterClient c = RedisClusterClient.builder()
                        .nodes(new HashSet<>(cluster.nodes()))
                        .build();
                RedisLimitProvider a = RedisLimitProvider.builder()
                        .client(c)
                        .refreshInterval(Duration.ofMillis(100))
                        .build();
                RedisLimitProvider b = RedisLimitProvider.builder()
                        .client(c)
                        .refreshInterval(Duration.ofMillis(100))
                        .build()) {
            assertThat(b.limitsFor(API, "alice")).isNull();
            b.refresh(); // b has read the (empty) stream: what follows is a change to it
            a.setLimits(API, "alice", List.of(Limit.parse("3/1m")), "ops");
            assertThat(a.get("api", "alice").orElseThrow().limits()).containsExactly(Limit.parse("3/1m"));
            assertThat(a.list("api", null, 10).entries())
                    .extracting(RedisLimitProvider.Entry::key)
                    .containsExactly("alice");
            Awaitility.await("b learns of the change")
                    .atMost(Duration.ofSeconds(5))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> b.limitsFor(API, "alice") != null);
            assertThat(b.limitsFor(API, "alice")).as("b learnt of the change").containsExactly(Limit.parse("3/1m"));
        }
    }

    @Test
    void pagesThroughEveryEntryOfARule() {
        try (RedisLimitProvider store = limitStore(prefix()).build()) {
            for (int i = 0; i < 1_500; i++) {
                store.setLimits(API, "user-" + i, List.of(Limit.parse((i + 1) + "/1m")), "seed");
            }
            Set<String> seen = new HashSet<>();
            String cursor = null;
            int pages = 0;
            do {
                RedisLimitProvider.Page page = store.list("api", cursor, 100);
                page.entries().forEach(e -> seen.add(e.key()));
                cursor = page.next();
                pages++;
            } while (cursor != null && pages < 1_000);
            assertThat(seen).hasSize(1_500);
            assertThat(pages).isGreaterThan(1);
        }
    }

    @Test
    void refusesWhatItCannotStore() {
        try (RedisLimitProvider store = limitStore(prefix()).build()) {
            assertThatThrownBy(() -> store.assignPlan(API, "alice", "platinum", "x"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("known plans: [gold]");
            assertThatThrownBy(() -> store.setLimits(API, "alice", List.of(), "x"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("empty");
            assertThatThrownBy(() -> store.remove(" ", "alice", "x"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("rule name is missing");
            assertThatThrownBy(() -> store.list("api", "not-a-cursor", 10))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("cursor");
            assertThatThrownBy(() -> store.list("api", null, 0)).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> RedisLimitProvider.builder().build()).hasMessageContaining("no Redis client");
        assertThatThrownBy(() -> RedisLimitProvider.builder().keyPrefix("a{b")).hasMessageContaining("brace");
    }

    @Test
    void aChangeMadeThroughOneInstanceIsEnforcedByAnotherWithinTheRefreshInterval() throws Exception {
        String prefix = prefix();
        try (Instance a = Instance.start(prefix);
                Instance b = Instance.start(prefix)) {
            Guard onA = a.limiter().guard(API);
            Guard onB = b.limiter().guard(API);
            assertThat(onB.acquire(user("alice")).outcome()).isEqualTo(Outcome.ALLOWED); // B caches "the rule's own"
            a.limits().refresh(); // both have read the (empty) stream: what follows are changes to them
            b.limits().refresh();

            a.limits().setLimits(API, "alice", List.of(Limit.parse("2/1m")), "ops");
            // A decides nothing for alice: B learns of the change only from the store's stream of changes, within
            // the refresh interval (1 s) and a round trip. The shared bucket had 99 of 100 left; a capacity that
            // shrinks keeps at most the new capacity (Bucket4j's additive replacement): 2 left, then rejected.
            Awaitility.await("B rejects alice under her new limits")
                    .atMost(Duration.ofSeconds(3))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> onB.acquire(user("alice")).outcome() != Outcome.ALLOWED);
            assertThat(onA.acquire(user("alice")).outcome())
                    .as("A applies its own change at once")
                    .isEqualTo(Outcome.REJECTED);
            // Back to the rule's limits, again seen by B.
            a.limits().remove("api", "alice", "ops");
            Awaitility.await("B allows alice under the rule's limits again")
                    .atMost(Duration.ofSeconds(3))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> onB.acquire(user("alice")).outcome() == Outcome.ALLOWED);
        }
    }

    @Test
    void concurrentChangesAndDecisionsLoseNothing() throws Exception {
        String prefix = prefix();
        try (Instance a = Instance.start(prefix);
                Instance b = Instance.start(prefix)) {
            // Limits that 6,000 calls over 50 keys cannot reach, before or after the changes (each at least 1,000/1m).
            Rule wide = Rule.builder("api").key("user").limits("100000/1m").build();
            Guard onB = b.limiter().guard(wide);
            int keys = 50;
            ExecutorService pool = Executors.newFixedThreadPool(6);
            Map<String, Integer> last = new ConcurrentHashMap<>();
            AtomicInteger decisions = new AtomicInteger();
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int w = 0; w < 3; w++) {
                    int writer = w;
                    futures.add(pool.submit(() -> {
                        // Each writer owns some keys and sets each many times; the last value must win everywhere.
                        for (int round = 1; round <= 20; round++) {
                            for (int k = writer; k < keys; k += 3) {
                                int permits = round * 1_000 + k;
                                a.limits()
                                        .setLimits(
                                                API,
                                                "user-" + k,
                                                List.of(Limit.of(permits, Duration.ofMinutes(1))),
                                                "w" + writer);
                                last.put("user-" + k, permits);
                            }
                        }
                        return null;
                    }));
                }
                for (int d = 0; d < 3; d++) {
                    futures.add(pool.submit(() -> {
                        for (int i = 0; i < 2_000; i++) {
                            assertThat(onB.acquire(user("user-" + (i % keys))).outcome())
                                    .isEqualTo(Outcome.ALLOWED);
                            decisions.incrementAndGet();
                        }
                        return null;
                    }));
                }
                for (Future<?> f : futures) {
                    f.get(60, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            assertThat(decisions.get()).isEqualTo(6_000);
            b.limits().refresh(); // what B's refresh thread does within a second, now
            for (int k = 0; k < keys; k++) {
                String key = "user-" + k;
                List<Limit> expected = List.of(Limit.of(last.get(key), Duration.ofMinutes(1)));
                assertThat(a.limits().get("api", key).orElseThrow().limits())
                        .as(key)
                        .isEqualTo(expected);
                assertThat(b.limits().limitsFor(wide, key))
                        .as("B's answer for %s", key)
                        .isEqualTo(expected);
                assertThat(a.limits().limitsFor(wide, key))
                        .as("A's answer for %s", key)
                        .isEqualTo(expected);
            }
        }
    }

    @Test
    void aResetUnblocksAKeyOnItsInstanceAtOnceAndOnEveryOtherWithinASecond() {
        String prefix = prefix();
        try (Instance a = Instance.start(prefix);
                Instance b = Instance.start(prefix)) {
            Rule tight = Rule.builder("login").key("user").limits("2/1h").build();
            Guard onA = a.limiter().guard(tight);
            Guard onB = b.limiter().guard(tight);
            assertThat(onA.acquire(user("mallory")).outcome()).isEqualTo(Outcome.ALLOWED);
            assertThat(onB.acquire(user("mallory")).outcome()).isEqualTo(Outcome.ALLOWED);
            assertThat(onA.acquire(user("mallory")).outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(onB.acquire(user("mallory")).outcome()).isEqualTo(Outcome.REJECTED);
            a.limiter().reset("login", "mallory");
            assertThat(onA.acquire(user("mallory")).outcome())
                    .as("the instance that reset")
                    .isEqualTo(Outcome.ALLOWED);
            // B remembers Redis's rejection for at most a second before it asks again (RejectionMemo): stricter
            // meanwhile, never looser.
            await().atMost(Duration.ofSeconds(3))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> onB.acquire(user("mallory")).outcome() == Outcome.ALLOWED);
            assertThat(onB.acquire(user("mallory")).outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(onA.acquire(user("mallory")).outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(onB.acquire(user("trent")).outcome())
                    .as("another key is untouched")
                    .isEqualTo(Outcome.ALLOWED);
        }
    }

    @Test
    void aResetOnTheLocalStoreForgetsTheKeyInEveryAlgorithm() {
        try (RateLimiter limiter = RateLimiter.builder().build()) {
            for (io.github.ratelimit.Algorithm algorithm : io.github.ratelimit.Algorithm.values()) {
                Rule rule = Rule.builder("r-" + algorithm)
                        .key("user")
                        .limits("1/1h")
                        .algorithm(algorithm)
                        .build();
                Guard guard = limiter.guard(rule);
                assertThat(guard.acquire(user("u")).outcome())
                        .as("%s", algorithm)
                        .isEqualTo(Outcome.ALLOWED);
                assertThat(guard.acquire(user("u")).outcome())
                        .as("%s", algorithm)
                        .isEqualTo(Outcome.REJECTED);
                limiter.reset(rule.name(), "u");
                assertThat(guard.acquire(user("u")).outcome())
                        .as("%s after reset", algorithm)
                        .isEqualTo(Outcome.ALLOWED);
            }
        }
    }

    @Test
    void keepsTheLastKnownLimitsWhileRedisIsDownAndAsksAgainWhenItReturns() throws Exception {
        try (RedisServer own = RedisServer.start();
                // Timeouts as the bucket store's client has them (50 ms commands); the limit store has no timeout of
                // its own and uses its client's.
                RedisClient c = RedisClient.builder()
                        .hostAndPort(new HostAndPort(own.host(), own.port()))
                        .clientConfig(DefaultJedisClientConfig.builder()
                                .socketTimeoutMillis(50)
                                .build())
                        .build()) {
            AtomicInteger allChanged = new AtomicInteger();
            // Refreshes run here by hand: the scheduled one runs once, at the start.
            try (RedisLimitProvider store = RedisLimitProvider.builder()
                            .client(c)
                            .refreshInterval(Duration.ofHours(1))
                            .build();
                    // Counters in this JVM, limits in Redis: decisions go on while Redis is down.
                    RateLimiter limiter = RateLimiter.builder()
                            .limitProvider(store, Duration.ofMinutes(10))
                            .build()) {
                store.refresh(); // the first position in the stream is read (if the scheduled run has not yet)
                store.onChange(new LimitProvider.Changes() {
                    @Override
                    public void keyChanged(String rule, String key) {}

                    @Override
                    public void allChanged() {
                        allChanged.incrementAndGet();
                    }
                });
                store.setLimits(API, "alice", List.of(Limit.parse("1/1h")), "ops");
                Guard guard = limiter.guard(API);
                assertThat(guard.acquire(user("alice")).outcome()).isEqualTo(Outcome.ALLOWED);
                assertThat(guard.acquire(user("alice")).outcome()).isEqualTo(Outcome.REJECTED);

                own.pause();
                try {
                    store.refresh(); // fails (a frozen Redis, a 50 ms timeout): the store has lost track
                    assertThat(store.limitsFor(API, "alice"))
                            .as("the last known limits")
                            .containsExactly(Limit.parse("1/1h"));
                    assertThat(guard.acquire(user("alice")).outcome()).isEqualTo(Outcome.REJECTED);
                    // A key never read: the rule's own limits, never none, and without waiting on the frozen Redis
                    // again once the refresh has failed.
                    long t0 = System.nanoTime();
                    assertThat(guard.acquire(user("bob")).outcome()).isEqualTo(Outcome.ALLOWED);
                    assertThat(System.nanoTime() - t0)
                            .isLessThan(Duration.ofMillis(500).toNanos());
                    assertThat(store.limitsFor(API, "bob")).isNull();
                } finally {
                    own.resume();
                }
                long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                while (allChanged.get() == 0 && System.nanoTime() < deadline) {
                    store.refresh(); // the first may meet a connection broken by the outage
                }
                assertThat(allChanged.get())
                        .as("every answer asked again after the outage")
                        .isEqualTo(1);
                assertThat(store.limitsFor(API, "alice")).containsExactly(Limit.parse("1/1h"));
            }
        }
    }
}
