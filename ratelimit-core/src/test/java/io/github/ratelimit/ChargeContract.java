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
import org.junit.jupiter.params.provider.CsvSource;
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
    /** The tokens each settlement charged or gave back, in the order of {@link #settlements}. */
    protected final List<Long> settledTokens = new CopyOnWriteArrayList<>();

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
                        settledTokens.add(tokens);
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

    /** 1000 a calendar month (UTC): the clock starts on the 1st of January, 31 days long. */
    protected static Rule monthly() {
        return quota("1000/1mo");
    }

    /** A charging rule of a kind: an algorithm's name, or {@code calendar} for the monthly quota. */
    protected static Rule rule(String kind) {
        return kind.equals("calendar") ? monthly() : completions(Algorithm.valueOf(kind));
    }

    /** A charging rule of these limits, one a calendar quota. */
    protected static Rule quota(String... limits) {
        return Rule.builder("completions")
                .key("user")
                .limits(limits)
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
        twoCallsOf600(guard);
        assertThat(settlements).containsExactly(Settlement.CHARGED, Settlement.CHARGED);
        // 200 of debt and the next call's 1 token, at 1000 a minute: 12.06 s.
        refusedFor(guard, Duration.ofMillis(12_060));
    }

    /** Two calls of 600 tokens, each admitted (the second finds 400 left) and charged. */
    private static void twoCallsOf600(Guard guard) {
        for (int i = 0; i < 2; i++) {
            Decision d = guard.acquire(ALICE);
            assertThat(d.outcome()).isEqualTo(Outcome.ALLOWED);
            guard.settle(d, 600);
        }
    }

    /**
     * The key's next call is refused with a {@code Retry-After} of exactly {@code wait}, again 1 ms before it ends,
     * and admitted once it has.
     *
     * @return the call admitted at the end
     */
    private Decision refusedFor(Guard guard, Duration wait) {
        Decision refused = guard.acquire(ALICE);
        assertThat(refused.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(remaining(refused)).isZero();
        assertThat(refused.retryAfterNanos()).isEqualTo(wait.toNanos());
        clock.advance(wait.minusMillis(1));
        assertThat(guard.acquire(ALICE).outcome()).isEqualTo(Outcome.REJECTED);
        clock.advance(Duration.ofMillis(1));
        Decision admitted = guard.acquire(ALICE);
        assertThat(admitted.outcome()).isEqualTo(Outcome.ALLOWED);
        return admitted;
    }

    /**
     * A SOFT rule's next call waits out the debt instead of being refused: a bucket's 200 tokens of debt, or the
     * 1200 a counter counted in this minute (until 10.05 s into the next, as {@link
     * #aCounterDebtRefusesTheNextCallUntilTheWeightedCountAllowsIt}).
     */
    @ParameterizedTest
    @CsvSource({"TOKEN_BUCKET, 12060", "SLIDING_WINDOW_COUNTER, 70050"})
    void debtDelaysTheNextCallOfASoftRule(Algorithm algorithm, long delayMillis) {
        Guard guard = limiter(newStore(clock))
                .guard(completions(algorithm).toBuilder()
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofSeconds(80))
                        .build());
        Decision first = guard.acquire(ALICE);
        guard.settle(first, 1200);
        long before = clock.awaitedNanos();
        Decision next = guard.acquire(ALICE);
        assertThat(next.outcome()).isEqualTo(Outcome.DELAYED);
        assertThat(next.delayNanos()).isEqualTo(Duration.ofMillis(delayMillis).toNanos());
        assertThat(clock.awaitedNanos() - before).isEqualTo(next.delayNanos());
    }

    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"TOKEN_BUCKET", "FIXED_WINDOW", "SLIDING_WINDOW_COUNTER"})
    void aCallThatUsedLessGetsTheRestBack(Algorithm algorithm) {
        Guard guard = limiter(newStore(clock)).guard(completions(algorithm));
        Decision d = guard.acquire(ALICE, 100);
        assertThat(remaining(d)).isEqualTo(900);
        guard.settle(d, 30);
        assertThat(remaining(guard.peek(ALICE))).isEqualTo(970);
        assertThat(settlements).containsExactly(Settlement.REFUNDED);
    }

    @Test
    void aCalendarQuotaGivesTheRestBackToo() {
        Guard guard = limiter(newStore(clock)).guard(monthly());
        Decision d = guard.acquire(ALICE, 100);
        guard.settle(d, 30);
        assertThat(remaining(guard.peek(ALICE))).isEqualTo(970);
        assertThat(settlements).containsExactly(Settlement.REFUNDED);
    }

    /**
     * A sliding counter's debt is a count above the limit in the interval the calls were counted in: the next call
     * waits until that interval's weighted count, sliding out, leaves it room.
     */
    @Test
    void aCounterDebtRefusesTheNextCallUntilTheWeightedCountAllowsIt() {
        Guard guard = limiter(newStore(clock)).guard(completions(Algorithm.SLIDING_WINDOW_COUNTER));
        twoCallsOf600(guard);
        assertThat(settlements).containsExactly(Settlement.CHARGED, Settlement.CHARGED);
        assertThat(settledTokens).containsExactly(599L, 599L);
        // 1200 counted in the first minute: the next call's 1 fits once 1200 x (1 - offset / 1m) <= 999, 10.05 s into
        // the second minute.
        refusedFor(guard, Duration.ofMillis(70_050));
    }

    /** A call counted late in one interval and settled in the next is charged in its own, which weighs less now. */
    @Test
    void aCounterChargesTheIntervalTheCallWasCountedIn() {
        Guard guard = limiter(newStore(clock)).guard(completions(Algorithm.SLIDING_WINDOW_COUNTER));
        clock.advance(Duration.ofSeconds(59));
        Decision d = guard.acquire(ALICE);
        clock.advance(Duration.ofSeconds(2));
        guard.settle(d, 601);
        // 601 in the first minute, weighing 59/60 a second into the next: 590.98 counted, 409 left (600 charged to
        // the minute now open would leave 399).
        assertThat(remaining(guard.peek(ALICE))).isEqualTo(409);
    }

    /**
     * A call that outlived what it was counted in is charged in what is open now, so what it used counts: a counter's
     * call admitted at once and settled 125 s later (its minute and the next no longer weigh), a month's admitted a
     * second before the month ends and settled two seconds later.
     */
    @ParameterizedTest
    @CsvSource({"SLIDING_WINDOW_COUNTER, 0, 125", "calendar, 2678399, 2"})
    void aCallThatOutlivedItsIntervalOrWindowIsChargedInTheOpenOne(String kind, long before, long after) {
        Guard guard = limiter(newStore(clock)).guard(rule(kind));
        clock.advance(Duration.ofSeconds(before));
        Decision d = guard.acquire(ALICE);
        clock.advance(Duration.ofSeconds(after));
        guard.settle(d, 601);
        assertThat(settlements).containsExactly(Settlement.CHARGED);
        assertThat(remaining(guard.peek(ALICE))).isEqualTo(400);
    }

    /**
     * The bound: an interval's count goes at most a day of refill past the limit (1,440,000 of 1000/1m), and weighs no
     * longer than the interval does: the next call fits before the end of the next minute.
     */
    @Test
    void aHugeReportLeavesACounterAtMostADayOfRefillPastItsLimit() {
        Guard guard = limiter(newStore(clock)).guard(completions(Algorithm.SLIDING_WINDOW_COUNTER));
        Decision d = guard.acquire(ALICE);
        guard.settle(d, Long.MAX_VALUE);
        guard.settle(d, 1_000_000_000_000_000_000L);
        assertThat(settlements).containsExactly(Settlement.CLAMPED, Settlement.CLAMPED);
        assertThat(settledTokens).containsExactly(1_440_999L, 0L);
        Decision next = guard.acquire(ALICE);
        assertThat(next.outcome()).isEqualTo(Outcome.REJECTED);
        // 1,441,000 counted in the first minute: the next call's 1 fits 59.958 s into the second.
        assertThat(next.retryAfterNanos())
                .isBetween(
                        Duration.ofMillis(119_958).toNanos(),
                        Duration.ofMillis(119_959).toNanos());
        clock.advance(Duration.ofMinutes(2));
        Decision after = guard.acquire(ALICE);
        assertThat(after.outcome()).isEqualTo(Outcome.ALLOWED);
        assertThat(remaining(after)).isEqualTo(999);
    }

    /** A calendar quota's debt is owed until its window ends: the next call waits for the 1st of the next month. */
    @Test
    void aCalendarQuotaOwesItsDebtUntilTheMonthEnds() {
        Guard guard = limiter(newStore(clock)).guard(monthly());
        twoCallsOf600(guard);
        Decision february = refusedFor(guard, Duration.ofDays(31));
        assertThat(remaining(february)).isEqualTo(999);
    }

    /** A calendar window of a day or longer owes at most its limit: a huge report leaves it counting twice that. */
    @Test
    void aHugeReportLeavesACalendarQuotaAtMostItsLimitPastIt() {
        Guard guard = limiter(newStore(clock)).guard(quota("100/1h", "1000/1mo"));
        Decision d = guard.acquire(ALICE);
        guard.settle(d, Long.MAX_VALUE);
        // The month may owe 1000 (1999 more), the hour a day of refill (2400): the month holds the charge back.
        assertThat(settlements).containsExactly(Settlement.CLAMPED);
        assertThat(settledTokens).containsExactly(1_999L);
        Decision next = guard.acquire(ALICE);
        assertThat(next.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(next.retryAfterNanos()).isEqualTo(Duration.ofDays(31).toNanos());
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
