package io.github.ratelimit.internal.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.config.RateLimitSettings.EntryPoint;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Rules of {@code phase=gateway} are decided by Spring Cloud Gateway's routes only: they have no paths, are kept apart
 * from the URL rules (so no URL filter decides them a second time), and what the gateway cannot support stops the
 * start-up with the property named.
 */
class GatewayPhaseTest {

    private static RateLimitSettings boot(Map<String, String> properties) {
        return RateLimitSettings.parse(properties, null, EntryPoint.SPRING_BOOT);
    }

    @Test
    void aGatewayRuleIsNoUrlRule() {
        RateLimitSettings settings = boot(Map.of(
                "ratelimit.rules[0].name", "hello",
                "ratelimit.rules[0].phase", "gateway",
                "ratelimit.rules[0].key", "ip",
                "ratelimit.rules[0].limits", "5/1s, 100/1m",
                "ratelimit.rules[1].name", "api",
                "ratelimit.rules[1].paths", "/api/**",
                "ratelimit.rules[1].limits", "10/1s"));

        assertThat(settings.gatewayRules()).extracting(Rule::name).containsExactly("hello");
        assertThat(settings.gatewayRules().get(0).limits()).hasSize(2);
        assertThat(settings.gatewayRules().get(0).key()).isEqualTo("ip");
        assertThat(settings.rules()).extracting(u -> u.rule().name()).containsExactly("api");
    }

    @Test
    void aGatewayRuleSharesTheNamesOfUrlRules() {
        assertThatThrownBy(() -> boot(Map.of(
                        "ratelimit.rules[0].name", "hello",
                        "ratelimit.rules[0].phase", "gateway",
                        "ratelimit.rules[0].limits", "5/1s",
                        "ratelimit.rules[1].name", "hello",
                        "ratelimit.rules[1].paths", "/api/**",
                        "ratelimit.rules[1].limits", "10/1s")))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("ratelimit.rules[1].name");
    }

    @Test
    void pathsOnAGatewayRuleStopTheStart() {
        assertThatThrownBy(() -> boot(Map.of(
                        "ratelimit.rules[0].phase", "gateway",
                        "ratelimit.rules[0].paths", "/api/**",
                        "ratelimit.rules[0].limits", "5/1s")))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("ratelimit.rules[0].paths")
                .hasMessageContaining("'/api/**'")
                .hasMessageContaining("phase gateway");
        assertThatThrownBy(() -> boot(Map.of(
                        "ratelimit.rules[0].phase", "gateway",
                        "ratelimit.rules[0].methods", "GET",
                        "ratelimit.rules[0].limits", "5/1s")))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("ratelimit.rules[0].methods");
    }

    @Test
    void whatNeedsTheEndOfARequestStopsTheStart() {
        assertThatThrownBy(() -> boot(Map.of(
                        "ratelimit.rules[0].phase", "gateway",
                        "ratelimit.rules[0].count", "failures",
                        "ratelimit.rules[0].limits", "5/1s")))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("ratelimit.rules[0].count")
                .hasMessageContaining("'failures'")
                .hasMessageContaining("never told");
        assertThatThrownBy(() ->
                        boot(Map.of("ratelimit.rules[0].phase", "gateway", "ratelimit.rules[0].concurrency", "2")))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("ratelimit.rules[0].concurrency");
        // A charge is read from the response, which the gateway's RateLimiter never sees.
        assertThatThrownBy(() -> boot(Map.of(
                        "ratelimit.rules[0].phase", "gateway",
                        "ratelimit.rules[0].limits", "1000/1m",
                        "ratelimit.rules[0].charge", "response-header:X-Tokens-Used")))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("ratelimit.rules[0].charge")
                .hasMessageContaining("'response-header:X-Tokens-Used'")
                .hasMessageContaining("never told");
    }

    @Test
    void theServletFilterRefusesTheGatewayPhase() {
        assertThatThrownBy(() -> RateLimitSettings.parse(
                        Map.of(
                                "ratelimit.rules[0].paths", "/api/**",
                                "ratelimit.rules[0].limits", "5/1s",
                                "ratelimit.rules[1].phase", "Gateway",
                                "ratelimit.rules[1].limits", "5/1s"),
                        "/WEB-INF/ratelimit.properties",
                        EntryPoint.SERVLET_FILTER))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("/WEB-INF/ratelimit.properties: ratelimit.rules[1].phase")
                .hasMessageContaining("'Gateway'")
                .hasMessageContaining("Spring Cloud Gateway");
    }
}
