package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Decision.Verdict;
import io.github.ratelimit.Rule.Counted;
import io.github.ratelimit.testing.ManualClock;
import java.time.Duration;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code blockFor}: a key a rule refused stays refused by it for a while, whatever its windows hold, on the local store
 * (the store-level behaviour is in {@code LocalBucketStoreBlockTest}).
 */
class BlockForTest {

    private final ManualClock clock = new ManualClock();
    private final List<Decision> heard = new CopyOnWriteArrayList<>();
    private final RateLimiter limiter = RateLimiter.builder()
            .timeMeter(clock)
            .waiter(clock)
            .listener(heard::add)
            .build();

    @AfterEach
    void close() {
        limiter.close();
    }

    private static RequestContext user(String name) {
        return RequestContext.builder().principal(name).build();
    }

    private static Verdict only(Decision d) {
        assertThat(d.verdicts()).hasSize(1);
        return d.verdicts().get(0);
    }

    private static Map<String, String> headers(Decision d) {
        Map<String, String> headers = new HashMap<>();
        RateLimitHeaders.write(d, EnumSet.allOf(RateLimitHeaders.HeaderStyle.class), headers::put);
        return headers;
    }

    @Test
    void refusedKeyStaysRefusedAfterItsBucketRefilledUntilTheBlockEnds() {
        Guard guard = limiter.guard(Rule.builder("api")
                .key("user")
                .limits("2/1s")
                .blockFor(Duration.ofMinutes(1))
                .build());
        assertThat(guard.acquire(user("alice")).permitted()).isTrue();
        assertThat(guard.acquire(user("alice")).permitted()).isTrue();
        Decision refused = guard.acquire(user("alice"));
        assertThat(refused.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(only(refused).basis()).as("the limit refused it").isEqualTo(Basis.BUCKET);
        assertThat(refused.retryAfterNanos())
                .as("the block starts")
                .isEqualTo(Duration.ofMinutes(1).toNanos());
        assertThat(headers(refused)).containsEntry("Retry-After", "60");

        clock.advance(Duration.ofSeconds(5));
        Decision blocked = guard.acquire(user("alice"));
        assertThat(blocked.outcome())
                .as("the bucket is full again, the key blocked")
                .isEqualTo(Outcome.REJECTED);
        assertThat(only(blocked).basis()).isEqualTo(Basis.BLOCKED);
        assertThat(blocked.retryAfterNanos()).isEqualTo(Duration.ofSeconds(55).toNanos());
        Map<String, String> headers = headers(blocked);
        assertThat(headers)
                .containsEntry("Retry-After", "55")
                .containsEntry("X-RateLimit-Remaining", "0")
                .containsEntry("X-RateLimit-Reset", "55")
                .containsEntry("RateLimit", "\"api-1s\";r=0;t=55");
        assertThat(blocked.describe()).contains("blocks this client");
        assertThat(guard.acquire(user("bob")).permitted())
                .as("another key is not blocked")
                .isTrue();

        clock.advance(Duration.ofSeconds(30));
        assertThat(guard.acquire(user("alice")).retryAfterNanos())
                .as("refused calls do not extend the block")
                .isEqualTo(Duration.ofSeconds(25).toNanos());
        clock.advance(Duration.ofSeconds(25));
        Decision after = guard.acquire(user("alice"));
        assertThat(after.permitted()).as("the block ended").isTrue();
        assertThat(only(after).windows().get(0).remaining())
                .as("the bucket kept refilling during the block and was never charged by it")
                .isEqualTo(1);
    }

    @Test
    void locksAUserOutForFifteenMinutesAfterFiveWrongPasswords() {
        Guard logins = limiter.guard(Rule.builder("logins")
                .key("user")
                .limits("5/15m")
                .count(Counted.FAILURES)
                .blockFor(Duration.ofMinutes(15))
                .build());
        for (int i = 0; i < 20; i++) {
            Decision d = logins.acquire(user("alice"));
            assertThat(d.permitted()).as("right password %d", i).isTrue();
            logins.completed(d, false);
        }
        for (int i = 0; i < 5; i++) {
            Decision d = logins.acquire(user("alice"));
            assertThat(d.permitted()).as("wrong password %d", i).isTrue();
            logins.completed(d, true);
        }
        Decision sixth = logins.acquire(user("alice"));
        assertThat(sixth.outcome()).as("the sixth attempt").isEqualTo(Outcome.REJECTED);
        assertThat(sixth.retryAfterNanos()).isEqualTo(Duration.ofMinutes(15).toNanos());

        clock.advance(Duration.ofMinutes(10));
        Decision meanwhile = logins.acquire(user("alice"));
        assertThat(meanwhile.outcome())
                .as("locked out, though two failures have refilled")
                .isEqualTo(Outcome.REJECTED);
        assertThat(only(meanwhile).basis()).isEqualTo(Basis.BLOCKED);
        assertThat(meanwhile.retryAfterNanos()).isEqualTo(Duration.ofMinutes(5).toNanos());
        logins.completed(meanwhile, false);
        assertThat(logins.acquire(user("bob")).permitted()).isTrue();

        clock.advance(Duration.ofMinutes(5));
        Decision back = logins.acquire(user("alice"));
        assertThat(back.permitted()).as("the lock-out is over").isTrue();
        logins.completed(back, false);
    }

    @Test
    void softRuleBlocksWhenItRefusesAndThenRefusesInsteadOfDelaying() {
        Guard guard = limiter.guard(Rule.builder("soft")
                .limits("2/2s")
                .mode(Mode.SOFT)
                .maxDelay(Duration.ofMillis(1500))
                .maxWaiting(10)
                .blockFor(Duration.ofMinutes(1))
                .build());
        assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
        assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
        Decision delayed = guard.acquire(RequestContext.empty());
        assertThat(delayed.outcome())
                .as("a wait within maxDelay blocks nothing")
                .isEqualTo(Outcome.DELAYED);
        Decision refused = guard.acquire(RequestContext.empty(), 2);
        assertThat(refused.outcome()).as("a wait of 2 s is beyond maxDelay").isEqualTo(Outcome.REJECTED);
        assertThat(refused.retryAfterNanos()).isEqualTo(Duration.ofMinutes(1).toNanos());

        clock.advance(Duration.ofSeconds(10));
        Decision blocked = guard.acquire(RequestContext.empty());
        assertThat(blocked.outcome()).as("refused, not delayed").isEqualTo(Outcome.REJECTED);
        assertThat(blocked.delayNanos()).isZero();
        assertThat(only(blocked).basis()).isEqualTo(Basis.BLOCKED);
        clock.advance(Duration.ofSeconds(50));
        assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
    }

    @Test
    void softRuleBlocksWhenNoWaitingPlaceIsFree() {
        Guard guard = limiter.guard(Rule.builder("soft")
                .limits("1/1s")
                .mode(Mode.SOFT)
                .maxDelay(Duration.ofSeconds(30))
                .maxWaiting(0)
                .blockFor(Duration.ofMinutes(1))
                .build());
        assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
        Decision full = guard.acquire(RequestContext.empty());
        assertThat(full.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(only(full).basis()).isEqualTo(Basis.WAITERS_FULL);
        assertThat(full.retryAfterNanos()).isEqualTo(Duration.ofMinutes(1).toNanos());
        clock.advance(Duration.ofSeconds(5));
        assertThat(only(guard.acquire(RequestContext.empty())).basis()).isEqualTo(Basis.BLOCKED);
    }

    @Test
    void shadowRuleRecordsTheBlockAndRefusesNothing() {
        Guard guard = limiter.guard(Rule.builder("shadow")
                .limits("1/1s")
                .mode(Mode.SHADOW)
                .blockFor(Duration.ofMinutes(1))
                .build());
        assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
        Decision wouldRefuse = guard.acquire(RequestContext.empty());
        assertThat(wouldRefuse.outcome()).isEqualTo(Outcome.SHADOW_REJECTED);
        assertThat(only(wouldRefuse).waitNanos())
                .isEqualTo(Duration.ofMinutes(1).toNanos());
        clock.advance(Duration.ofSeconds(5));
        Decision wouldBlock = guard.acquire(RequestContext.empty());
        assertThat(wouldBlock.permitted()).as("nothing is blocked").isTrue();
        assertThat(wouldBlock.outcome()).isEqualTo(Outcome.SHADOW_REJECTED);
        assertThat(only(wouldBlock).basis()).isEqualTo(Basis.BLOCKED);
        assertThat(only(wouldBlock).waitNanos())
                .isEqualTo(Duration.ofSeconds(55).toNanos());
        assertThat(headers(wouldBlock)).as("a shadow rule claims no limit").isEmpty();
        assertThat(heard).allSatisfy(d -> assertThat(d.permitted()).isTrue());
    }

    @Test
    void resettingTheKeyLiftsTheBlock() {
        Guard guard = limiter.guard(Rule.builder("api")
                .key("user")
                .limits("1/1h")
                .blockFor(Duration.ofHours(1))
                .build());
        guard.acquire(user("alice"));
        assertThat(guard.acquire(user("alice")).permitted()).isFalse();
        assertThat(only(guard.acquire(user("alice"))).basis()).isEqualTo(Basis.BLOCKED);
        limiter.reset("api", "alice");
        assertThat(guard.acquire(user("alice")).permitted()).isTrue();
    }

    @Test
    void blockedRuleDecidesAloneAndTheOtherRulesKeepTheirTokens() {
        Guard guard = limiter.guard(
                Rule.builder("all").limits("10/1h").build(),
                Rule.builder("strict")
                        .limits("1/1h")
                        .blockFor(Duration.ofHours(1))
                        .build());
        assertThat(guard.acquire(RequestContext.empty()).permitted()).isTrue();
        for (int i = 0; i < 5; i++) {
            assertThat(guard.acquire(RequestContext.empty()).permitted()).isFalse();
        }
        Decision peek = guard.peek(RequestContext.empty(), 1);
        assertThat(peek.verdicts()).anySatisfy(v -> assertThat(v.basis()).isEqualTo(Basis.BLOCKED));
        Guard allAlone = limiter.guard(Rule.builder("all").limits("10/1h").build());
        Verdict all = only(allAlone.acquire(RequestContext.empty()));
        assertThat(all.windows().get(0).remaining())
                .as("only the first call and this one took tokens of 'all'")
                .isEqualTo(8);
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void everyAlgorithmStaysBlockedPastItsWindow(Algorithm algorithm) {
        Guard guard = limiter.guard(Rule.builder("api")
                .limits("2/1m")
                .algorithm(algorithm)
                .blockFor(Duration.ofMinutes(10))
                .build());
        int allowed = 0;
        while (guard.acquire(RequestContext.empty()).permitted()) {
            allowed++;
            assertThat(allowed).isLessThanOrEqualTo(2);
        }
        clock.advance(Duration.ofMinutes(3));
        Decision blocked = guard.acquire(RequestContext.empty());
        assertThat(only(blocked).basis()).isEqualTo(Basis.BLOCKED);
        assertThat(blocked.retryAfterNanos()).isEqualTo(Duration.ofMinutes(7).toNanos());
        clock.advance(Duration.ofMinutes(7));
        assertThat(guard.acquire(RequestContext.empty()).permitted()).isTrue();
    }

    @Test
    void calendarQuotaStaysBlockedIntoTheNextWindow() {
        Guard guard = limiter.guard(Rule.builder("daily")
                .limits("1/1d")
                .blockFor(Duration.ofDays(1))
                .build());
        assertThat(guard.acquire(RequestContext.empty()).permitted()).isTrue();
        assertThat(guard.acquire(RequestContext.empty()).permitted()).isFalse();
        clock.advance(Duration.ofHours(25));
        assertThat(guard.acquire(RequestContext.empty()).permitted()).isTrue();
        assertThat(guard.acquire(RequestContext.empty()).permitted()).isFalse();
        clock.advance(Duration.ofHours(23));
        Decision blocked = guard.acquire(RequestContext.empty());
        assertThat(only(blocked).basis())
                .as("the next day's window is open, the block is not over")
                .isEqualTo(Basis.BLOCKED);
    }

    @Test
    void perKeyLimitsDecideWhenTheBlockStartsAndTheRuleHowLongItLasts() {
        try (RateLimiter planned = RateLimiter.builder()
                .timeMeter(clock)
                .waiter(clock)
                .limitProvider(
                        (rule, key) -> key.equals("gold") ? List.of(Limit.parse("3/1h")) : null, Duration.ofMinutes(1))
                .build()) {
            Guard guard = planned.guard(Rule.builder("api")
                    .key("user")
                    .limits("1/1h")
                    .blockFor(Duration.ofMinutes(10))
                    .build());
            for (int i = 0; i < 3; i++) {
                assertThat(guard.acquire(user("gold")).permitted()).isTrue();
            }
            Decision refused = guard.acquire(user("gold"));
            assertThat(refused.permitted()).isFalse();
            assertThat(refused.retryAfterNanos())
                    .isEqualTo(Duration.ofMinutes(20).toNanos());
            clock.advance(Duration.ofMinutes(1));
            Decision blocked = guard.acquire(user("gold"));
            assertThat(only(blocked).basis()).isEqualTo(Basis.BLOCKED);
            assertThat(blocked.retryAfterNanos())
                    .as("the block is its own length, whatever the window's wait")
                    .isEqualTo(Duration.ofMinutes(9).toNanos());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"0s", "-5s", "25h"})
    void refusesABlockThatIsNotPositiveOrLongerThanADay(String text) {
        Duration d = text.startsWith("-")
                ? Duration.ofSeconds(-5)
                : text.equals("0s") ? Duration.ZERO : Duration.ofHours(25);
        assertThatThrownBy(() -> Rule.builder("api")
                        .limits("1/1s")
                        .source("ratelimit.rules[0]")
                        .blockFor(d)
                        .build())
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageStartingWith("ratelimit.rules[0]: ")
                .hasMessageContaining("blockFor")
                .hasMessageContaining(d.isNegative() || d.isZero() ? "is not positive" : "longer than the allowed 1d");
    }

    @Test
    void refusesABlockOnAConcurrencyRule() {
        assertThatThrownBy(() -> Rule.builder("slow")
                        .concurrency(2)
                        .blockFor(Duration.ofMinutes(1))
                        .build())
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("blockFor is set on a concurrency rule")
                .hasMessageContaining("Remove blockFor");
    }

    @Test
    void aRuleKeepsItsBlockThroughCopies() {
        Rule rule = Rule.builder("api")
                .limits("1/1s")
                .blockFor(Duration.ofMinutes(15))
                .build();
        assertThat(rule.withLimits(List.of(Limit.parse("5/1s"))).blockFor()).isEqualTo(Duration.ofMinutes(15));
        assertThat(rule.toString()).contains("blockFor=15m");
        assertThat(rule).isNotEqualTo(rule.toBuilder().blockFor(null).build());
    }
}
