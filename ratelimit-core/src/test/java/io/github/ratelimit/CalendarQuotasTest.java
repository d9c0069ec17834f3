package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.store.LocalBucketStore;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Calendar quotas ({@code 1000/1mo@Europe/Berlin}): windows aligned to the calendar in a zone, from the store's
 * clock, across daylight-saving changes (a 23-hour and a 25-hour day); on a manual clock, on the local store and on a
 * real Redis (whose scripts then take the manual clock's time).
 */
class CalendarQuotasTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");
    private final List<RateLimiter> limiters = new ArrayList<>();
    private ManualClock clock;

    @AfterEach
    void close() {
        limiters.forEach(RateLimiter::close);
    }

    /** A limiter on {@code store} whose clock starts at {@code localTime} in Berlin, with per-key limits or none. */
    private RateLimiter limiter(String store, String localTime, LimitProvider provider) {
        clock = new ManualClock(
                java.time.LocalDateTime.parse(localTime).atZone(BERLIN).toInstant());
        RateLimiter.Builder b = RateLimiter.builder()
                .timeMeter(clock)
                .waiter(clock)
                .store(
                        "redis".equals(store)
                                ? JedisBucketStore.builder()
                                        .url(redis.uri())
                                        .keyPrefix("cal-" + UUID.randomUUID())
                                        .commandTimeout(Duration.ofSeconds(5))
                                        .timeMeter(clock)
                                        .build()
                                : LocalBucketStore.builder().timeMeter(clock).build());
        if (provider != null) {
            b.limitProvider(provider, Duration.ofMinutes(1));
        }
        RateLimiter limiter = b.build();
        limiters.add(limiter);
        return limiter;
    }

    private Guard guard(String store, String localTime, String... limits) {
        return limiter(store, localTime, null)
                .guard(Rule.builder("quota")
                        .key("user")
                        .limits(limits)
                        .algorithm(Algorithm.FIXED_WINDOW)
                        .build());
    }

    private static final RequestContext ALICE =
            RequestContext.builder().principal("alice").build();

    private static long exhaust(Guard guard) {
        long n = 0;
        while (guard.acquire(ALICE).permitted()) {
            n++;
        }
        return n;
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aMonthlyQuotaOpensAtLocalMidnightOnTheFirst(String store) {
        Guard guard = guard(store, "2026-01-31T23:59:00", "3/1mo@Europe/Berlin");
        assertThat(exhaust(guard)).isEqualTo(3);
        Decision rejected = guard.acquire(ALICE);
        assertThat(rejected.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(rejected.retryAfterNanos())
                .as("until 1 February 00:00 in Berlin")
                .isEqualTo(60_000_000_000L);
        Decision.Window window = rejected.verdicts().get(0).windows().get(0);
        assertThat(window.name()).isEqualTo("1mo@Europe/Berlin");
        assertThat(window.period()).as("January").isEqualTo(Duration.ofDays(31));
        assertThat(window.resetNanos()).isEqualTo(60_000_000_000L);
        clock.advance(Duration.ofSeconds(59));
        assertThat(guard.acquire(ALICE).permitted()).as("23:59:59").isFalse();
        clock.advance(Duration.ofSeconds(1));
        assertThat(exhaust(guard)).as("February opened, at 23:00 UTC").isEqualTo(3);
        assertThat(guard.peek(ALICE).verdicts().get(0).windows().get(0).period())
                .as("February")
                .isEqualTo(Duration.ofDays(28));
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aUtcMonthOpensAnHourLaterThanBerlins(String store) {
        Guard guard = guard(store, "2026-01-31T23:59:00", "3/1mo");
        exhaust(guard);
        assertThat(guard.acquire(ALICE).retryAfterNanos())
                .as("until 1 February 00:00 UTC, 01:00 in Berlin")
                .isEqualTo(Duration.ofMinutes(61).toNanos());
    }

    /** 29 March 2026 in Berlin has 23 hours: the clocks go from 02:00 to 03:00. */
    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void theDayTheClocksGoForwardLasts23Hours(String store) {
        Guard guard = guard(store, "2026-03-29T00:30:00", "2/1d@Europe/Berlin");
        exhaust(guard);
        Decision rejected = guard.acquire(ALICE);
        assertThat(rejected.retryAfterNanos())
                .as("22.5 hours to midnight")
                .isEqualTo(Duration.ofMinutes(22 * 60 + 30).toNanos());
        assertThat(rejected.verdicts().get(0).windows().get(0).period()).isEqualTo(Duration.ofHours(23));
        clock.advance(Duration.ofMinutes(22 * 60 + 30));
        assertThat(exhaust(guard)).as("30 March").isEqualTo(2);
    }

    /** 25 October 2026 in Berlin has 25 hours: the clocks go from 03:00 back to 02:00. */
    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void theDayTheClocksGoBackLasts25Hours(String store) {
        Guard guard = guard(store, "2026-10-25T00:30:00", "2/1d@Europe/Berlin");
        exhaust(guard);
        Decision rejected = guard.acquire(ALICE);
        assertThat(rejected.retryAfterNanos())
                .isEqualTo(Duration.ofMinutes(24 * 60 + 30).toNanos());
        assertThat(rejected.verdicts().get(0).windows().get(0).period()).isEqualTo(Duration.ofHours(25));
        clock.advance(Duration.ofHours(24));
        assertThat(guard.acquire(ALICE).permitted()).as("23:30, still the 25th").isFalse();
        clock.advance(Duration.ofMinutes(30));
        assertThat(exhaust(guard)).isEqualTo(2);
    }

    /** 1 January 2026 is a Thursday; a week runs from Monday 29 December. */
    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aWeekRunsFromMonday(String store) {
        Guard guard = guard(store, "2026-01-01T12:00:00", "2/1w@Europe/Berlin", "1/1d@Europe/Berlin");
        assertThat(exhaust(guard)).as("one a day").isEqualTo(1);
        clock.advance(Duration.ofDays(1));
        assertThat(exhaust(guard)).as("the week's second").isEqualTo(1);
        clock.advance(Duration.ofDays(1));
        Decision rejected = guard.acquire(ALICE);
        assertThat(rejected.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(rejected.retryAfterNanos())
                .as("Saturday noon to Monday midnight")
                .isEqualTo(Duration.ofHours(36).toNanos());
        clock.advance(Duration.ofHours(36));
        assertThat(guard.acquire(ALICE).permitted()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aCalendarQuotaCountsPermitsRefundsAndPeeks(String store) {
        Guard guard = guard(store, "2026-05-15T10:00:00", "10/1mo@Europe/Berlin", "5/1s");
        Decision four = guard.acquire(ALICE, 4);
        assertThat(four.permitted()).isTrue();
        assertThat(guard.peek(ALICE, 2).outcome()).as("4 + 2 > 5 a second").isEqualTo(Outcome.REJECTED);
        assertThat(guard.refund(four).verdicts().get(0).windows()).isNotEmpty();
        assertThat(guard.peek(ALICE, 5).outcome())
                .as("the refund gave all 4 back")
                .isEqualTo(Outcome.ALLOWED);
        for (int i = 0; i < 10; i++) {
            assertThat(guard.acquire(ALICE).permitted()).as("call %d", i).isTrue();
            clock.advance(Duration.ofSeconds(1));
        }
        Decision rejected = guard.acquire(ALICE);
        assertThat(rejected.outcome()).isEqualTo(Outcome.REJECTED);
        Instant june =
                java.time.LocalDate.parse("2026-06-01").atStartOfDay(BERLIN).toInstant();
        assertThat(rejected.retryAfterNanos())
                .isEqualTo(Duration.between(Instant.ofEpochSecond(0, clock.currentTimeNanos()), june)
                        .toNanos());
    }

    /** A key's limits change mid-month (a window added): the month's count stays. */
    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aChangeOfLimitsKeepsTheCountsOfTheWindowsThatRemain(String store) {
        java.util.concurrent.atomic.AtomicReference<List<Limit>> alices =
                new java.util.concurrent.atomic.AtomicReference<>();
        RateLimiter limiter =
                limiter(store, "2026-05-15T10:00:00", (rule, key) -> key.equals("alice") ? alices.get() : null);
        Guard guard = limiter.guard(Rule.builder("quota")
                .key("user")
                .limits("5/1mo@Europe/Berlin")
                .algorithm(Algorithm.FIXED_WINDOW)
                .build());
        for (int i = 0; i < 3; i++) {
            assertThat(guard.acquire(ALICE).permitted()).isTrue();
        }
        alices.set(List.of(Limit.parse("10/1s"), Limit.parse("5/1mo@Europe/Berlin")));
        clock.advance(Duration.ofMinutes(2));
        assertThat(exhaust(guard)).as("the month's 3 stay counted").isEqualTo(2);
    }

    /** A calendar quota is a fixed window: a rule given no algorithm is one; another algorithm given still fails. */
    @Test
    void aRuleWithACalendarQuotaAndNoAlgorithmIsAFixedWindow() {
        assertThat(Rule.builder("q").limits("2/1d@Asia/Tokyo").build().algorithm())
                .isEqualTo(Algorithm.FIXED_WINDOW);
        assertThat(Rule.builder("q").limits("10/1s", "1000/1mo").build().algorithm())
                .isEqualTo(Algorithm.FIXED_WINDOW);
        assertThat(Rule.builder("q").limits("2/1d").build().algorithm())
                .as("24 hours, no calendar")
                .isEqualTo(Algorithm.TOKEN_BUCKET);
        assertThat(Rule.builder("q").concurrency(2).build().algorithm()).isEqualTo(Algorithm.TOKEN_BUCKET);
        assertThatThrownBy(() -> Rule.builder("q")
                        .limits("2/1d@Asia/Tokyo")
                        .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                        .build())
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("which a SLIDING_WINDOW_LOG rule cannot count");
        Guard quota = limiter("local", "2026-03-10T12:00", null)
                .guard(Rule.builder("tokyo")
                        .key("user")
                        .limits("2/1d@Asia/Tokyo")
                        .build());
        assertThat(quota.acquire(ALICE).permitted()).isTrue();
        assertThat(quota.acquire(ALICE).permitted()).isTrue();
        assertThat(quota.acquire(ALICE).permitted()).isFalse();
    }

    @Test
    void calendarQuotasAreWrittenAndCheckedStrictly() {
        assertThat(Limit.parse("1000/1mo").window()).isEqualTo("1mo");
        assertThat(Limit.parse("1000/1mo@Europe/Berlin").toString()).isEqualTo("1000/1mo@Europe/Berlin");
        assertThat(Limit.parse("5/1w").calendar().unit()).isEqualTo(Limit.Calendar.Unit.WEEK);
        assertThat(Limit.parse("5/1d@UTC").window()).isEqualTo("1d@UTC");
        assertThat(Limit.parse("5/1d").calendar())
                .as("a day without a zone is 24 hours")
                .isNull();
        assertThat(Limit.parse("5/1d@utc")).isEqualTo(Limit.parse("5/1d@UTC"));
        for (String bad :
                List.of("5/2mo", "5/1mo@Mars/Base", "5/3w", "5/1h@Europe/Berlin", "5/1mo burst=6", "5/1d@", "5/1mo@")) {
            assertThatThrownBy(() -> Limit.parse(bad))
                    .as(bad)
                    .isInstanceOf(InvalidRateLimitConfigurationException.class);
        }
        assertThatThrownBy(() -> Rule.builder("q")
                        .limits("1000/1mo")
                        .algorithm(Algorithm.TOKEN_BUCKET)
                        .build())
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage("rule 'q': limit '1000/1mo' is a calendar quota, a fixed window aligned to the calendar, "
                        + "which a TOKEN_BUCKET rule cannot count. Remove the algorithm (a rule with a calendar quota is "
                        + "a FIXED_WINDOW rule by default) or give FIXED_WINDOW (algorithm=fixed-window), or give a "
                        + "window of a fixed length ('1d').");
        assertThatThrownBy(() -> Rule.builder("q")
                        .limits("1000/1mo")
                        .algorithm(Algorithm.FIXED_WINDOW)
                        .localFirst(new Rule.LocalFirst(10, Duration.ofMillis(100)))
                        .build())
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("local-first");
    }
}
