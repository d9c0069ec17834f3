package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.StoreFailurePolicy;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * What is particular to the Redis store, against a real Redis server: round trips, scripts, key names and
 * expiry, and one limit held by several instances, under concurrency and with disagreeing clocks.
 */
class RedisBucketStoreTest {

    private static RedisServer redis;
    private static Jedis admin;

    @BeforeAll
    static void startRedis() {
        redis = RedisServer.start();
        admin = new Jedis(redis.host(), redis.port());
    }

    @AfterAll
    static void stopRedis() {
        admin.close();
        redis.close();
    }

    private static JedisBucketStore.Builder store(String prefix) {
        return JedisBucketStore.builder().url(redis.uri().toString()).keyPrefix(prefix);
    }

    private static String prefix() {
        return "t" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static RequestContext user(String name) {
        return RequestContext.builder().principal(name).build();
    }

    /**
     * Scripts run, from INFO commandstats: one per round trip, since the store sends nothing else per
     * decision. (The GET and SET a script runs are counted in commandstats too, so they are not added.)
     */
    private static long scriptCalls() {
        return redis.commandCalls("evalsha", "eval");
    }

    @Test
    void costsOneRoundTripPerDecisionIncludingAKeysFirstUse() {
        try (JedisBucketStore store = store(prefix()).build();
                RateLimiter limiter = RateLimiter.builder().store(store).build()) {
            Guard guard = limiter.guard(
                    Rule.builder("api").key("user").limits("100/1s", "1000/1m").build());
            guard.acquire(user("warm-up")); // loads the script once
            // The store's start-up look for keys of an earlier layout (a GET, a SCAN) is over.
            org.awaitility.Awaitility.await().until(() -> store.keyMigration().finished());
            long before = scriptCalls();
            long readsBefore = redis.commandCalls("get", "getrange");
            long decisionsBefore = store.stats().decisions();
            for (int i = 0; i < 500; i++) {
                assertThat(guard.acquire(user("u" + i)).outcome()).isEqualTo(Outcome.ALLOWED); // first use
            }
            for (int i = 0; i < 500; i++) {
                assertThat(guard.acquire(user("u" + i)).outcome()).isEqualTo(Outcome.ALLOWED); // second use
            }
            long calls = scriptCalls() - before;
            long decisions = store.stats().decisions() - decisionsBefore;
            assertThat(decisions).isEqualTo(1000);
            assertThat(calls).isEqualTo(1000);
            // One read per decision (the script's GETRANGE), none sent apart from the script before the write.
            assertThat(redis.commandCalls("get", "getrange") - readsBefore).isEqualTo(1000);
            assertThat(store.stats().conflicts()).isZero();
        }
    }

    @Test
    void recoversByItselfAfterScriptFlush() {
        try (JedisBucketStore store = store(prefix()).build();
                RateLimiter limiter = RateLimiter.builder().store(store).build()) {
            Guard guard = limiter.guard(Rule.builder("api").limits("3/1m").build());
            assertThat(guard.acquire(RequestContext.empty()).binding().basis()).isEqualTo(Basis.BUCKET);
            admin.scriptFlush();
            assertThat(guard.acquire(RequestContext.empty()).binding().basis()).isEqualTo(Basis.BUCKET);
            assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
            assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(store.stats().failures()).isZero();
        }
    }

    private static final List<LuaScript> LOADED_AHEAD = List.of(
            RedisSlidingState.COUNTER_RUN,
            RedisSlidingState.LOG,
            RedisSlidingState.LOG_COMBINED,
            RedisCalendarState.SCRIPT);

    private static boolean loaded(Jedis jedis, List<LuaScript> scripts) {
        String[] shas = scripts.stream()
                .map(s -> new String(s.sha(), StandardCharsets.US_ASCII))
                .toArray(String[]::new);
        return jedis.scriptExists(shas).stream().allMatch(Boolean::booleanValue);
    }

    @Test
    void loadsTheSlidingAndCalendarScriptsAtStartUpSoThatNoCallMeetsNoscript() {
        admin.scriptFlush();
        assertThat(loaded(admin, LOADED_AHEAD)).isFalse();
        try (JedisBucketStore store = store(prefix()).build();
                RateLimiter limiter = RateLimiter.builder().store(store).build()) {
            assertThat(loaded(admin, LOADED_AHEAD)).isTrue();
            long evals = redis.commandCalls("eval");
            Guard counter = limiter.guard(Rule.builder("counter")
                    .limits("5/1s")
                    .algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
                    .build());
            Guard log = limiter.guard(Rule.builder("log")
                    .limits("5/1s")
                    .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                    .build());
            assertThat(counter.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
            assertThat(log.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
            // Each first run went by EVALSHA alone: no NOSCRIPT, no EVAL with the script's text.
            assertThat(redis.commandCalls("eval") - evals).isZero();
        }
    }

    @Test
    void loadsTheScriptsOnceRedisAnswersWhenItWasDownAtStartUpAndAgainAfterItLostThem() {
        try (RedisServer late = RedisServer.start()) {
            late.kill();
            try (JedisBucketStore store = JedisBucketStore.builder()
                    .url(late.uri().toString())
                    .clockCalibrationInterval(Duration.ofMillis(100))
                    .build()) {
                late.restart();
                try (Jedis jedis = new Jedis(late.host(), late.port())) {
                    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> loaded(jedis, LOADED_AHEAD));
                    // A Redis that lost its script cache (a restart, a failover) has them again within a calibration.
                    jedis.scriptFlush();
                    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> loaded(jedis, LOADED_AHEAD));
                }
            }
        }
    }

    @Test
    void namesKeysWithOneHashTagPerBucketThatUserInputCannotBreakAndGivesEachATtl() {
        String prefix = prefix();
        try (JedisBucketStore store = store(prefix).build();
                RateLimiter limiter = RateLimiter.builder().store(store).build()) {
            Guard guard = limiter.guard(
                    Rule.builder("api").key("user").limits("5/1s", "100/1m").build());
            long start = System.nanoTime();
            guard.acquire(user("alice"));
            guard.acquire(user("}{evil}"));
            guard.acquire(user("50%"));
            List<String> keys = new ArrayList<>();
            ScanResult<String> scan =
                    admin.scan("0", new ScanParams().match(prefix + ":*:{*").count(1000));
            keys.addAll(scan.getResult());
            assertThat(keys)
                    .containsExactlyInAnyOrder(
                            prefix + ":api:{alice}", prefix + ":api:{%7D%7Bevil%7D}", prefix + ":api:{50%25}");
            for (String key : keys) {
                long ttl = admin.pttl(key);
                long elapsed = (System.nanoTime() - start) / 1_000_000 + 1;
                // One token taken: the 1m window is full again in 0.6 s; the key lives that long and a second more,
                // less what has passed since (a slow machine must not decide the test).
                assertThat(ttl).as("%d ms after the first call", elapsed).isBetween(1_600L - elapsed, 1_600L);
            }
            assertThat(new String(
                            store.redisKey(new BucketStore.Key("api", "a{b}c"), Algorithm.TOKEN_BUCKET),
                            StandardCharsets.UTF_8))
                    .isEqualTo(prefix + ":api:{a%7Bb%7Dc}");
        }
    }

    @Test
    void aKeyOutlivesTheDebtOfDelayedCalls() {
        ManualClock clock = new ManualClock();
        String prefix = prefix();
        try (JedisBucketStore store = store(prefix).timeMeter(clock).build();
                RateLimiter limiter = RateLimiter.builder()
                        .store(store)
                        .timeMeter(clock)
                        .waiter(clock)
                        .build()) {
            Guard guard = limiter.guard(Rule.builder("soft")
                    .limits("1/1s")
                    .mode(Mode.SOFT)
                    .maxDelay(Duration.ofSeconds(20))
                    .build());
            for (int i = 0; i < 10; i++) {
                guard.acquireAsync(RequestContext.empty()); // one admitted, nine reserved ahead: 9 s of debt
            }
            // Full again 10 s from now (nine owed tokens, then the one in hand): the key must last that long.
            assertThat(admin.pttl(prefix + ":soft:{*}")).isBetween(10_000L, 11_000L);
            clock.advance(Duration.ofSeconds(3));
            Decision next = guard.acquire(RequestContext.empty());
            assertThat(next.outcome()).isEqualTo(Outcome.DELAYED);
            assertThat(next.delayNanos()).isEqualTo(Duration.ofSeconds(7).toNanos());
        }
    }

    @Test
    void aCallerWhoseKeyExpiredCostsOneRoundTripWhenItComesBack() {
        ManualClock clock = new ManualClock();
        String prefix = prefix();
        try (JedisBucketStore store = store(prefix).timeMeter(clock).build();
                RateLimiter limiter =
                        RateLimiter.builder().store(store).timeMeter(clock).build()) {
            Guard guard =
                    limiter.guard(Rule.builder("api").key("user").limits("5/1s").build());
            long start = System.nanoTime();
            guard.acquire(user("alice"));
            long ttl = admin.pttl(prefix + ":api:{alice}");
            long elapsed = (System.nanoTime() - start) / 1_000_000 + 1;
            // Full again in 0.2 s, and a second more, less what has passed since.
            assertThat(ttl).as("%d ms after the call", elapsed).isBetween(1_200L - elapsed, 1_200L);
            admin.del(prefix + ":api:{alice}"); // what Redis does once the TTL has passed
            clock.advance(Duration.ofSeconds(2));
            long before = scriptCalls();
            assertThat(guard.acquire(user("alice")).permitted()).isTrue();
            assertThat(scriptCalls() - before).isEqualTo(1);
            assertThat(store.stats().conflicts()).isZero();
        }
    }

    @Test
    void sharesOneLimitAcrossInstances() {
        String prefix = prefix();
        try (JedisBucketStore a = store(prefix).build();
                JedisBucketStore b = store(prefix).build();
                RateLimiter la = RateLimiter.builder().store(a).build();
                RateLimiter lb = RateLimiter.builder().store(b).build()) {
            Rule rule = Rule.builder("login").key("user").limits("5/1m").build();
            Guard ga = la.guard(rule);
            Guard gb = lb.guard(rule);
            List<Outcome> outcomes = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                outcomes.add(ga.acquire(user("alice")).outcome());
                outcomes.add(gb.acquire(user("alice")).outcome());
            }
            assertThat(outcomes.stream().filter(o -> o == Outcome.ALLOWED).count())
                    .isEqualTo(5);
            assertThat(outcomes.subList(5, 8)).containsOnly(Outcome.REJECTED);
        }
    }

