package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.internal.Charges;
import io.github.ratelimit.internal.config.RateLimitSettings;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a charging rule may be ({@link Rule#charge()}), checked when it is built with a message naming the rule and
 * why; the number a call reports, read alike by every entry point; the URL rules' property.
 */
class ChargeRulesTest {

    private static Rule.Builder completions() {
        return Rule.builder("completions").key("user").limits("1000/1m").charge("#result.usage.totalTokens");
    }

    @Test
    void aChargingRuleKeepsItsSourceThroughCopies() {
        Rule rule = completions().build();
        assertThat(rule.charge()).isEqualTo("#result.usage.totalTokens");
        assertThat(rule.toBuilder().build()).isEqualTo(rule);
        assertThat(rule.withLimits(java.util.List.of(Limit.parse("10/1s"))).charge())
                .isEqualTo(rule.charge());
        assertThat(rule.toString()).contains("charge=#result.usage.totalTokens");
        assertThat(Rule.builder("plain").limits("1/1s").charge("  ").build().charge())
                .isNull();
    }

    @Test
    void algorithmsThatCannotOweTokensAreRefusedByName() {
        assertThatThrownBy(() ->
                        completions().algorithm(Algorithm.SLIDING_WINDOW_LOG).build())
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage("rule 'completions': charge '#result.usage.totalTokens' takes what a call used after it "
                        + "ran, but a SLIDING_WINDOW_LOG rule cannot owe tokens (it counts calls, not tokens). Drop "
                        + "charge, or use algorithm TOKEN_BUCKET, FIXED_WINDOW or SLIDING_WINDOW_COUNTER.");
        assertThatThrownBy(() -> completions().algorithm(Algorithm.LEAKY_BUCKET).build())
                .hasMessageContaining("a LEAKY_BUCKET rule cannot owe tokens (it holds one call at a time)");
    }

    @Test
    void bucketsSlidingCountersAndCalendarQuotasCanCharge() {
        for (Algorithm algorithm :
                new Algorithm[] {Algorithm.TOKEN_BUCKET, Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW_COUNTER}) {
            assertThat(completions().algorithm(algorithm).build().charge())
                    .as("%s", algorithm)
                    .isEqualTo("#result.usage.totalTokens");
        }
        Rule quota = Rule.builder("quota")
                .key("user")
                .limits("100/1h", "1000/1mo@Europe/Berlin")
                .charge("#result.usage.totalTokens")
                .build();
        assertThat(quota.algorithm()).isEqualTo(Algorithm.FIXED_WINDOW);
        assertThat(quota.charge()).isEqualTo("#result.usage.totalTokens");
    }

    @Test
    void whatOnlyOtherRulesHaveIsRefused() {
        assertThatThrownBy(() -> completions().count(Rule.Counted.FAILURES).build())
                .hasMessageContaining("rule 'completions': charge '#result.usage.totalTokens'")
                .hasMessageContaining("count FAILURES gives a call's tokens back by its outcome");
        assertThatThrownBy(() -> completions()
                        .localFirst(new Rule.LocalFirst(10, Duration.ofMillis(100)))
                        .build())
                .hasMessageContaining("a local-first rule settles with the store later");
        assertThatThrownBy(() ->
                        Rule.builder("c").key("user").concurrency(2).charge("x").build())
                .hasMessageContaining("a concurrency rule counts calls in flight, not tokens");
    }

    @Test
    void readsWholeNumbersAndNothingElse() {
        Rule rule = completions().build();
        assertThat(Charges.tokens(rule, 600)).isEqualTo(600);
        assertThat(Charges.tokens(rule, 600L)).isEqualTo(600);
        assertThat(Charges.tokens(rule, " 42 ")).isEqualTo(42);
        assertThat(Charges.tokens(rule, "+7")).isEqualTo(7);
        assertThat(Charges.tokens(rule, "0")).isZero();
        assertThat(Charges.tokens(rule, 12.0)).isEqualTo(12);
        assertThat(Charges.tokens(rule, new java.math.BigInteger("99999999999999999999999")))
                .as("more than a long: the most, which the store's bound then holds back")
                .isEqualTo(Long.MAX_VALUE);
        for (Object garbage :
                new Object[] {null, -1, -1L, "-3", "1.5", 2.5, "abc", "", "NaN", Double.NaN, "0x10", "1".repeat(41)}) {
            assertThat(Charges.tokens(rule, garbage)).as("%s", garbage).isEqualTo(Charges.UNUSABLE);
        }
    }

    @Test
    void urlRulesReadAResponseHeader() {
        assertThat(Charges.responseHeader("response-header:X-Tokens-Used")).isEqualTo("X-Tokens-Used");
        assertThat(Charges.responseHeader("Response-Header: X-Tokens-Used")).isEqualTo("X-Tokens-Used");
        assertThat(Charges.responseHeader("#result.usage")).isNull();
        assertThat(Charges.responseHeader("response-header:")).isNull();
        assertThat(Charges.responseHeader("response-header:X Tokens")).isNull();
        assertThat(parse("response-header:X-Tokens-Used").rules().get(0).rule().charge())
                .isEqualTo("response-header:X-Tokens-Used");
    }

    @ParameterizedTest
    @ValueSource(strings = {"header:X-Tokens", "response-header:", "#result.usage.totalTokens"})
    void aUrlRuleWithAnotherSourceStopsStartUp(String charge) {
        assertThatThrownBy(() -> parse(charge))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("ratelimit.rules[0].charge")
                .hasMessageContaining(charge)
                .hasMessageContaining("response-header:<Name>");
    }

    private static RateLimitSettings parse(String charge) {
        return RateLimitSettings.parse(
                Map.of(
                        "ratelimit.rules[0].name", "completions",
                        "ratelimit.rules[0].paths", "/api/complete",
                        "ratelimit.rules[0].key", "ip",
                        "ratelimit.rules[0].limits", "1000/1m",
                        "ratelimit.rules[0].charge", charge),
                "rules.properties",
                RateLimitSettings.EntryPoint.SERVLET_FILTER);
    }
}
