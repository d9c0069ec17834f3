package io.github.ratelimit.internal.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Limit;
import io.github.ratelimit.MissingKeyPolicy;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimit;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.StoreFailurePolicy;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class RateLimitAnnotationsTest {

    @RateLimit(name = "orders", key = "user", perMinute = 1000)
    static class OrderController {

        @RateLimit(key = "user", perSecond = 5, perMinute = 100)
        public void list() {}

        @RateLimit(key = "ip", perSecond = 1)
        @RateLimit(
                key = "user",
                limits = {"10/5s", "1000/1d"},
                mode = Mode.SOFT,
                maxDelay = "2s",
                cost = 2)
        public void export() {}

        public void search(String q) {}

        public void search(String q, int page) {}

        @RateLimit(
                perSecond = 5,
                burst = 20,
                algorithm = Algorithm.TOKEN_BUCKET,
                onStoreFailure = StoreFailurePolicy.FAIL_CLOSED,
                onMissingKey = MissingKeyPolicy.SKIP,
                mode = Mode.SHADOW)
        public void everything() {}

        @RateLimit(key = "user", perMinute = 100, algorithm = Algorithm.SLIDING_WINDOW_LOG)
        public void exact() {}
    }

    static class Quotas {
        @RateLimit(name = "tokyo", key = "user", limits = "2/1d@Asia/Tokyo")
        public void calendar() {}

        @RateLimit(name = "log", key = "user", limits = "2/1d@Asia/Tokyo", algorithm = Algorithm.SLIDING_WINDOW_LOG)
        public void calendarAndLog() {}
    }

    /** A calendar quota with no algorithm given is a fixed window; another algorithm with one fails. */
    @Test
    void aCalendarQuotaWithNoAlgorithmIsAFixedWindow() throws Exception {
        assertThat(RateLimitAnnotations.rulesFor(method(Quotas.class, "calendar")))
                .singleElement()
                .satisfies(rule -> assertThat(rule.algorithm()).isEqualTo(Algorithm.FIXED_WINDOW));
        assertThat(RateLimitAnnotations.rulesFor(method(OrderController.class, "list"))
                        .get(0)
                        .algorithm())
                .isEqualTo(Algorithm.TOKEN_BUCKET);
        assertThatThrownBy(() -> RateLimitAnnotations.rulesFor(method(Quotas.class, "calendarAndLog")))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("calendarAndLog")
                .hasMessageContaining("which a SLIDING_WINDOW_LOG rule cannot count");
    }

    static class Broken {
        @RateLimit(key = "user")
        public void noLimit() {}

        @RateLimit(perSecond = -5)
        public void negative() {}

        @RateLimit(perSecond = 5, mode = Mode.SOFT, maxDelay = "soon")
        public void badDelay() {}

        @RateLimit(limits = "100/x")
        public void badText() {}

        @RateLimit(perSecond = 5, blockFor = "soon")
        public void badBlock() {}

        @RateLimit(perSecond = 5, blockFor = "2d")
        public void longBlock() {}

        @RateLimit(burst = 10, limits = "5/1s")
        public void burstWithoutWindow() {}

        @RateLimit(perSecond = 5)
        public void overloaded(int a) {}

        @RateLimit(perSecond = 5)
        public void overloaded(String a) {}
    }

    private static java.lang.reflect.Method method(Class<?> type, String name, Class<?>... params) throws Exception {
        return type.getDeclaredMethod(name, params);
    }

    @Test
    void turnsAnAnnotationIntoOneRuleWithAllItsWindows() throws Exception {
        List<Rule> rules = RateLimitAnnotations.rulesFor(method(OrderController.class, "list"));
        assertThat(rules).hasSize(2);
        assertThat(rules.get(0).name()).isEqualTo("orders");
        assertThat(rules.get(0).source()).isEqualTo("@RateLimit on " + OrderController.class.getName());
        Rule own = rules.get(1);
        assertThat(own.name()).isEqualTo("OrderController#list");
        assertThat(own.source()).isEqualTo("@RateLimit on OrderController#list()");
        assertThat(own.key()).isEqualTo("user");
        assertThat(own.limits()).containsExactly(Limit.parse("5/1s"), Limit.parse("100/1m"));
    }

    @RateLimit(perMinute = 10)
    static class UnnamedType {
        @RateLimit(perSecond = 1)
        public void call() {}
    }

    @Test
    void anUnnamedRuleShowsClientsADigestOfItsNameNotItsClassAndMethod() throws Exception {
        List<Rule> rules = RateLimitAnnotations.rulesFor(method(OrderController.class, "export"));
        Rule named = rules.get(0);
        assertThat(named.publicName()).as("a name given is shown").isEqualTo("orders");
        // SHA-256("OrderController#export[0]"), first 6 bytes: the same on every instance, after every restart.
        assertThat(rules.get(1).publicName())
                .isEqualTo(RateLimitAnnotations.publicNameOf("OrderController#export[0]"))
                .matches("rule-[0-9a-f]{12}");
        assertThat(RateLimitAnnotations.publicNameOf("OrderController#list"))
                .as("the docs' example")
                .isEqualTo("rule-063364d4fab4");
        assertThat(rules)
                .extracting(Rule::publicName)
                .doesNotHaveDuplicates()
                .allSatisfy(shown -> assertThat(shown).doesNotContain("Order").doesNotContain("export"));
        List<Rule> ofType = RateLimitAnnotations.rulesFor(method(UnnamedType.class, "call"));
        assertThat(ofType).extracting(Rule::name).containsExactly("UnnamedType", "UnnamedType#call");
        assertThat(ofType)
                .extracting(Rule::publicName)
                .allSatisfy(shown -> assertThat(shown)
                        .matches("rule-[0-9a-f]{12}")
                        .doesNotContain("Unnamed")
                        .doesNotContain("call"))
                .doesNotHaveDuplicates();
        assertThat(RateLimitAnnotations.rulesFor(method(UnnamedType.class, "call")))
                .as("stable")
                .extracting(Rule::publicName)
                .isEqualTo(ofType.stream().map(Rule::publicName).toList());
    }

    @Test
    void aLimiterRefusesTwoRulesThatShowClientsOneName() {
        try (RateLimiter limiter = RateLimiter.builder().build()) {
            limiter.guard(Rule.builder("search").limits("5/1s").build());
            assertThatThrownBy(() -> limiter.guard(Rule.builder("Finder#find")
                            .publicName("search")
                            .source("@RateLimit on Finder#find()")
                            .limits("1/1s")
                            .build()))
                    .isInstanceOf(InvalidRateLimitConfigurationException.class)
                    .hasMessage("@RateLimit on Finder#find(): rule 'Finder#find' would show clients the name 'search', "
                            + "which rule 'search' (rule 'search') shows already, so clients could not tell their "
                            + "headers apart. Give one of them another name.");
            assertThat(limiter.rules()).extracting(Rule::name).containsExactly("search");
        }
    }

    @Test
    void readsRepeatedAnnotationsAsSeveralRules() throws Exception {
        List<Rule> rules = RateLimitAnnotations.rulesFor(method(OrderController.class, "export"));
        assertThat(rules)
                .extracting(Rule::name)
                .containsExactly("orders", "OrderController#export[0]", "OrderController#export[1]");
        Rule soft = rules.get(2);
        assertThat(soft.mode()).isEqualTo(Mode.SOFT);
        assertThat(soft.maxDelay()).isEqualTo(Duration.ofSeconds(2));
        assertThat(soft.cost()).isEqualTo(2);
        assertThat(soft.limits()).containsExactly(Limit.parse("10/5s"), Limit.parse("1000/1d"));
    }

    @Test
    void carriesEveryAttribute() throws Exception {
        Rule rule = RateLimitAnnotations.rulesFor(method(OrderController.class, "everything"))
                .get(1);
        assertThat(rule.limits()).containsExactly(Limit.parse("5/1s burst=20"));
        assertThat(rule.onStoreFailure()).isEqualTo(StoreFailurePolicy.FAIL_CLOSED);
        assertThat(rule.onMissingKey()).isEqualTo(MissingKeyPolicy.SKIP);
        assertThat(rule.mode()).isEqualTo(Mode.SHADOW);
        assertThat(rule.key()).isEqualTo("global");
    }

    @Test
    void carriesTheSlidingAlgorithms() throws Exception {
        Rule rule = RateLimitAnnotations.rulesFor(method(OrderController.class, "exact"))
                .get(1);
        assertThat(rule.algorithm()).isEqualTo(Algorithm.SLIDING_WINDOW_LOG);
        assertThat(rule.limits()).containsExactly(Limit.parse("100/1m"));
    }

    @Test
    void namesOverloadsApart() throws Exception {
        assertThat(RateLimitAnnotations.rulesFor(method(Broken.class, "overloaded", int.class))
                        .get(0)
                        .name())
                .isEqualTo("Broken#overloaded(int)");
        assertThat(RateLimitAnnotations.rulesFor(method(Broken.class, "overloaded", String.class))
                        .get(0)
                        .name())
                .isEqualTo("Broken#overloaded(String)");
    }

    @Test
    void givesUnannotatedMethodsOnlyTheirTypesRules() throws Exception {
        assertThat(RateLimitAnnotations.rulesFor(method(OrderController.class, "search", String.class)))
                .extracting(Rule::name)
                .containsExactly("orders");
    }

    @Test
    void failsWithMessagesThatNameTheMethod() {
        assertThatThrownBy(() -> RateLimitAnnotations.rulesFor(method(Broken.class, "noLimit")))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage("@RateLimit on Broken#noLimit(): no limit is set. Give at least one window, e.g. '5/1s': "
                        + "perSecond, perMinute, perHour, perDay or limits on @RateLimit; limits in properties.");
        assertThatThrownBy(() -> RateLimitAnnotations.rulesFor(method(Broken.class, "negative")))
                .hasMessage(
                        "@RateLimit on Broken#negative(): perSecond = -5 is invalid: limit permits must be between "
                                + "1 and 1000000000000, but was -5. Use a value from 1 to 1000000000000 (0 leaves the window unset).");
        assertThatThrownBy(() -> RateLimitAnnotations.rulesFor(method(Broken.class, "badDelay")))
                .hasMessage("@RateLimit on Broken#badDelay(): maxDelay 'soon' is not a duration. Use <number><unit> "
                        + "with unit ms, s, m, h or d, e.g. '500ms', '1s', '1m'.");
        assertThatThrownBy(() -> RateLimitAnnotations.rulesFor(method(Broken.class, "badBlock")))
                .hasMessage("@RateLimit on Broken#badBlock(): blockFor 'soon' is not a duration. Use <number><unit> "
                        + "with unit ms, s, m, h or d, e.g. '500ms', '1s', '1m'.");
        assertThatThrownBy(() -> RateLimitAnnotations.rulesFor(method(Broken.class, "longBlock")))
                .hasMessage(
                        "@RateLimit on Broken#longBlock(): blockFor 2d is longer than the allowed 1d. Use a block of "
                                + "at most 1d.");
        assertThatThrownBy(() -> RateLimitAnnotations.rulesFor(method(Broken.class, "badText")))
                .hasMessageStartingWith("@RateLimit on Broken#badText(): limits[0]: invalid limit '100/x'");
        assertThatThrownBy(() -> RateLimitAnnotations.rulesFor(method(Broken.class, "burstWithoutWindow")))
                .hasMessage("@RateLimit on Broken#burstWithoutWindow(): burst = 10 needs a perSecond, perMinute, "
                        + "perHour or perDay window to apply to. Set one, or write the burst into limits, e.g. "
                        + "'5/1s burst=20'.");
    }
}
