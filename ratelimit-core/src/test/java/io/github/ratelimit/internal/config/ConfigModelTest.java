package io.github.ratelimit.internal.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.config.RateLimitConfig;
import io.github.ratelimit.internal.config.RateLimitSettings.EntryPoint;
import io.github.ratelimit.internal.config.RateLimitSettings.Property;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The configuration model is the one declaration of every property: the catalog reads names, defaults and values off
 * it, and the rules file's text fills the same model that Spring Boot binds, so the same settings come out.
 */
class ConfigModelTest {

    private static Property property(String name) {
        return RateLimitSettings.properties().stream()
                .filter(p -> p.name().equals(name))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void theCatalogIsReadOffTheModel() {
        assertThat(property("ratelimit.redis.command-timeout").defaultValue()).isEqualTo("50ms");
        assertThat(property("ratelimit.local.maximum-keys").defaultValue()).isEqualTo("100000");
        assertThat(property("ratelimit.local-fallback-share").defaultValue()).isEqualTo("1");
        assertThat(property("ratelimit.headers").defaultValue()).isEqualTo("x-ratelimit, ietf-draft-09");
        assertThat(property("ratelimit.shadow").values()).containsExactly("true", "false");
        assertThat(property("ratelimit.rules[i].name").defaultValue()).isEqualTo("rules[i]");
        assertThat(property("ratelimit.rules[i].on-missing-key").values()).containsExactly("reject", "skip", "shared");
        assertThat(property("ratelimit.plans.<plan>").defaultValue()).isNull();
        assertThat(property("ratelimit.key-resolvers.<name>").entryPoint()).isEqualTo(EntryPoint.SERVLET_FILTER);
        assertThat(property("ratelimit.filter.order").entryPoint()).isEqualTo(EntryPoint.SPRING_BOOT);
        assertThat(RateLimitSettings.properties())
                .extracting(Property::name)
                .doesNotHaveDuplicates()
                .allMatch(n -> n.startsWith("ratelimit.") && n.equals(n.toLowerCase(Locale.ROOT)));
    }

    @Test
    void textFillsTheModelAsABinderWouldSoTheSettingsAreTheSame() {
        RateLimitSettings fromText = RateLimitSettings.parse(
                Map.of(
                        "ratelimit.redis.command-timeout", "75ms",
                        "ratelimit.plans.pro[0]", "10/1m",
                        "ratelimit.plans.pro[1]", "100/1h",
                        "ratelimit.keys[0].key", "user:bob",
                        "ratelimit.keys[0].plan", "pro",
                        "ratelimit.rules[0].name", "api",
                        "ratelimit.rules[0].paths", "/api/**",
                        "ratelimit.rules[0].limits[0]", "3/1m",
                        "ratelimit.rules[0].limits[1]", "100/1h",
                        "ratelimit.rules[0].mode", "SHADOW"),
                null,
                EntryPoint.SERVLET_FILTER);

        RateLimitConfig config = new RateLimitConfig();
        config.getRedis().setCommandTimeout(Duration.ofMillis(75));
        config.getPlans().put("pro", List.of("10/1m", "100/1h"));
        RateLimitConfig.KeyEntry key = new RateLimitConfig.KeyEntry();
        key.setKey("user:bob");
        key.setPlan("pro");
        config.getKeys().add(key);
        RateLimitConfig.UrlRuleEntry rule = new RateLimitConfig.UrlRuleEntry();
        rule.setName("api");
        rule.setPaths(List.of("/api/**"));
        rule.setLimits(List.of("3/1m", "100/1h"));
        rule.setMode("shadow");
        config.getRules().add(rule);
        RateLimitSettings fromModel = RateLimitSettings.of(config, null, EntryPoint.SERVLET_FILTER);

        assertThat(fromText.rules()).isEqualTo(fromModel.rules());
        assertThat(fromText.redis()).isEqualTo(fromModel.redis());
        assertThat(fromText.limitProvider().plans())
                .isEqualTo(fromModel.limitProvider().plans());
    }

    @Test
    void aRuleIndexLeftOutKeepsTheOthersIndicesInTheirNamesAndMessages() {
        RateLimitSettings settings = RateLimitSettings.parse(
                Map.of("ratelimit.rules[2].paths", "/a", "ratelimit.rules[2].limits", "1/1s"),
                null,
                EntryPoint.SERVLET_FILTER);
        assertThat(settings.rules())
                .singleElement()
                .satisfies(r -> assertThat(r.rule().name()).isEqualTo("rules[2]"));
        assertThatThrownBy(() -> RateLimitSettings.parse(
                        Map.of("ratelimit.rules[4].paths", "/a"), "rules.properties", EntryPoint.SERVLET_FILTER))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageStartingWith("rules.properties: ratelimit.rules[4].limits: not set.");
        // An empty value leaves the default, and the entry it names is still checked.
        assertThatThrownBy(() ->
                        RateLimitSettings.parse(Map.of("ratelimit.keys[0].key", ""), null, EntryPoint.SERVLET_FILTER))
                .hasMessageStartingWith("ratelimit.keys[0].key: not set.");
    }

    @Test
    void valuesOfTheWrongKindGetTheSameMessageFromTextAndFromAnotherFacesConversion() {
        assertThatThrownBy(() -> RateLimitSettings.checkText("ratelimit.redis.pool-size", "many"))
                .hasMessage("ratelimit.redis.pool-size: 'many' is not a whole number. Write digits, e.g. 1.");
        assertThatThrownBy(() -> RateLimitSettings.parse(
                        Map.of("ratelimit.redis.pool-size", "many"), null, EntryPoint.SERVLET_FILTER))
                .hasMessage("ratelimit.redis.pool-size: 'many' is not a whole number. Write digits, e.g. 1.");
        assertThatThrownBy(() -> RateLimitSettings.checkText("ratelimit.rules[3].local-first-time", "later"))
                .hasMessageStartingWith("ratelimit.rules[3].local-first-time: 'later' is not a duration.");
        // A value of the property's kind passes: the other face's own rules refused it, and its message stands.
        RateLimitSettings.checkText("ratelimit.redis.pool-size", "1_000");
    }
}
