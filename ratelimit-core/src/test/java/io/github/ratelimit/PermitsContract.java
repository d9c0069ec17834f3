package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.testing.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A call that counts as several ({@link Guard#acquire(RequestContext, long)}): every rule takes its cost that many
 * times, all or nothing, on every algorithm; a call no window could ever hold is an error before any store is
 * asked. Run against each store by a subclass.
 */
abstract class PermitsContract {

    protected final ManualClock clock = new ManualClock();
    private final List<RateLimiter> limiters = new ArrayList<>();

    /** @return a store, empty for this test, whose buckets use {@code clock} */
    protected abstract BucketStore newStore(ManualClock clock);

    private RateLimiter limiter() {
        RateLimiter limiter = RateLimiter.builder()
                .store(newStore(clock))
                .timeMeter(clock)
                .waiter(clock)
                .build();
        limiters.add(limiter);
        return limiter;
    }

    @AfterEach
    void closeAll() {
        limiters.forEach(RateLimiter::close);
    }

    private static final RequestContext ALICE =
            RequestContext.builder().principal("alice").build();

    /** @return the fewest permits left in any window of the first verdict */
    private static long remaining(Decision d) {
        return d.verdicts().get(0).windows().stream()
                .mapToLong(Decision.Window::remaining)
                .min()
                .orElseThrow();
    }

    /**
     * Every algorithm but the log, which counts each call at the rule's cost (see below), and the leaky bucket, which
     * holds one token, so a call of several permits is one no window could hold (an error, as below).
     */
    static List<Algorithm> weighted() {
        return java.util.Arrays.stream(Algorithm.values())
                .filter(a -> a != Algorithm.SLIDING_WINDOW_LOG && a != Algorithm.LEAKY_BUCKET)
                .toList();
    }

    /** The Boot sample's batch: 10 items a minute; 7 pass, then 4 are refused until one more is back, then 3 pass. */
    @ParameterizedTest
    @MethodSource("weighted")
    void aBatchTakesOnePermitPerItem(Algorithm algorithm) {
        Guard batch = limiter()
                .guard(Rule.builder("batch")
                        .key("user")
                        .limits("10/1m")
                        .algorithm(algorithm)
                        .build());
        Decision seven = batch.acquire(ALICE, 7);
        assertThat(seven.outcome()).isEqualTo(Outcome.ALLOWED);
        assertThat(remaining(seven)).isEqualTo(3);
        assertThat(seven.verdicts().get(0).permits()).isEqualTo(7);

        Decision four = batch.acquire(ALICE, 4);
        assertThat(four.outcome()).isEqualTo(Outcome.REJECTED);
        // The counter weighs the previous window's calls as it slides out: up to two windows.
        assertThat(four.retryAfterNanos())
                .as("until the missing token is back")
                .isPositive()
                .isLessThanOrEqualTo(Duration.ofMinutes(2).toNanos());
        if (algorithm == Algorithm.TOKEN_BUCKET) {
            assertThat(four.retryAfterNanos())
                    .as("one token of 10/1m")
                    .isEqualTo(Duration.ofSeconds(6).toNanos());
        }

        Decision three = batch.acquire(ALICE, 3);
        assertThat(three.outcome()).as("the refused four took nothing").isEqualTo(Outcome.ALLOWED);
        assertThat(remaining(three)).isZero();
    }

    @Test
    void aCallNoWindowCouldEverHoldIsAnErrorAndTakesNothing() {
        Guard batch = limiter()
                .guard(Rule.builder("batch").key("user").limits("10/1m", "5/1s").build());
        assertThatThrownBy(() -> batch.acquire(ALICE, 6))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("rule 'batch'")
                .hasMessageContaining("5/1s")
                .hasMessageContaining("holds at most 5");
        assertThatThrownBy(() -> batch.acquireAsync(ALICE, 6))
                .as("at once, not in the future")
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> batch.acquire(ALICE, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 1");
        assertThatThrownBy(() -> batch.acquire(ALICE, Long.MAX_VALUE)).isInstanceOf(IllegalArgumentException.class);
        assertThat(remaining(batch.acquire(ALICE, 5)))
                .as("nothing was taken by the refused calls")
                .isZero();
    }

    @Test
    void theCostOfARuleIsTakenPerPermit() {
        Guard api = limiter()
                .guard(Rule.builder("api").key("user").limits("100/1m").cost(2).build());
        Decision d = api.acquire(ALICE, 3);
        assertThat(d.verdicts().get(0).permits()).isEqualTo(6);
        assertThat(remaining(d)).isEqualTo(94);
        assertThat(remaining(api.acquire(ALICE))).as("one call, its cost").isEqualTo(92);
    }

    /** A later rule that refuses the batch gives the earlier ones back all of it, and a refund gives back all of it. */
    @ParameterizedTest
    @MethodSource("weighted")
    void theOtherRulesGetTheWholeCallBack(Algorithm algorithm) {
        RateLimiter limiter = limiter();
        Rule site = Rule.builder("site")
                .key("user")
                .limits("100/1m")
                .algorithm(algorithm)
                .build();
        Rule batch = Rule.builder("batch")
                .key("user")
                .limits("10/1m")
                .algorithm(algorithm)
                .build();
        Guard both = limiter.guard(site, batch);
        assertThat(both.acquire(ALICE, 7).permitted()).isTrue();
        assertThat(both.acquire(ALICE, 4).outcome()).isEqualTo(Outcome.REJECTED);
        Decision refunded = both.refund(both.acquire(ALICE, 2));
        assertThat(refunded.verdicts()).allSatisfy(v -> assertThat(v.permits()).isEqualTo(2));
        assertThat(remaining(limiter.guard(site).acquire(ALICE)))
                .as("site kept the first 7 only, then this call's 1")
                .isEqualTo(92);
        assertThat(remaining(limiter.guard(batch).acquire(ALICE, 3)))
                .as("batch kept the first 7 only, then these 3")
                .isZero();
    }

    /** The log keeps one entry per call, each counted at the rule's cost: a call of several permits is refused. */
    @Test
    void aSlidingLogRefusesCallsOfSeveralPermitsButTakesOne() {
        Guard log = limiter()
                .guard(Rule.builder("log")
                        .key("user")
                        .limits("10/1m")
                        .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                        .build());
        assertThatThrownBy(() -> log.acquire(ALICE, 2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("SLIDING_WINDOW_LOG")
                .hasMessageContaining("SLIDING_WINDOW_COUNTER");
        assertThat(remaining(log.acquire(ALICE, 1))).isEqualTo(9);
    }

    @Test
    void anAsyncBatchIsDecidedTheSameWay() throws Exception {
        Guard batch = limiter()
                .guard(Rule.builder("batch").key("user").limits("10/1m").build());
        assertThat(batch.acquireAsync(ALICE, 7).get().permitted()).isTrue();
        assertThat(batch.acquireAsync(ALICE, 4).get().outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(remaining(batch.acquireAsync(ALICE, 3).get())).isZero();
    }

    /** A call of {@code items} items, by {@code alice}: the permits expression {@code header:X-Items} reads them. */
    private static RequestContext items(String items) {
        return RequestContext.builder()
                .principal("alice")
                .header("X-Items", items)
                .build();
    }

    /**
     * A rule's permits expression counts the call as its value under that rule alone: the batch rule takes 7, the
     * site rule beside it 1; the Boot sample's 7, 4 refused, 3 sequence.
     */
    @ParameterizedTest
    @MethodSource("weighted")
    void aPermitsExpressionWeighsTheCallUnderItsRuleAlone(Algorithm algorithm) {
        Rule site = Rule.builder("site")
                .key("user")
                .limits("100/1m")
                .algorithm(algorithm)
                .build();
        Rule batch = Rule.builder("batch")
                .key("user")
                .limits("10/1m")
                .algorithm(algorithm)
                .permits("header:X-Items")
                .build();
        RateLimiter limiter = limiter();
        Guard both = limiter.guard(site, batch);
        Decision seven = both.acquire(items("7"));
        assertThat(seven.permitted()).isTrue();
        assertThat(seven.verdicts())
                .extracting(Decision.Verdict::rule, Decision.Verdict::permits)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("site", 1L),
                        org.assertj.core.groups.Tuple.tuple("batch", 7L));
        Decision four = both.acquire(items("4"));
        assertThat(four.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(four.retryAfterNanos()).isPositive();
        Decision three = both.acquire(items(" 3 "));
        assertThat(three.permitted()).as("the refused four took nothing").isTrue();
        assertThat(remaining(limiter.guard(site).acquire(ALICE)))
                .as("site: 7, 3 and this call, one each")
                .isEqualTo(97);
    }

    @Test
    void aPermitsExpressionMultipliesTheCallsOwnPermitsAndTheRulesCost() {
        Guard batch = limiter()
                .guard(Rule.builder("batch")
                        .key("user")
                        .limits("100/1m")
                        .cost(2)
                        .permits("header:X-Items")
                        .build());
        Decision d = batch.acquire(items("5"), 3);
        assertThat(d.verdicts().get(0).permits())
                .as("tokens: 5 items, 3 times, at 2 each")
                .isEqualTo(30);
        assertThat(remaining(d)).isEqualTo(70);
        assertThat(remaining(batch.acquire(items("0"))))
                .as("below 1 counts as 1")
                .isEqualTo(68);
    }

    /**
     * What a client sends is no whole number, or nothing: the call is refused, whatever the rule does with a missing
     * key; a rule that skipped it would let a client opt out of the rule by sending garbage.
     */
    @Test
    void aPermitsValueThatIsNoWholeNumberRefusesTheCall() {
        RateLimiter limiter = limiter();
        Guard strict = limiter.guard(Rule.builder("strict")
                .key("user")
                .limits("10/1m")
                .permits("header:X-Items")
                .build());
        Guard lenient = limiter.guard(Rule.builder("lenient")
                .key("user")
                .limits("10/1m")
                .permits("header:X-Items")
                .onMissingKey(MissingKeyPolicy.SKIP)
                .build());
        Guard shared = limiter.guard(Rule.builder("shared")
                .key("user")
                .limits("10/1m")
                .permits("header:X-Items")
                .onMissingKey(MissingKeyPolicy.SHARED)
                .build());
        for (String garbage :
                List.of("", "abc", "-1", "1.5", "1e3", "+4", "0x10", "-99999999999999999999", "\u0661\u0662")) {
            RequestContext call = items(garbage);
            for (Guard guard : List.of(strict, lenient, shared)) {
                Decision d = guard.acquire(call);
                assertThat(d.outcome())
                        .as("'%s' under %s", garbage, guard.rules().get(0).name())
                        .isEqualTo(Outcome.REJECTED);
                assertThat(d.verdicts().get(0).basis()).isEqualTo(Decision.Basis.KEY_MISSING);
            }
        }
        Decision none =
                lenient.acquire(RequestContext.builder().principal("alice").build());
        assertThat(none.outcome()).as("no header").isEqualTo(Outcome.REJECTED);
        assertThat(remaining(strict.acquire(items("10"))))
                .as("no garbage took anything")
                .isZero();
        assertThat(remaining(shared.acquire(items("10")))).isZero();
    }

    /** A value no window could hold is a CallTooLargeException (web layers answer 413), and takes nothing. */
    @Test
    void aPermitsValueNoWindowCouldHoldIsACallTooLarge() {
        Rule site = Rule.builder("site").key("user").limits("100/1m").build();
        Rule batch = Rule.builder("batch")
                .key("user")
                .limits("10/1m")
                .cost(2)
                .permits("header:X-Items")
                .build();
        RateLimiter limiter = limiter();
        Guard both = limiter.guard(site, batch);
        assertThatThrownBy(() -> both.acquire(items("6"))).isInstanceOfSatisfying(CallTooLargeException.class, e -> {
            assertThat(e.publicName()).isEqualTo("batch");
            assertThat(e.permits()).isEqualTo(6);
            assertThat(e.most()).isEqualTo(5);
            assertThat(e.describe()).contains("'batch'").contains("at most 5").doesNotContain("alice");
        });
        assertThatThrownBy(() -> both.acquire(items("999999999999999999")))
                .isInstanceOf(CallTooLargeException.class)
                .hasMessageContaining("holds at most 10");
        assertThatThrownBy(() -> limiter.guard(batch).acquire(items("999999999999999999"), 1000))
                .isInstanceOf(CallTooLargeException.class)
                .hasMessageContaining("more permits than a long holds");
        assertThat(remaining(limiter.guard(site).acquire(ALICE)))
                .as("site took nothing either")
                .isEqualTo(99);
        assertThat(remaining(both.acquire(items("5"))))
                .as("the largest call that fits")
                .isEqualTo(98);
    }

    /**
     * A count of 19 digits or more is still a whole number: more than any window holds (a CallTooLargeException, 413
     * on the web), not a missing count refused with 429; leading zeros are the same number, in decimal.
     */
    @Test
    void aPermitsValueTooLargeForALongIsACallTooLargeAndLeadingZerosAreIgnored() {
        Rule site = Rule.builder("site").key("user").limits("100/1m").build();
        Rule batch = Rule.builder("batch")
                .key("user")
                .limits("10/1m")
                .permits("header:X-Items")
                .onMissingKey(MissingKeyPolicy.SHARED)
                .build();
        RateLimiter limiter = limiter();
        Guard both = limiter.guard(site, batch);
        for (String huge : List.of(
                "9223372036854775808",
                "9999999999999999999",
                "99999999999999999999",
                "1" + "0".repeat(400),
                " 00000000000000000000099999999999999999999 ")) {
            assertThatThrownBy(() -> both.acquire(items(huge)))
                    .as("'%s'", huge)
                    .isInstanceOfSatisfying(CallTooLargeException.class, e -> {
                        assertThat(e.publicName()).isEqualTo("batch");
                        assertThat(e.most()).isEqualTo(10);
                        assertThat(e.describe()).contains("at most 10");
                    });
        }
        assertThat(remaining(limiter.guard(site).acquire(ALICE)))
                .as("site took nothing")
                .isEqualTo(99);
        Guard alone = limiter.guard(batch);
        assertThat(remaining(alone.acquire(items("0000000000000000000005"))))
                .as("22 characters: 5")
                .isEqualTo(5);
        assertThat(remaining(alone.acquire(items("00000000000000000000"))))
                .as("zero counts as 1")
                .isEqualTo(4);
        Guard decimal = limiter.guard(Rule.builder("decimal")
                .key("user")
                .limits("10/1m")
                .permits("header:X-Items")
                .build());
        assertThat(remaining(decimal.acquire(items("010"))))
                .as("ten, not octal eight")
                .isZero();
    }

    @Test
    void aPermitsExpressionIsCheckedWhenTheRuleIsBuiltAndRegistered() {
        assertThatThrownBy(() -> Rule.builder("log")
                        .limits("10/1m")
                        .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                        .permits("header:X-Items")
                        .build())
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("rule 'log'")
                .hasMessageContaining("SLIDING_WINDOW_COUNTER");
        assertThatThrownBy(() -> Rule.builder("leaky")
                        .limits("10/1m")
                        .algorithm(Algorithm.LEAKY_BUCKET)
                        .permits("header:X-Items")
                        .build())
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("LEAKY_BUCKET");
        assertThatThrownBy(() -> Rule.builder("sum")
                        .limits("10/1m")
                        .permits("header:A+header:B")
                        .build())
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("'+'");
        Rule unknown = Rule.builder("unknown").limits("10/1m").permits("itemz").build();
        assertThatThrownBy(() -> limiter().guard(unknown))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("rule 'unknown': permits")
                .hasMessageContaining("'itemz'");
        assertThat(Rule.builder("r")
                        .limits("1/1s")
                        .permits(" header:X-Items ")
                        .build()
                        .permits())
                .isEqualTo("header:X-Items");
        assertThat(Rule.builder("r").limits("1/1s").permits(" ").build().permits())
                .isNull();
    }
}
