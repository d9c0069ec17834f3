package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard.Settlement;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.testing.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Charging what a call used once it ran ({@link Guard#settle}): admitted while tokens are left, then the rest taken
 * as debt, or the unused given back; bounded; garbage keeps the estimate. Run against each store by a subclass.
 */
abstract class ChargeContract {

    protected final ManualClock clock = new ManualClock();
    private final List<RateLimiter> limiters = new ArrayList<>();
    /** What the limiters' listener heard of settlements. */
    protected final List<Settlement> settlements = new CopyOnWriteArrayList<>();

    /** @return a store, empty for this test, whose buckets use {@code clock} */
    protected abstract BucketStore newStore(ManualClock clock);

    /** @return a limiter over {@code store}, its settlements recorded */
    protected RateLimiter limiter(BucketStore store) {
        RateLimiter limiter = RateLimiter.builder()
                .store(store)
                .timeMeter(clock)
                .waiter(clock)
                .listener(new RateLimiter.Listener() {
                    @Override
                    public void onDecision(Decision decision) {}

                    @Override
                    public void onSettled(Decision.Verdict verdict, Settlement settlement, long tokens) {
                        settlements.add(settlement);
                    }
                })
                .build();
        limiters.add(limiter);
        return limiter;
    }

    @AfterEach
    void closeAll() {
        limiters.forEach(RateLimiter::close);
    }

    protected static final RequestContext ALICE =
            RequestContext.builder().principal("alice").build();

    protected static Rule completions(Algorithm algorithm) {
        return Rule.builder("completions")
                .key("user")
                .limits("1000/1m")
                .algorithm(algorithm)
                .charge("usage.totalTokens")
                .build();
    }

    protected static long remaining(Decision d) {
        return d.verdicts().get(0).windows().stream()
                .mapToLong(Decision.Window::remaining)
                .min()
                .orElseThrow();
    }

    /** The Boot sample's scenario: two calls of 600 pass, the third is refused until the 200 of debt are repaid. */
    @Test
    void debtRefusesTheNextCallUntilRepaid() {
        Guard guard = limiter(newStore(clock)).guard(completions(Algorithm.TOKEN_BUCKET));
        for (int i = 0; i < 2; i++) {
            Decision d = guard.acquire(ALICE);
            assertThat(d.outcome()).isEqualTo(Outcome.ALLOWED);
            guard.settle(d, 600);
        }
        Decision third = guard.acquire(ALICE);
        assertThat(third.outcome()).isEqualTo(Outcome.REJECTED);
        // 200 of debt and the next call's 1 token, at 1000 a minute: 12.06 s.
        assertThat(third.retryAfterNanos()).isEqualTo(Duration.ofMillis(12_060).toNanos());
        assertThat(settlements).containsExactly(Settlement.CHARGED, Settlement.CHARGED);

        clock.advance(Duration.ofMillis(12_059));
        assertThat(guard.acquire(ALICE).outcome()).isEqualTo(Outcome.REJECTED);
        clock.advance(Duration.ofMillis(1));
        assertThat(guard.acquire(ALICE).outcome()).isEqualTo(Outcome.ALLOWED);
    }

    /** A SOFT rule's next call waits out the debt instead of being refused. */
    @Test
    void debtDelaysTheNextCallOfASoftRule() {
        Guard guard = limiter(newStore(clock))
                .guard(completions(Algorithm.TOKEN_BUCKET).toBuilder()
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofSeconds(20))
                        .build());
        Decision first = guard.acquire(ALICE);
        guard.settle(first, 1200);
        long before = clock.awaitedNanos();
        Decision next = guard.acquire(ALICE);
        assertThat(next.outcome()).isEqualTo(Outcome.DELAYED);
        assertThat(next.delayNanos()).isEqualTo(Duration.ofMillis(12_060).toNanos());
        assertThat(clock.awaitedNanos() - before).isEqualTo(next.delayNanos());
    }

    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"TOKEN_BUCKET", "FIXED_WINDOW"})
    void aCallThatUsedLessGetsTheRestBack(Algorithm algorithm) {
        Guard guard = limiter(newStore(clock)).guard(completions(algorithm));
        Decision d = guard.acquire(ALICE, 100);
        assertThat(remaining(d)).isEqualTo(900);
        guard.settle(d, 30);
        assertThat(remaining(guard.peek(ALICE))).isEqualTo(970);
        assertThat(settlements).containsExactly(Settlement.REFUNDED);
    }

    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"TOKEN_BUCKET", "FIXED_WINDOW"})
    void aHugeReportOwesAtMostADayOfRefill(Algorithm algorithm) {
        Guard guard = limiter(newStore(clock)).guard(completions(algorithm));
        for (long huge : new long[] {Long.MAX_VALUE, 1_000_000_000_000_000_000L}) {
            Decision d = guard.acquire(ALICE);
            if (d.permitted()) {
                guard.settle(d, huge);
            }
        }
        assertThat(settlements).containsExactly(Settlement.CLAMPED);
        Decision next = guard.acquire(ALICE);
        assertThat(next.outcome()).isEqualTo(Outcome.REJECTED);
        // The window owes what it refills in a day (1,440,000 of 1000/1m): the next call waits for 1,440,001 tokens,
        // a day and at most a period more.
        assertThat(next.retryAfterNanos())
                .isPositive()
                .isLessThanOrEqualTo(Duration.ofDays(1).plusMinutes(2).toNanos());
        if (algorithm == Algorithm.TOKEN_BUCKET) {
            assertThat(next.retryAfterNanos())
                    .isEqualTo(Duration.ofDays(1).plusMillis(60).toNanos());
        }
        // Once it is repaid, the key is as new.
        clock.advance(Duration.ofDays(1).plusMinutes(3));
        Decision after = guard.acquire(ALICE);
        assertThat(after.outcome()).isEqualTo(Outcome.ALLOWED);
        assertThat(remaining(after)).isEqualTo(999);
    }

    @Test
    void noUsableNumberKeepsTheEstimate() {
        Guard guard = limiter(newStore(clock)).guard(completions(Algorithm.TOKEN_BUCKET));
        Decision d = guard.acquire(ALICE, 5);
        guard.settle(d, -1);
        assertThat(remaining(guard.peek(ALICE))).isEqualTo(995);
        assertThat(settlements).containsExactly(Settlement.UNUSABLE);
    }

    @Test
    void exactReportAndRejectedDecisionChangeNothing() {
        Guard guard = limiter(newStore(clock)).guard(completions(Algorithm.TOKEN_BUCKET));
        Decision d = guard.acquire(ALICE, 1000);
        guard.settle(d, 1000);
        Decision rejected = guard.acquire(ALICE);
        assertThat(rejected.outcome()).isEqualTo(Outcome.REJECTED);
        guard.settle(rejected, 10_000);
        assertThat(settlements).containsExactly(Settlement.EXACT);
        assertThat(guard.acquire(ALICE).retryAfterNanos()).isEqualTo(rejected.retryAfterNanos());
    }

    @Test
    void onlyTheChargingRuleIsCharged() {
        RateLimiter limiter = limiter(newStore(clock));
        Guard guard = limiter.guard(List.of(
                completions(Algorithm.TOKEN_BUCKET),
                Rule.builder("calls").key("user").limits("100/1m").build()));
        Decision d = guard.acquire(ALICE);
        guard.settle(d, 500);
        Decision next = guard.acquire(ALICE);
        assertThat(next.verdicts())
                .extracting(v -> v.rule() + "=" + v.windows().get(0).remaining())
                .containsExactly("completions=499", "calls=98");
    }
}
