package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.bucket4j.BandwidthBuilder;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.BucketState;
import io.github.bucket4j.MathType;
import io.github.bucket4j.distributed.remote.RemoteBucketState;
import io.github.bucket4j.distributed.remote.RemoteStat;
import io.github.bucket4j.distributed.versioning.Versions;
import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.Jedis;

/**
 * What Redis holds is validated, never obeyed (docs/RELIABILITY.md, "Stored state that heals"): for every
 * algorithm, a key of the wrong type, entries no rule writes, calls dated far ahead and keys without an expiry are
 * replaced with fresh state by the next decision, which decides as on an empty key, counts a repair and leaves the
 * key of the right type with an expiry. None of these decisions fails open. Time is a manual clock, so the
 * planted state's times are exact.
 */
class RedisGarbageStateTest {

    private static RedisServer redis;
    private static Jedis admin;

    private final ManualClock clock = new ManualClock();
    private JedisBucketStore store;
    private RateLimiter limiter;

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

    @BeforeEach
    void connect() {
        store = JedisBucketStore.builder()
                .url(redis.uri().toString())
                .keyPrefix("g" + UUID.randomUUID().toString().substring(0, 8))
                .timeMeter(clock)
                // What is tested is what each decision does, not how fast: a loaded machine must not fail it open.
                .commandTimeout(Duration.ofSeconds(1))
                .build();
        limiter = RateLimiter.builder()
                .store(store)
                .timeMeter(clock)
                .waiter(clock)
                .build();
    }

    @AfterEach
    void close() {
        limiter.close();
    }

    private static Rule twoPerHour(Algorithm algorithm) {
        return Rule.builder("api").limits("2/1h").algorithm(algorithm).build();
    }

    /** The Redis key of the rule's global key under an algorithm. */
    private String key(Algorithm algorithm) {
        return new String(store.redisKey(new BucketStore.Key("api", "*"), algorithm), StandardCharsets.UTF_8);
    }

    private long nowMicros() {
        return clock.currentTimeNanos() / 1_000;
    }