    /** Runs threads on several instances against one key for about {@code millis}; returns admitted count and elapsed. */
    private static long[] hammer(List<Guard> guards, int threadsPerGuard, long millis) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(guards.size() * threadsPerGuard);
        AtomicLong admitted = new AtomicLong();
        AtomicLong decided = new AtomicLong();
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        for (Guard guard : guards) {
            for (int t = 0; t < threadsPerGuard; t++) {
                futures.add(pool.submit(() -> {
                    start.await();
                    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
                    while (System.nanoTime() < end) {
                        decided.incrementAndGet();
                        if (guard.acquire(RequestContext.empty()).outcome() == Outcome.ALLOWED) {
                            admitted.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
        }
        long t0 = System.nanoTime();
        start.countDown();
        for (Future<?> f : futures) {
            f.get(30, TimeUnit.SECONDS);
        }
        long elapsed = System.nanoTime() - t0;
        pool.shutdownNow();
        return new long[] {admitted.get(), elapsed, decided.get()};
    }

    @Test
    void admitsNoMoreThanTheTokenBucketAllowsAcrossInstancesUnderConcurrency() throws Exception {
        String prefix = prefix();
        List<JedisBucketStore> stores = new ArrayList<>();
        List<RateLimiter> limiters = new ArrayList<>();
        try {
            List<Guard> guards = new ArrayList<>();
            Rule rule = Rule.builder("hot")
                    .limits("50/1s")
                    .onStoreFailure(StoreFailurePolicy.FAIL_CLOSED)
                    .build();
            for (int i = 0; i < 3; i++) {
                JedisBucketStore s = store(prefix).build();
                RateLimiter l = RateLimiter.builder().store(s).build();
                stores.add(s);
                limiters.add(l);
                guards.add(l.guard(rule));
            }
            long[] result = hammer(guards, 4, 1500);
            double bound = 50 + 50 * (result[1] / 1e9);
            assertThat((double) result[0])
                    .as("admitted vs bound %.1f", bound)
                    .isLessThanOrEqualTo(bound)
                    .isGreaterThanOrEqualTo(50);
            for (JedisBucketStore s : stores) {
                assertThat(s.stats().failures()).isZero();
            }
        } finally {
            limiters.forEach(RateLimiter::close);
            stores.forEach(JedisBucketStore::close);
        }
    }

    @Test
    void contentionRejectsTheCallInsteadOfApplyingTheFailurePolicy() throws Exception {
        String prefix = prefix();
        Map<Basis, AtomicLong> bases = new java.util.concurrent.ConcurrentHashMap<>();
        // Eight writers on one key, no batching, no retries: most decisions meet a conflict they may not retry.
        try (JedisBucketStore store = store(prefix)
                        .batching(false)
                        .retries(1, Duration.ofMillis(100))
                        .build();
                RateLimiter limiter = RateLimiter.builder()
                        .store(store)
                        .listener(d -> d.verdicts()
                                .forEach(v -> bases.computeIfAbsent(v.basis(), b -> new AtomicLong())
                                        .incrementAndGet()))
                        .build()) {
            // 2,000 writes before the bucket is empty (an empty bucket's rejections write nothing, so cannot
            // conflict): eight writers certainly collide on some of them. Fail-open by default.
            Guard guard = limiter.guard(Rule.builder("hot").limits("2000/1m").build());
            long[] result = hammer(List.of(guard), 8, 1000);
            double bound = 2000 + 2000 * (result[1] / 60e9);
            assertThat((double) result[0])
                    .as("admitted vs bound %.2f; bases %s", bound, bases)
                    .isLessThanOrEqualTo(bound);
            assertThat(bases).doesNotContainKey(Basis.FAIL_OPEN);
            assertThat(bases.get(Basis.CONTENTION)).as("bases %s", bases).isNotNull();
            assertThat(store.stats().contended())
                    .isEqualTo(bases.get(Basis.CONTENTION).get());
            assertThat(store.stats().failures()).isZero();
            assertThat(store.breakerState()).isEqualTo(JedisBucketStore.BreakerState.CLOSED);
        }
    }

    @Test
    void contentionInsideABatchRejectsEveryCallOfTheBatch() throws Exception {
        String prefix = prefix();
        Map<Basis, AtomicLong> bases = new java.util.concurrent.ConcurrentHashMap<>();
        RateLimiter.Listener count = d -> d.verdicts()
                .forEach(v ->
                        bases.computeIfAbsent(v.basis(), b -> new AtomicLong()).incrementAndGet());
        // Two instances, batching on (the default), no retries: each instance's batches meet the other's writes.
        try (JedisBucketStore a =
                        store(prefix).retries(1, Duration.ofMillis(100)).build();
                JedisBucketStore b =
                        store(prefix).retries(1, Duration.ofMillis(100)).build();
                RateLimiter la = RateLimiter.builder().store(a).listener(count).build();
                RateLimiter lb = RateLimiter.builder().store(b).listener(count).build()) {
            Rule rule = Rule.builder("hot").limits("20/1m").build(); // fail-open by default
            long[] result = hammer(List.of(la.guard(rule), lb.guard(rule)), 4, 1000);
            double bound = 20 + 20 * (result[1] / 60e9);
            assertThat((double) result[0])
                    .as("admitted vs bound %.2f; bases %s", bound, bases)
                    .isLessThanOrEqualTo(bound);
            assertThat(bases).as("bases").doesNotContainKey(Basis.FAIL_OPEN);
            assertThat(a.stats().contended() + b.stats().contended())
                    .as("bases %s", bases)
                    .isPositive();
        }
    }

    @Test
    void decidesLocallyFirstWithinTheDocumentedBoundAndFewRoundTrips() throws Exception {
        String prefix = prefix();
        List<JedisBucketStore> stores = new ArrayList<>();
        List<RateLimiter> limiters = new ArrayList<>();
        try {
            List<Guard> guards = new ArrayList<>();
            Rule rule = Rule.builder("global")
                    .limits("200/1s")
                    .localFirst(new io.github.ratelimit.Rule.LocalFirst(10, java.time.Duration.ofMillis(50)))
                    .build();
            for (int i = 0; i < 2; i++) {
                JedisBucketStore s = store(prefix).build();
                RateLimiter l = RateLimiter.builder().store(s).build();
                stores.add(s);
                limiters.add(l);
                guards.add(l.guard(rule));
            }
            long[] result = hammer(guards, 2, 1500);
            double bound = 200 + 200 * (result[1] / 1e9) + 2 * 10;
            assertThat((double) result[0])
                    .as("admitted vs bound %.1f", bound)
                    .isLessThanOrEqualTo(bound)
                    .isGreaterThanOrEqualTo(200);
            long roundTrips =
                    stores.stream().mapToLong(st -> st.stats().roundTrips()).sum();
            assertThat((double) roundTrips / result[2])
                    .as("round trips per decision")
                    .isLessThan(0.5);
        } finally {
            limiters.forEach(RateLimiter::close);
            stores.forEach(JedisBucketStore::close);
        }
    }

    /** The first instance drains the bucket, then both take turns. */
    private static long serially(Guard first, Guard second, long millis) {
        long admitted = 0;
        while (first.acquire(RequestContext.empty()).outcome() == Outcome.ALLOWED) {
            admitted++;
        }
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (System.nanoTime() < end) {
            for (Guard g : List.of(first, second)) {
                if (g.acquire(RequestContext.empty()).outcome() == Outcome.ALLOWED) {
                    admitted++;
                }
            }
        }
        return admitted;
    }

    @Test
    void holdsTheLimitWhenInstanceClocksDisagreeBySeconds() {
        LongSupplier behind = () -> System.currentTimeMillis() * 1_000_000L - 5_000_000_000L;
        LongSupplier ahead = () -> System.currentTimeMillis() * 1_000_000L + 5_000_000_000L;
        Rule rule = Rule.builder("skew").limits("10/1s").build();

        String prefix = prefix();
        try (JedisBucketStore slow = store(prefix).localWallClock(behind).build();
                JedisBucketStore fast = store(prefix).localWallClock(ahead).build();
                RateLimiter ls = RateLimiter.builder().store(slow).build();
                RateLimiter lf = RateLimiter.builder().store(fast).build()) {
            long t0 = System.nanoTime();
            long admitted = serially(ls.guard(rule), lf.guard(rule), 1500);
            double bound = 10 + 10 * ((System.nanoTime() - t0) / 1e9);
            assertThat((double) admitted).isLessThanOrEqualTo(bound).isGreaterThanOrEqualTo(10);
        }

        // The same instances deciding by their own clocks over-admit: the check above can fail.
        String other = prefix();
        try (JedisBucketStore slow = store(other).timeMeter(meter(behind)).build();
                JedisBucketStore fast = store(other).timeMeter(meter(ahead)).build();
                RateLimiter ls = RateLimiter.builder().store(slow).build();
                RateLimiter lf = RateLimiter.builder().store(fast).build()) {
            long t0 = System.nanoTime();
            long admitted = serially(ls.guard(rule), lf.guard(rule), 1500);
            double bound = 10 + 10 * ((System.nanoTime() - t0) / 1e9);
            assertThat((double) admitted).isGreaterThan(bound);
        }
    }

    private static TimeMeter meter(LongSupplier epochNanos) {
        return new TimeMeter() {
            @Override
            public long currentTimeNanos() {
                return epochNanos.getAsLong();
            }

            @Override
            public boolean isWallClockBased() {
                return true;
            }
        };
    }

    // ---- sliding windows: one script per decision, keys that expire, unique log members, server time ---------

    @Test
    void slidingWindowsCostOneRoundTripPerDecisionAndEveryKeyHasATtlOfTheLongestWindow() {
        ManualClock clock = new ManualClock();
        String prefix = prefix();
        try (JedisBucketStore store = store(prefix).timeMeter(clock).build();
                RateLimiter limiter = RateLimiter.builder()
                        .store(store)
                        .timeMeter(clock)
                        .waiter(clock)
                        .build()) {
            Guard log = limiter.guard(Rule.builder("log")
                    .key("user")
                    .limits("5/1s", "100/1m")
                    .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                    .build());
            Guard counter = limiter.guard(Rule.builder("counter")
                    .key("user")
                    .limits("5/1s", "100/1m")
                    .algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
                    .build());
            log.acquire(user("warm-up"));
            counter.acquire(user("warm-up"));
            long before = scriptCalls();
            for (int i = 0; i < 50; i++) {
                log.acquire(user("u" + i));
                counter.acquire(user("u" + i));
            }
            assertThat(scriptCalls() - before).isEqualTo(100);
            clock.advance(Duration.ofSeconds(20));
            log.acquire(user("u0"));
            counter.acquire(user("u0"));
            List<String> keys = admin.scan(
                            "0", new ScanParams().match(prefix + ":*:{*").count(1000))
                    .getResult();
            assertThat(keys).hasSize(102).contains(prefix + ":log:{u0}:log", prefix + ":counter:{u0}:counter");
            for (String key : keys) {
                assertThat(admin.pttl(key)).as(key).isPositive();
            }
            // The log lives until its newest call has left the longest window (plus a second); the counters
            // until their last minute has stopped counting as the previous one (two minutes from its start).
            assertThat(admin.pttl(prefix + ":log:{u1}:log")).isBetween(60_000L, 61_000L);
            assertThat(admin.pttl(prefix + ":log:{u0}:log")).isBetween(60_000L, 61_000L);
            assertThat(admin.pttl(prefix + ":counter:{u1}:counter")).isBetween(120_000L, 121_000L);
        }
    }

    @Test
    void aSoftSlidingKeyOutlivesItsReservations() {
        ManualClock clock = new ManualClock();
        String prefix = prefix();
        try (JedisBucketStore store = store(prefix).timeMeter(clock).build();
                RateLimiter limiter = RateLimiter.builder()
                        .store(store)
                        .timeMeter(clock)
                        .waiter(clock)
                        .build()) {
            Guard guard = limiter.guard(Rule.builder("soft")
                    .limits("1/1s")
                    .mode(Mode.SOFT)
                    .maxDelay(Duration.ofSeconds(20))
                    .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                    .build());
            for (int i = 0; i < 10; i++) {
                guard.acquireAsync(RequestContext.empty()); // one now, nine reserved at 1 s, 2 s, ... 9 s
            }
            assertThat(admin.zcard(prefix + ":soft:{*}:log")).isEqualTo(10);
            assertThat(admin.pttl(prefix + ":soft:{*}:log")).isBetween(10_000L, 11_000L);
            clock.advance(Duration.ofSeconds(3));
            Decision next = guard.acquire(RequestContext.empty());
            assertThat(next.outcome()).isEqualTo(Outcome.DELAYED);
            assertThat(next.delayNanos()).isEqualTo(Duration.ofSeconds(7).toNanos());
        }
    }

    @Test
    void twoCallsInTheSameInstantAreTwoLogEntriesAndACostIsOneEntry() {
        ManualClock clock = new ManualClock(); // never moves: every call at the same microsecond
        String prefix = prefix();
        try (JedisBucketStore one = store(prefix).timeMeter(clock).build();
                JedisBucketStore two = store(prefix).timeMeter(clock).build();
                RateLimiter a =
                        RateLimiter.builder().store(one).timeMeter(clock).build();
                RateLimiter b =
                        RateLimiter.builder().store(two).timeMeter(clock).build()) {
            Rule rule = Rule.builder("same")
                    .limits("10/1s")
                    .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                    .build();
            for (int i = 0; i < 3; i++) {
                assertThat(a.guard(rule).acquire(RequestContext.empty()).permitted())
                        .isTrue();
                assertThat(b.guard(rule).acquire(RequestContext.empty()).permitted())
                        .isTrue();
            }
            assertThat(admin.zcard(prefix + ":same:{*}:log")).isEqualTo(6);
            Rule costly = Rule.builder("costly")
                    .limits("10/1s")
                    .cost(4)
                    .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                    .build();
            a.guard(costly).acquire(RequestContext.empty());
            assertThat(admin.zcard(prefix + ":costly:{*}:log")).isEqualTo(1);
            assertThat(a.guard(costly)
                            .acquire(RequestContext.empty())
                            .verdicts()
                            .get(0)
                            .windows()
                            .get(0)
                            .remaining())
                    .isEqualTo(2);
        }
    }

    @Test
    void aLogWithACostCountsWithoutReadingItsEntries() {
        ManualClock clock = new ManualClock();
        try (JedisBucketStore store = store(prefix()).timeMeter(clock).build();
                RateLimiter limiter =
                        RateLimiter.builder().store(store).timeMeter(clock).build()) {
            Guard guard = limiter.guard(Rule.builder("costly")
                    .limits("20000/1h")
                    .cost(2)
                    .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                    .build());
            long rangesBefore = redis.commandCalls("zrangebyscore", "zrange");
            for (int i = 0; i < 10_001; i++) {
                guard.acquire(RequestContext.empty());
            }
            assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.REJECTED);
            // Counted by ZCOUNT and found by rank: no command walks the 10,000 entries.
            assertThat(redis.commandCalls("zrangebyscore", "zrange") - rangesBefore)
                    .isZero();
        }
    }

    @Test
    void instancesThatCountByDifferentWindowsDoNotEraseEachOthersHistory() {
        String prefix = prefix();
        for (Algorithm algorithm : List.of(Algorithm.SLIDING_WINDOW_LOG, Algorithm.SLIDING_WINDOW_COUNTER)) {
            ManualClock clock = new ManualClock(); // a whole minute: the 40 s stay in one of the counter's intervals
            try (JedisBucketStore one = store(prefix).timeMeter(clock).build();
                    JedisBucketStore two = store(prefix).timeMeter(clock).build();
                    RateLimiter longer =
                            RateLimiter.builder().store(one).timeMeter(clock).build();
                    RateLimiter shorter =
                            RateLimiter.builder().store(two).timeMeter(clock).build()) {
                // A rolling deploy: the new rule adds a minute window; the old one is still deciding too.
                Guard withMinute = longer.guard(Rule.builder("deploy-" + algorithm)
                        .limits("10/1s", "20/1m")
                        .algorithm(algorithm)
                        .build());
                Guard secondOnly = shorter.guard(Rule.builder("deploy-" + algorithm)
                        .limits("10/1s")
                        .algorithm(algorithm)
                        .build());
                long admitted = 0;
                for (int second = 0; second < 40; second++) {
                    for (int i = 0; i < 5; i++) {
                        admitted += withMinute.acquire(RequestContext.empty()).permitted() ? 1 : 0;
                        secondOnly.acquire(RequestContext.empty());
                    }
                    clock.advance(Duration.ofSeconds(1));
                }
                assertThat(admitted)
                        .as("%s: the minute window's calls over 40 s", algorithm)
                        .isLessThanOrEqualTo(20);
            }
        }
    }

    @Test
    void slidingWindowsOnServerTimeHoldTheLimitAcrossInstancesWhoseClocksDisagree() {
        LongSupplier behind = () -> System.currentTimeMillis() * 1_000_000L - 5_000_000_000L;
        LongSupplier ahead = () -> System.currentTimeMillis() * 1_000_000L + 5_000_000_000L;
        for (Algorithm algorithm : List.of(Algorithm.SLIDING_WINDOW_LOG, Algorithm.SLIDING_WINDOW_COUNTER)) {
            Rule rule =
                    Rule.builder("skew").limits("10/1m").algorithm(algorithm).build();
            String prefix = prefix();
            try (JedisBucketStore slow = store(prefix).localWallClock(behind).build();
                    JedisBucketStore fast = store(prefix).localWallClock(ahead).build();
                    RateLimiter ls = RateLimiter.builder().store(slow).build();
                    RateLimiter lf = RateLimiter.builder().store(fast).build()) {
                assertThat(serially(ls.guard(rule), lf.guard(rule), 100))
                        .as(algorithm.name())
                        .isEqualTo(10);
            }
        }
    }

    @Test
    void rejectsBadConnectionSettingsWithMessagesThatSayHowToFixThem() {
        assertThatThrownBy(() -> JedisBucketStore.builder().build())
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage("redis store: no connection targets given. Give exactly one: a url (redis://host:6379), "
                        + "sentinel master and nodes, cluster nodes, or an existing Jedis client.");
        assertThatThrownBy(() -> JedisBucketStore.builder()
                        .url("http://user:secret@host:1")
                        .build())
                .hasMessage(
                        "redis url 'http://***@host:1' is invalid. Use redis://[user:password@]host:port[/database], "
                                + "or rediss:// for TLS.");
        assertThatThrownBy(() -> JedisBucketStore.builder().cluster(List.of("node-1")))
                .hasMessage("redis cluster node 'node-1' is not host:port. Write it like 'redis-1:6379'.");
        assertThatThrownBy(() -> JedisBucketStore.builder().keyPrefix("a{b"))
                .hasMessage("redis key prefix 'a{b' is invalid. Use non-empty text without braces, e.g. 'ratelimit'.");
        assertThatThrownBy(() -> JedisBucketStore.builder().commandTimeout(java.time.Duration.ZERO))
                .hasMessage("redis store: commandTimeout must be positive, but was PT0S. Use e.g. 50ms.");
    }

    @Test
    void usesAClientTheApplicationAlreadyHasWithoutClosingIt() {
        try (RedisClient client = RedisClient.create(redis.host(), redis.port())) {
            try (JedisBucketStore store = JedisBucketStore.builder()
                            .client(client)
                            .keyPrefix(prefix())
                            .build();
                    RateLimiter limiter = RateLimiter.builder().store(store).build()) {
                Decision d = limiter.guard(Rule.builder("api").limits("1/1m").build())
                        .acquire(RequestContext.empty());
                assertThat(d.binding().basis()).isEqualTo(Basis.BUCKET);
            }
            assertThat(client.ping()).isEqualTo("PONG");
        }
    }

    @Test
    void continuesABucketStoredInBucket4jsFormatAndRewritesItCompactly() {
        String prefix = prefix();
        Rule rule = Rule.builder("api").key("user").limits("5/1m").build();
        try (JedisBucketStore store = store(prefix).build();
                RateLimiter limiter = RateLimiter.builder().store(store).build()) {
            assertThat(limiter.guard(rule).acquire(user("alice")).outcome()).isEqualTo(Outcome.ALLOWED);
        }
        byte[] key = admin.keys((prefix + ":*:{*").getBytes(StandardCharsets.UTF_8))
                .iterator()
                .next();
        byte[] compact = admin.get(key);
        assertThat(compact[0]).isEqualTo(CompactState.FORMAT);
        // What a version before the compact format wrote: Bucket4j's own bytes, here with 4 of 5 permits spent.
        io.github.bucket4j.distributed.remote.RemoteBucketState state = CompactState.decode(compact);
        state.consume(3);
        byte[] old = io.github.bucket4j.distributed.serialization.InternalSerializationHelper.serializeState(
                state, io.github.bucket4j.distributed.versioning.Versions.getLatest());
        assertThat(old[0]).isNotEqualTo(CompactState.FORMAT);
        admin.psetex(key, 60_000, old);
        try (JedisBucketStore store = store(prefix).build();
                RateLimiter limiter = RateLimiter.builder().store(store).build()) {
            assertThat(limiter.guard(rule).acquire(user("alice")).outcome()).isEqualTo(Outcome.ALLOWED);
            assertThat(limiter.guard(rule).acquire(user("alice")).outcome()).isEqualTo(Outcome.REJECTED);
        }
        assertThat(admin.get(key)[0]).isEqualTo(CompactState.FORMAT);
        assertThat(admin.get(key).length).isLessThan(old.length);
    }

    @Test
    void reportsItsCounters() {
        try (JedisBucketStore store = store(prefix()).build();
                RateLimiter limiter = RateLimiter.builder().store(store).build()) {
            limiter.guard(Rule.builder("api").limits("1/1m").build()).acquire(RequestContext.empty());
            JedisBucketStore.Stats stats = store.stats();
            assertThat(stats.decisions()).isEqualTo(1);
            assertThat(stats.roundTrips()).isEqualTo(1);
            assertThat(stats.breaker()).isEqualTo(JedisBucketStore.BreakerState.CLOSED);
            assertThat(Map.of("x", store.toString())).isNotEmpty();
        }
    }
}
