package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Rule.Counted;
import io.github.ratelimit.testing.ManualClock;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Rules that count only failed calls: a call needs a token to go ahead and gets it back when it succeeds. */
class CountFailuresTest {

    private final ManualClock clock = new ManualClock();
    private final RateLimiter limiter =
            RateLimiter.builder().timeMeter(clock).waiter(clock).build();

    @AfterEach
    void close() {
        limiter.close();
    }

    private static RequestContext from(String user) {
        return RequestContext.builder().principal(user).build();
    }

    @Test
    void successesGiveTheirTokensBackAndFailuresKeepThem() {
        Guard guard = limiter.guard(Rule.builder("logins")
                .key("user")
                .limits("3/1h")
                .count(Counted.FAILURES)
                .build());
        assertThat(guard.settlesOnCompletion()).isTrue();
        for (int i = 0; i < 50; i++) {
            Decision d = guard.acquire(from("alice"));
            assertThat(d.permitted()).as("success %d", i).isTrue();
            guard.completed(d, false);
        }
        for (int i = 0; i < 3; i++) {
            Decision d = guard.acquire(from("alice"));
            assertThat(d.permitted()).as("failure %d", i).isTrue();
            guard.completed(d, true);
        }
        assertThat(guard.acquire(from("alice")).outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(guard.acquire(from("bob")).permitted())
                .as("another user's failures are their own")
                .isTrue();
        clock.advance(Duration.ofMinutes(20));
        assertThat(guard.acquire(from("alice")).permitted())
                .as("a failure refilled")
                .isTrue();
    }

    @Test
    void attemptsUnderWayHoldTheirTokensUntilTheyEnd() {
        Guard guard = limiter.guard(Rule.builder("logins")
                .key("user")
                .limits("2/1h")
                .count(Counted.FAILURES)
                .build());
        Decision first = guard.acquire(from("alice"));
        Decision second = guard.acquire(from("alice"));
        assertThat(guard.acquire(from("alice")).outcome())
                .as("two attempts under way")
                .isEqualTo(Outcome.REJECTED);
        guard.completed(first, false);
        assertThat(guard.acquire(from("alice")).permitted()).isTrue();
        guard.completed(second, true);
    }

    @Test
    void rulesCountingEveryCallKeepTheirTokensWhenAnotherRuleCountsFailures() {
        Guard guard = limiter.guard(
                Rule.builder("calls").limits("5/1h").build(),
                Rule.builder("failures").limits("5/1h").count(Counted.FAILURES).build());
        for (int i = 0; i < 5; i++) {
            guard.completed(guard.acquire(RequestContext.empty()), false);
        }
        Decision sixth = guard.acquire(RequestContext.empty());
        assertThat(sixth.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(sixth.binding().rule()).isEqualTo("calls");
    }

    @Test
    void aGuardWithoutSuchRulesIgnoresCompletions() {
        Guard guard = limiter.guard(Rule.builder("calls").limits("1/1h").build());
        assertThat(guard.settlesOnCompletion()).isFalse();
        guard.completed(guard.acquire(RequestContext.empty()), false);
        assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.REJECTED);
    }
}