    /** Three calls on a 2/h rule: two allowed, one rejected, all by the bucket; the key healed. */
    private void decidesAsOnAnEmptyKeyAndHeals(Algorithm algorithm, String expectedType) {
        Guard guard = limiter.guard(twoPerHour(algorithm));
        List<Outcome> outcomes = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Decision d = guard.acquire(RequestContext.empty());
            assertThat(d.verdicts()).allSatisfy(v -> assertThat(v.basis()).isEqualTo(Basis.BUCKET));
            outcomes.add(d.outcome());
        }
        assertThat(outcomes).containsExactly(Outcome.ALLOWED, Outcome.ALLOWED, Outcome.REJECTED);
        assertThat(admin.type(key(algorithm))).isEqualTo(expectedType);
        assertThat(admin.pttl(key(algorithm))).as("the key's expiry").isPositive();
        assertThat(store.stats().repairs()).as("repairs counted").isPositive();
        assertThat(store.stats().failures()).isZero();
    }

    private static String typeOf(Algorithm algorithm) {
        return switch (algorithm) {
            case SLIDING_WINDOW_LOG -> "zset";
            case SLIDING_WINDOW_COUNTER -> "hash";
            default -> "string";
        };
    }

    static Stream<Arguments> wrongTypes() {
        List<Arguments> cases = new ArrayList<>();
        for (Algorithm algorithm : Algorithm.values()) {
            if (algorithm == Algorithm.LEAKY_BUCKET) {
                continue; // the token bucket's state and script, with a capacity of one
            }
            for (String planted : List.of("string", "list", "hash", "zset", "set")) {
                if (!planted.equals(typeOf(algorithm))) {
                    cases.add(Arguments.of(algorithm, planted));
                }
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} over a {1}")
    @MethodSource("wrongTypes")
    void aKeyOfAnotherTypeIsReplacedNotObeyed(Algorithm algorithm, String planted) {
        String key = key(algorithm);
        switch (planted) {
            case "string" -> admin.set(key, "garbage");
            case "list" -> admin.rpush(key, "a", "b");
            case "hash" -> admin.hset(key, "a", "b");
            case "zset" -> admin.zadd(key, 1, "a");
            default -> admin.sadd(key, "a");
        }
        decidesAsOnAnEmptyKeyAndHeals(algorithm, typeOf(algorithm));
    }

    @Test
    void aLogTrimmedToNothingIsMadeAgainWithAnExpiry() {
        // Calls dated at -inf, under a ten-hour expiry: every one is trimmed, so the log is deleted, and the call made
        // it again; the expiry it found (longer than the log needs) is gone with it, so the log gets one of its own.
        String key = key(Algorithm.SLIDING_WINDOW_LOG);
        admin.zadd(key, Double.NEGATIVE_INFINITY, "a");
        admin.zadd(key, Double.NEGATIVE_INFINITY, "b");
        admin.pexpire(key, Duration.ofHours(10).toMillis());
        Guard guard = limiter.guard(twoPerHour(Algorithm.SLIDING_WINDOW_LOG));
        assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
        assertThat(admin.zcard(key)).as("only the call just made").isEqualTo(1);
        assertThat(admin.pttl(key)).as("the key's expiry").isPositive();
        assertThat(store.stats().repairs()).as("repairs counted").isPositive();
    }

    @ParameterizedTest
    @ValueSource(strings = {"TOKEN_BUCKET", "FIXED_WINDOW"})
    void aBucketValueThatIsNotAStateOrIsOversizedIsReplaced(Algorithm algorithm) {
        admin.set(key(algorithm), "hello");
        decidesAsOnAnEmptyKeyAndHeals(algorithm, "string");
        admin.set(key(algorithm), "x".repeat(CasScript.MAX_STATE_BYTES + 1));
        // The key was just rejected: the store answers it from memory for up to a second before it asks Redis again.
        clock.advance(Duration.ofNanos(RejectionMemo.RECHECK_NANOS));
        long before = store.stats().repairs();
        Guard guard = limiter.guard(twoPerHour(algorithm));
        assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
        assertThat(admin.strlen(key(algorithm))).isLessThan(CasScript.MAX_STATE_BYTES);
        assertThat(store.stats().repairs()).isGreaterThan(before);
    }

    /** A state that decodes, for the rule 2/1h, with one thing wrong, stored without an expiry. */
    private void plantBucket(
            BucketConfiguration configuration,
            long version,
            java.util.function.Consumer<BucketState> edit,
            long refillTimeNanos) {
        BucketState state = BucketState.createInitialState(configuration, MathType.INTEGER_64_BITS, refillTimeNanos);
        edit.accept(state);
        RemoteBucketState remote = new RemoteBucketState(state, new RemoteStat(0), version);
        admin.set(
                key(Algorithm.TOKEN_BUCKET).getBytes(StandardCharsets.UTF_8),
                CompactState.encode(remote, Versions.getLatest()));
    }

    private static BucketConfiguration perHour(long permits) {
        return BucketConfiguration.builder()
                .addLimit(BandwidthBuilder.builder()
                        .capacity(permits)
                        .refillGreedy(permits, Duration.ofHours(1))
                        .build())
                .build();
    }

    @Test
    void aBucketHoldingMoreTokensThanItsCapacityIsReplaced() {
        long now = clock.currentTimeNanos();
        plantBucket(perHour(2), now / 1_000_000, s -> s.forceAddTokens(1_000), now);
        decidesAsOnAnEmptyKeyAndHeals(Algorithm.TOKEN_BUCKET, "string");
    }

    @Test
    void aConfigurationVersionFarAheadIsNotObeyed() {
        // 1000/h "from the future": every instance would keep it over its own 2/h for ten years.
        long now = clock.currentTimeNanos();
        plantBucket(perHour(1_000), now / 1_000_000 + Duration.ofDays(3650).toMillis(), s -> {}, now);
        decidesAsOnAnEmptyKeyAndHeals(Algorithm.TOKEN_BUCKET, "string");
    }

    @Test
    void aRefillTimeFarAheadDoesNotFreezeTheBucket() {
        // Emptied, with its last refill dated 60 years on: Bucket4j would not refill it until then.
        long now = clock.currentTimeNanos();
        plantBucket(
                perHour(2),
                now / 1_000_000,
                s -> s.consume(2),
                now + Duration.ofDays(365L * 60).toNanos());
        decidesAsOnAnEmptyKeyAndHeals(Algorithm.TOKEN_BUCKET, "string");
    }

    @Test
    void aFullBucketWhoseRefillIsDatedAheadIsReplaced() {
        // Full, but Bucket4j would not refill it until 2086: it would serve its capacity, then stay empty.
        long now = clock.currentTimeNanos();
        plantBucket(
                perHour(2),
                now / 1_000_000,
                s -> {},
                now + Duration.ofDays(365L * 60).toNanos());
        decidesAsOnAnEmptyKeyAndHeals(Algorithm.TOKEN_BUCKET, "string");
    }

    @Test
    void aDeepDebtIsHonouredNotTakenForGarbage() {
        // Four instances deciding locally first may each spend the whole 10/1d before they synchronise: -30 tokens,
        // three days until full. It is owed, not garbage.
        long now = clock.currentTimeNanos();
        BucketConfiguration tenPerDay = BucketConfiguration.builder()
                .addLimit(BandwidthBuilder.builder()
                        .capacity(10)
                        .refillGreedy(10, Duration.ofDays(1))
                        .build())
                .build();
        plantBucket(tenPerDay, now / 1_000_000, s -> s.consume(40), now);
        admin.pexpire(key(Algorithm.TOKEN_BUCKET), Duration.ofDays(4).toMillis()); // as the instances would set it
        Guard guard = limiter.guard(Rule.builder("api").limits("10/1d").build());
        Decision d = guard.acquire(RequestContext.empty());
        assertThat(d.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(d.verdicts())
                .extracting(io.github.ratelimit.Decision.Verdict::basis)
                .containsExactly(Basis.BUCKET);
        assertThat(store.stats().repairs()).isZero();
    }

    @Test
    void aDebtDeeperThanAnyRuleMakesIsReplacedNotObeyed() {
        // 2/1h owing 10^15 tokens: obeyed, the key would be refused for 57 billion years.
        long now = clock.currentTimeNanos();
        plantBucket(perHour(2), now / 1_000_000, s -> s.consume(1_000_000_000_000_000L), now);
        decidesAsOnAnEmptyKeyAndHeals(Algorithm.TOKEN_BUCKET, "string");
    }

    @Test
    void versionsDoNotRunAheadOfTheClockHoweverManyKeysAreMade() {
        // Time stands still while 3,000 keys are made: every bucket's version is the clock's millisecond, so no
        // other instance ever takes a busy instance's buckets for garbage from the future.
        Guard guard =
                limiter.guard(Rule.builder("api").key("user").limits("2/1h").build());
        for (int i = 0; i < 3_000; i++) {
            guard.acquire(RequestContext.builder().principal("u" + i).build());
        }
        byte[] last = admin.get(store.redisKey(new BucketStore.Key("api", "u2999"), Algorithm.TOKEN_BUCKET));
        assertThat(CompactState.decode(last).getConfigurationVersion()).isEqualTo(clock.currentTimeNanos() / 1_000_000);
    }

    @Test
    void aBucketWithoutExpiryGetsOneEvenFromADecisionThatChangesNothing() {
        Guard guard = limiter.guard(Rule.builder("api").limits("1/1h").build());
        assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
        admin.persist(key(Algorithm.TOKEN_BUCKET));
        // Time stands still: the rejection changes no state, so the script only confirms it.
        assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(admin.pttl(key(Algorithm.TOKEN_BUCKET))).isPositive();
        assertThat(store.stats().repairs()).isEqualTo(1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc", "-5", "0", "1e3", "1.5", "99999999999999999999", ""})
    void counterEntriesThatAreNotCountsAreReplaced(String value) {
        long interval = nowMicros() / 3_600_000_000L;
        admin.hset(key(Algorithm.SLIDING_WINDOW_COUNTER), "3600000000:" + interval, value);
        decidesAsOnAnEmptyKeyAndHeals(Algorithm.SLIDING_WINDOW_COUNTER, "hash");
        assertThat(admin.hget(key(Algorithm.SLIDING_WINDOW_COUNTER), "3600000000:" + interval))
                .isEqualTo("2");
    }

    @ParameterizedTest
    @ValueSource(strings = {"garbage", "3600000000:0%d", "3600000000:+%d", "3600000000:99999999999999"})
    void counterEntriesNoRuleWritesAreReplaced(String field) {
        long interval = nowMicros() / 3_600_000_000L;
        admin.hset(key(Algorithm.SLIDING_WINDOW_COUNTER), field.formatted(interval), "1");
        decidesAsOnAnEmptyKeyAndHeals(Algorithm.SLIDING_WINDOW_COUNTER, "hash");
        assertThat(admin.hkeys(key(Algorithm.SLIDING_WINDOW_COUNTER))).containsExactly("3600000000:" + interval);
    }

    /**
     * A count far above the rule's limit (a charge's debt, or usage kept when a limit was lowered at run time: 500,000
     * on 2/1h) is owed and not repaired; only a count more than any limit and its debt make is garbage.
     */
    @Test
    void aCounterDebtIsOwedNotTakenForGarbage() {
        long interval = nowMicros() / 3_600_000_000L;
        String key = key(Algorithm.SLIDING_WINDOW_COUNTER);
        admin.hset(key, "3600000000:" + interval, "500000");
        admin.pexpire(key, Duration.ofHours(3).toMillis()); // as the instances would set it
        Decision d = limiter.guard(twoPerHour(Algorithm.SLIDING_WINDOW_COUNTER)).acquire(RequestContext.empty());
        assertThat(d.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(d.verdicts()).extracting(Decision.Verdict::basis).containsExactly(Basis.BUCKET);
        assertThat(admin.hget(key, "3600000000:" + interval)).isEqualTo("500000");
        assertThat(store.stats().repairs()).isZero();
    }

    @Test
    void aCounterDebtBeyondWhatAnyChargeMakesIsReplacedNotObeyed() {
        long interval = nowMicros() / 3_600_000_000L;
        admin.hset(key(Algorithm.SLIDING_WINDOW_COUNTER), "3600000000:" + interval, "99999999999999999");
        decidesAsOnAnEmptyKeyAndHeals(Algorithm.SLIDING_WINDOW_COUNTER, "hash");
        assertThat(admin.hget(key(Algorithm.SLIDING_WINDOW_COUNTER), "3600000000:" + interval))
                .isEqualTo("2");
    }

    /**
     * A large limit's debt runs past 13 digits (10^12/1000s owes up to 86 x 10^12, a day of refill): it is owed, not
     * taken for a count no limit makes.
     */
    @Test
    void aLargeLimitsDebtOfFourteenDigitsIsOwed() {
        long interval = nowMicros() / 1_000_000_000L;
        String key = key(Algorithm.SLIDING_WINDOW_COUNTER);
        admin.hset(key, "1000000000:" + interval, "87000000000000");
        admin.pexpire(key, Duration.ofHours(1).toMillis());
        Decision d = limiter.guard(Rule.builder("api")
                        .limits("1000000000000/1000s")
                        .algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
                        .build())
                .acquire(RequestContext.empty());
        assertThat(d.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(admin.hget(key, "1000000000:" + interval)).isEqualTo("87000000000000");
        assertThat(store.stats().repairs()).isZero();
    }

    @Test
    void aFarFutureCounterEntryCostsOneBoundedCall() {
        // The field: before, one call looped ~1e14 times and Redis answered BUSY to everyone.
        Guard guard = limiter.guard(Rule.builder("api")
                .limits("2/1m")
                .algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
                .build());
        admin.hset(key(Algorithm.SLIDING_WINDOW_COUNTER), "60000000:99999999999999", "1");
        assertThat(guard.acquire(RequestContext.empty()).verdicts()).allSatisfy(v -> {
            assertThat(v.basis()).isEqualTo(Basis.BUCKET);
            assertThat(v.outcome()).isEqualTo(Outcome.ALLOWED);
        });
        assertThat(admin.hkeys(key(Algorithm.SLIDING_WINDOW_COUNTER))).doesNotContain("60000000:99999999999999");
        assertThat(store.stats().repairs()).isEqualTo(1);
    }

    @Test
    void aCounterHashLargerThanAnyRuleMakesIsReplacedWhole() {
        String key = key(Algorithm.SLIDING_WINDOW_COUNTER);
        long interval = nowMicros() / 3_600_000_000L;
        java.util.Map<String, String> fields = new java.util.HashMap<>();
        long ms = nowMicros() / 1_000;
        for (int i = 0; i <= SlidingScripts.COUNTER_HARD_FIELDS; i++) {
            fields.put("1000:" + (ms + i), "1"); // another window's counts: kept while plausible, but not this many
        }
        fields.put("3600000000:" + interval, "2"); // would reject every call if obeyed
        admin.hset(key, fields);
        decidesAsOnAnEmptyKeyAndHeals(Algorithm.SLIDING_WINDOW_COUNTER, "hash");
        assertThat(admin.hlen(key)).isEqualTo(1);
    }

    @Test
    void anotherInstancesCountsAreKeptWhileTheyCountAndDroppedOnceTheyNoLonger() {
        String key = key(Algorithm.SLIDING_WINDOW_COUNTER);
        long ms = nowMicros() / 1_000;
        java.util.Map<String, String> fields = new java.util.HashMap<>();
        // Another instance's eight windows with delayed calls (a rolling deploy): as many entries as they may hold.
        for (int w = 1; w <= io.github.ratelimit.Rule.MAX_LIMITS; w++) {
            for (int i = 0;
                    i < io.github.ratelimit.Rule.MAX_COUNTER_DELAY_INTERVALS / io.github.ratelimit.Rule.MAX_LIMITS + 3;
                    i++) {
                fields.put((1000 * w) + ":" + (ms / w + i), "1");
            }
        }
        fields.put("7000000:" + (nowMicros() / 7_000_000 - 5), "3"); // a window's count that no longer counts
        admin.hset(key, fields);
        Guard guard = limiter.guard(twoPerHour(Algorithm.SLIDING_WINDOW_COUNTER));
        assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
        assertThat(admin.hkeys(key))
                .hasSize(fields.size() - 1 + 1)
                .doesNotContain("7000000:" + (nowMicros() / 7_000_000 - 5));
        assertThat(store.stats().repairs()).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"1e18", "+inf"})
    void logCallsDatedBeyondAnyDelayAreForgotten(String score) {
        String key = key(Algorithm.SLIDING_WINDOW_LOG);
        admin.zadd(key, score.equals("+inf") ? Double.POSITIVE_INFINITY : 1e18, "planted-1");
        admin.zadd(key, score.equals("+inf") ? Double.POSITIVE_INFINITY : 1e18 + 1e6, "planted-2");
        decidesAsOnAnEmptyKeyAndHeals(Algorithm.SLIDING_WINDOW_LOG, "zset");
        assertThat(admin.zrange(key, 0, -1)).doesNotContain("planted-1", "planted-2");
    }

    /** Plants {@code count} log entries scored by their index; returns the log's key. */
    private String plantLog(int count, java.util.function.IntToDoubleFunction score) {
        String key = key(Algorithm.SLIDING_WINDOW_LOG);
        java.util.Map<String, Double> members = new java.util.HashMap<>();
        for (int i = 0; i < count; i++) {
            members.put("m" + i, score.applyAsDouble(i));
        }
        admin.zadd(key, members);
        return key;
    }

    @Test
    void logGarbageBeyondWhatOneCallTrimsIsNotCountedMeanwhile() {
        String key = plantLog(3 * SlidingScripts.LOG_TRIM_PER_CALL, i -> 1e18 + i);
        // Each call removes at most LOG_TRIM_PER_CALL of them; the rest do not count against the client.
        decidesAsOnAnEmptyKeyAndHeals(Algorithm.SLIDING_WINDOW_LOG, "zset");
        assertThat(admin.zcard(key)).isEqualTo(2);
    }

    @Test
    void aLogHoldingMoreCallsThanAnyWindowCountsLosesTheOldestNotEverything() {
        // 10,150 calls in the last minutes (kept, say, for another instance's longer window before its limits
        // changed): more than any rule's window holds, so the oldest go, at most 100 a call; the rest stay.
        long now = nowMicros();
        String key = plantLog((int) io.github.ratelimit.Rule.MAX_LOG_CALLS + 150, i -> now - 100L * (i + 1));
        admin.pexpire(key, Duration.ofHours(1).toMillis()); // as the instances would have set it
        Guard guard = limiter.guard(Rule.builder("api")
                .limits("10000/1h")
                .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                .build());
        assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(admin.zcard(key)).isEqualTo(io.github.ratelimit.Rule.MAX_LOG_CALLS + 50);
        assertThat(admin.zrange(key, 0, 0)).containsExactly("m10049"); // the oldest 100 went
        assertThat(store.stats().repairs()).isZero();
    }

    @Test
    void aLogLargerThanAnyRuleKeepsIsReplacedWhole() {
        // All "now": they would reject every call if obeyed.
        String key = plantLog((int) SlidingScripts.LOG_HARD_CALLS + 1, i -> nowMicros());
        decidesAsOnAnEmptyKeyAndHeals(Algorithm.SLIDING_WINDOW_LOG, "zset");
        assertThat(admin.zcard(key)).isEqualTo(2);
    }

    @ParameterizedTest
    @ValueSource(strings = {"SLIDING_WINDOW_LOG", "SLIDING_WINDOW_COUNTER"})
    void aRejectionGivesASlidingKeyWithoutExpiryOne(Algorithm algorithm) {
        Guard guard = limiter.guard(twoPerHour(algorithm));
        assertThat(Arrays.asList(
                        guard.acquire(RequestContext.empty()).outcome(),
                        guard.acquire(RequestContext.empty()).outcome()))
                .containsOnly(Outcome.ALLOWED);
        admin.persist(key(algorithm));
        assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(admin.pttl(key(algorithm))).isPositive();
        assertThat(store.stats().repairs()).isEqualTo(1);
    }
}
