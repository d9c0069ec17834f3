package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.testing.redis.RedisServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.RedisClient;

/**
 * Calendar quotas on Redis's own clock: windows computed from a clock that is off (the store not yet calibrated,
 * its stand-in clock 40 days ahead) are corrected by the script's time, in one more round trip; and what the hash
 * holds is validated, garbage replaced, not obeyed.
 */
class RedisCalendarTest {

    private RedisServer redis;
    private JedisBucketStore store;
    private RateLimiter limiter;
    private final String prefix = "calendar-" + UUID.randomUUID();

    @BeforeEach
    void start() {
        redis = RedisServer.start();
    }

    @AfterEach
    void stop() {
        if (limiter != null) {
            limiter.close();
        }
        if (store != null) {
            store.close();
        }
        redis.close();
    }

    private static final RequestContext ALICE =
            RequestContext.builder().principal("alice").build();

    private Guard monthly(JedisBucketStore s) {
        store = s;
        limiter = RateLimiter.builder().store(s).build();
        return limiter.guard(Rule.builder("quota")
                .key("user")
                .limits("3/1mo")
                .algorithm(Algorithm.FIXED_WINDOW)
                .build());
    }

    @Test
    void windowsFromAClockThatIsOffAreCorrectedByTheServersTime() {
        long skew = Duration.ofDays(40).toNanos();
        // Redis frozen while the store starts: it cannot calibrate, and stands in its own clock, 40 days ahead.
        redis.pause();
        JedisBucketStore s;
        try {
            s = JedisBucketStore.builder()
                    .url(redis.uri().toString())
                    .keyPrefix(prefix)
                    .commandTimeout(Duration.ofMillis(200))
                    .clockCalibrationInterval(Duration.ofHours(1))
                    .localWallClock(() -> System.currentTimeMillis() * 1_000_000L + skew)
                    .build();
        } finally {
            redis.resume();
        }
        Guard guard = monthly(s);
        assertThat(guard.acquire(RequestContext.builder().principal("bob").build())
                        .permitted())
                .as("the first call also loads the script")
                .isTrue();
        long before = redis.commandCalls("evalsha", "eval");
        Decision first = guard.acquire(ALICE);
        assertThat(first.permitted()).isTrue();
        assertThat(redis.commandCalls("evalsha", "eval") - before)
                .as("one more round trip, at the server's time")
                .isEqualTo(2);
        YearMonth month = YearMonth.now(ZoneOffset.UTC);
        assertThat(first.verdicts().get(0).windows().get(0).period())
                .as("this month on Redis's clock")
                .isEqualTo(Duration.ofDays(month.lengthOfMonth()));
        Decision second = guard.acquire(ALICE);
        guard.refund(second);
        assertThat(guard.acquire(ALICE).permitted())
                .as("a refund lands in the right window too")
                .isTrue();
        guard.acquire(ALICE);
        Decision rejected = guard.acquire(ALICE);
        assertThat(rejected.outcome()).isEqualTo(Decision.Outcome.REJECTED);
        long untilNextMonth = Duration.between(
                        Instant.now(),
                        month.plusMonths(1).atDay(1).atStartOfDay().toInstant(ZoneOffset.UTC))
                .toNanos();
        assertThat(rejected.retryAfterNanos())
                .as("to the 1st of next month, not of the month after")
                .isBetween(
                        untilNextMonth - Duration.ofMinutes(1).toNanos(),
                        untilNextMonth + Duration.ofMinutes(1).toNanos());
    }

    @Test
    void garbageInTheHashIsReplacedNotObeyed() {
        Guard guard = monthlyOnTheServersClock();
        assertThat(keyOf("alice")).endsWith("}:calendar");
        long start = monthStartMicros();
        List<Map<String, String>> garbage = List.of(
                Map.of("1mo|" + start, "99999999999999999999"), // a count too long to be one
                Map.of("1mo|" + start, "-5"), // a negative count
                Map.of("1mo|" + start, "3e0"), // not an integer
                Map.of("1mo|" + start, "99999999999999999"), // more than any limit and its debt make
                Map.of("1mo|abc", "1", "nonsense", "2"), // fields no rule writes
                Map.of("1mo|" + (start + 400L * 86_400_000_000L), "3")); // a window beyond the next
        // A user per case: a rejected key is answered from memory afterwards (RejectionMemo), not from Redis.
        int user = 0;
        try (RedisClient jedis =
                RedisClient.builder().hostAndPort(redis.hostAndPort()).build()) {
            for (Map<String, String> fields : garbage) {
                String name = "user-" + user++;
                String k = keyOf(name);
                jedis.hset(k, fields);
                assertThat(exhaust(guard, name)).as("after %s", fields).isEqualTo(3);
                assertThat(jedis.hlen(k)).as("only this window's count is left").isEqualTo(1);
                assertThat(jedis.pttl(k)).isPositive();
            }
            String name = "user-" + user++;
            jedis.set(keyOf(name), "a string");
            assertThat(exhaust(guard, name)).as("a key of another type").isEqualTo(3);
            name = "user-" + user;
            String k = keyOf(name);
            for (int i = 0; i < 1000; i++) {
                jedis.hset(k, "1mo|" + (start - i), "1");
            }
            assertThat(exhaust(guard, name))
                    .as("a hash larger than any rule makes")
                    .isEqualTo(3);
            assertThat(jedis.hlen(k)).isEqualTo(1);
        }
        assertThat(store.stats().repairs()).isPositive();
    }

    /** A count far above 3/1mo (a debt, or usage kept when the limit was lowered): owed until the month ends, not garbage. */
    @Test
    void aDebtIsOwedNotTakenForGarbage() {
        Guard guard = monthlyOnTheServersClock();
        String field = "1mo|" + monthStartMicros();
        try (RedisClient jedis =
                RedisClient.builder().hostAndPort(redis.hostAndPort()).build()) {
            String k = keyOf("alice");
            jedis.hset(k, field, "500000");
            jedis.pexpire(k, Duration.ofDays(32).toMillis());
            assertThat(exhaust(guard, "alice")).isZero();
            assertThat(jedis.hget(k, field)).isEqualTo("500000");
        }
        assertThat(store.stats().repairs()).isZero();
    }

    /** The monthly rule on a store that reads the server's time. */
    private Guard monthlyOnTheServersClock() {
        return monthly(JedisBucketStore.builder()
                .url(redis.uri().toString())
                .keyPrefix(prefix)
                .commandTimeout(Duration.ofSeconds(2))
                .build());
    }

    /** @return the start of this month in UTC, in microseconds, as the script's fields name it */
    private static long monthStartMicros() {
        return YearMonth.now(ZoneOffset.UTC).atDay(1).atStartOfDay().toEpochSecond(ZoneOffset.UTC) * 1_000_000L;
    }

    private String keyOf(String user) {
        return new String(RedisKeys.calendarKey(prefix, new BucketStore.Key("quota", user)), StandardCharsets.UTF_8);
    }

    private long exhaust(Guard guard, String user) {
        RequestContext call = RequestContext.builder().principal(user).build();
        long n = 0;
        while (guard.acquire(call).permitted()) {
            n++;
            if (n > 100) {
                throw new AssertionError("never rejected");
            }
        }
        return n;
    }
}
