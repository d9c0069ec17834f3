package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Rule.LocalFirst;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class RuleTest {

    @Test
    void hasDocumentedDefaults() {
        Rule rule = Rule.builder("api").limits("5/1s").build();
        assertThat(rule.key()).isEqualTo("global");
        assertThat(rule.mode()).isEqualTo(Mode.HARD);
        assertThat(rule.cost()).isEqualTo(1);
        assertThat(rule.maxDelay()).isNull();
        assertThat(rule.onStoreFailure()).isEqualTo(StoreFailurePolicy.DEFAULT);
        assertThat(rule.onMissingKey()).isEqualTo(MissingKeyPolicy.REJECT);
        assertThat(rule.algorithm()).isEqualTo(Algorithm.TOKEN_BUCKET);
        assertThat(rule.source()).isEqualTo("rule 'api'");
    }

    @Test
    void rejectsARuleWithoutLimits() {
        assertThatThrownBy(
                        () -> Rule.builder("api").source("ratelimit.rules[2]").build())
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage("ratelimit.rules[2]: no limit is set. Give at least one window, e.g. '5/1s': perSecond, "
                        + "perMinute, perHour, perDay or limits on @RateLimit; limits in properties.");
    }

    @Test
    void namesTheIndexOfABadLimit() {
        assertThatThrownBy(
                        () -> Rule.builder("api").source("ratelimit.rules[2]").limits("5/1s", "100/x"))
                .hasMessage("ratelimit.rules[2]: limits[1]: invalid limit '100/x': period 'x' is not a duration. "
                        + "Expected '<permits>/<period>' with an optional ' burst=<capacity>', e.g. '5/1s', "
                        + "'100/1m' or '5/1s burst=20'.");
    }

    @Test
    void rejectsTwoLimitsOnOneWindow() {
        assertThatThrownBy(() -> Rule.builder("api").limits("5/1s", "10/1s").build())
                .hasMessage("rule 'api': two limits share the window 1s ([5/1s, 10/1s]). Keep one limit per window.");
    }

    @Test
    void capsTheLimitsOfARuleWhereverItIsDeclared() {
        String[] nine = java.util.stream.IntStream.rangeClosed(1, 9)
                .mapToObj(i -> i + "/" + i + "s")
                .toArray(String[]::new);
        assertThat(Rule.builder("api")
                        .limits(java.util.Arrays.copyOf(nine, Rule.MAX_LIMITS))
                        .build()
                        .limits())
                .hasSize(8);
        assertThatThrownBy(() -> Rule.builder("api").limits(nine).build())
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage("rule 'api': 9 limits, more than the 8 a rule may have (each is a window counted on every "
                        + "decision and an item of the rate-limit headers). Keep the windows that matter, e.g. one per "
                        + "second, minute, hour and day.");
        Rule rule = Rule.builder("api").limits("5/1s").build();
        assertThatThrownBy(() -> rule.withLimits(
                        java.util.Arrays.stream(nine).map(Limit::parse).toList()))
                .hasMessageContaining("9 limits, more than the 8 a rule may have");
        // Configuration builds the same rule, so it obeys the same cap, named by its property.
        assertThatThrownBy(() -> io.github.ratelimit.internal.config.RateLimitSettings.parse(
                        java.util.Map.of(
                                "ratelimit.rules[0].name",
                                "api",
                                "ratelimit.rules[0].paths",
                                "/api/**",
                                "ratelimit.rules[0].limits",
                                String.join(", ", nine)),
                        "rules.properties",
                        io.github.ratelimit.internal.config.RateLimitSettings.EntryPoint.SERVLET_FILTER))
                .hasMessageContaining("ratelimit.rules[0]")
                .hasMessageContaining("9 limits, more than the 8");
    }

    @Test
    void rejectsACostNoRequestCouldPay() {
        assertThatThrownBy(() ->
                        Rule.builder("api").limits("5/1s", "100/1m").cost(6).build())
                .hasMessage("rule 'api': cost 6 exceeds the capacity 5 of limit '5/1s', so no request could ever "
                        + "pass. Lower the cost or raise the limit.");
        assertThatThrownBy(() -> Rule.builder("api").limits("5/1s").cost(0).build())
                .hasMessage("rule 'api': cost 0 is not positive. Use a cost of at least 1.");
    }

    @Test
    void requiresAMaxDelayForSoftModeOnly() {
        assertThatThrownBy(
                        () -> Rule.builder("api").limits("5/1s").mode(Mode.SOFT).build())
                .hasMessage("rule 'api': SOFT mode needs a positive maxDelay, but it is unset. Set maxDelay, "
                        + "e.g. '500ms', to bound how long a request may wait.");
        assertThatThrownBy(() -> Rule.builder("api")
                        .limits("5/1s")
                        .maxDelay(Duration.ofSeconds(1))
                        .build())
                .hasMessage("rule 'api': maxDelay 1s is set, but mode is HARD and only SOFT mode waits. "
                        + "Remove maxDelay or use mode SOFT.");
        assertThatThrownBy(() -> Rule.builder("api")
                        .limits("5/1s")
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofHours(2))
                        .build())
                .hasMessage(
                        "rule 'api': maxDelay 2h is longer than the allowed 1h. Use a shorter maxDelay or HARD mode.");
    }

    @Test
    void rejectsABurstOnAFixedWindow() {
        assertThatThrownBy(() -> Rule.builder("api")
                        .limits("5/1s burst=10")
                        .algorithm(Algorithm.FIXED_WINDOW)
                        .build())
                .hasMessage("rule 'api': limit '5/1s burst=10' sets a burst, which a FIXED_WINDOW rule cannot have. "
                        + "Remove the burst or use the TOKEN_BUCKET algorithm.");
    }

    @Test
    void rejectsWhatASlidingWindowCannotDo() {
        assertThatThrownBy(() -> Rule.builder("api")
                        .limits("5/1s burst=10")
                        .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                        .build())
                .hasMessage("rule 'api': limit '5/1s burst=10' sets a burst, which a SLIDING_WINDOW_LOG rule cannot "
                        + "have. Remove the burst or use the TOKEN_BUCKET algorithm.");
        assertThatThrownBy(() -> Rule.builder("api")
                        .limits("5/1s")
                        .algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
                        .localFirst(new LocalFirst(1, Duration.ofMillis(100)))
                        .build())
                .hasMessageStartingWith("rule 'api': local-first is set, but a SLIDING_WINDOW_COUNTER rule decides "
                        + "every call in the store");
    }

    @Test
    void boundsTheIntervalsACounterKeyHoldsDelayedCallsIn() {
        // The configuration: 1/10ms SOFT with a long delay would keep thousands of counters per key.
        assertThatThrownBy(() -> Rule.builder("api")
                        .limits("1/10ms")
                        .algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofSeconds(30))
                        .build())
                .hasMessage("rule 'api': maxDelay 30s spans 3000 intervals of its windows ([1/10ms]), more than the 64 "
                        + "a SLIDING_WINDOW_COUNTER key holds delayed calls in (one count per window and interval). Use "
                        + "a maxDelay of at most 640ms, longer windows, or the TOKEN_BUCKET or SLIDING_WINDOW_LOG "
                        + "algorithm, whose delays cost nothing per interval.");
        // Summed over the windows, rounded up per window.
        assertThatThrownBy(() -> Rule.builder("api")
                        .limits("1/1s", "10/1m")
                        .algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofSeconds(64))
                        .build())
                .hasMessageContaining("maxDelay 64s spans 66 intervals")
                .hasMessageContaining("at most 62s,");
        assertThat(Rule.builder("api")
                        .limits("1/1s", "10/1m")
                        .algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofSeconds(62))
                        .build()
                        .maxDelay())
                .hasSeconds(62);
        assertThat(Rule.builder("api")
                        .limits("1/10ms")
                        .algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofMillis(640))
                        .build()
                        .maxDelay())
                .hasMillis(640);
        // Other algorithms keep no count per interval.
        assertThat(Rule.builder("api")
                        .limits("1/10ms")
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofSeconds(30))
                        .build()
                        .maxDelay())
                .hasSeconds(30);
    }

    @Test
    void boundsTheCallsOneLogKeyHoldsAndSuggestsTheCounter() {
        assertThatThrownBy(() -> Rule.builder("api")
                        .limits("10/1s", "10001/1h")
                        .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                        .build())
                .hasMessage("rule 'api': limit '10001/1h' lets 10001 calls into one window, more than the 10000 a "
                        + "SLIDING_WINDOW_LOG rule keeps per key (the log holds every admitted call's time). Use the "
                        + "SLIDING_WINDOW_COUNTER algorithm, which keeps a few counters per key whatever the limit, "
                        + "or a lower limit.");
        // The bound counts calls: a cost divides the limit.
        assertThat(Rule.builder("api")
                        .limits("20000/1h")
                        .cost(2)
                        .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                        .build()
                        .algorithm())
                .isEqualTo(Algorithm.SLIDING_WINDOW_LOG);
        assertThat(Rule.builder("api")
                        .limits("1000000/1h")
                        .algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
                        .build()
                        .limits())
                .hasSize(1);
    }

    @Test
    void rejectsNamesThatCouldBreakKeysOrHeaders() {
        assertThatThrownBy(() -> Rule.builder("my rule").limits("5/1s").build())
                .hasMessage("rule 'my rule': rule name 'my rule' contains '\\u0020' at index 2. Use printable ASCII "
                        + "without spaces, braces, quotes or backslashes.");
        assertThatThrownBy(() -> Rule.builder("a{b}").limits("5/1s").build())
                .hasMessageContaining("contains '{' at index 1");
        assertThatThrownBy(() -> Rule.builder(" ").limits("5/1s").build())
                .hasMessage("rule ' ': rule name is empty. Give the rule a name.");
        assertThatThrownBy(() -> Rule.builder("x".repeat(201))
                        .source("here")
                        .limits("5/1s")
                        .build())
                .hasMessage("here: rule name is 201 characters long, over the limit of 200. Use a shorter name.");
    }

    @Test
    void boundsTheLocalFirstTokensByTheSmallestCapacity() {
        assertThatThrownBy(() -> Rule.builder("global")
                        .limits("10/1s", "1000/1m")
                        .localFirst(new LocalFirst(20, Duration.ofMillis(100)))
                        .build())
                .hasMessage("rule 'global': local-first maxUnsyncedTokens 20 exceeds the capacity 10 of limit '10/1s'. "
                        + "Keep it a small share of the limit, e.g. 1%.");
        assertThatThrownBy(() -> new LocalFirst(0, Duration.ofMillis(100)))
                .hasMessage("local-first maxUnsyncedTokens must be at least 1, but was 0. Use a small share of the "
                        + "limit, e.g. 1% of it.");
        assertThatThrownBy(() -> new LocalFirst(1, Duration.ofMinutes(2)))
                .hasMessage("local-first maxUnsyncedTime must be between 1ms and 1m, but was PT2M. Use e.g. 100ms.");
    }

    @Test
    void copiesWithOtherLimitsValidatingThem() {
        Rule rule = Rule.builder("api").limits("5/1s").cost(2).build();
        assertThat(rule.withLimits(List.of(Limit.parse("50/1s"))).limits()).containsExactly(Limit.parse("50/1s"));
        assertThatThrownBy(() -> rule.withLimits(List.of(Limit.parse("1/1s"))))
                .hasMessageStartingWith("rule 'api': cost 2 exceeds the capacity 1");
    }

    @Test
    void isAValue() {
        Rule a = Rule.builder("api").key("ip").limits("5/1s").build();
        Rule b = Rule.builder("api").key("ip").limits("5/1s").build();
        assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
        assertThat(a.toBuilder().key("user").build()).isNotEqualTo(a);
        assertThat(a)
                .hasToString(
                        "Rule[api, key=ip, limits=[5/1s], mode=HARD, onStoreFailure=DEFAULT, onMissingKey=REJECT]");
    }
}
