package io.github.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.spring.boot.StarterAutoConfigurations;
import io.github.ratelimit.spring.boot.autoconfigure.RateLimitGatewayAutoConfiguration;
import io.github.ratelimit.spring.boot.internal.web.reactive.GatewayRuleLimiter;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import reactor.core.publisher.Mono;

/**
 * When the gateway's rate limiter is configured: a reactive application with Spring Cloud Gateway on the class path,
 * the library and the gateway both on; and what it does without a request in its context.
 */
@Tag("gateway")
class GatewayAutoConfigurationTest {

    private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withConfiguration(StarterAutoConfigurations.of())
            .withPropertyValues(
                    "ratelimit.store=local",
                    "ratelimit.rules[0].name=hello",
                    "ratelimit.rules[0].phase=gateway",
                    "ratelimit.rules[0].key=gateway-key",
                    "ratelimit.rules[0].limits=2/1m");

    @Test
    void aReactiveApplicationWithTheGatewayGetsTheLimiterAndTheExchangeInTheContext() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(GatewayRuleLimiter.class);
            assertThat(context.getBean(RateLimiter.class))
                    .isSameAs(context.getBean(RateLimitGatewayAutoConfiguration.LIMITER_BEAN));
            assertThat(context).hasSingleBean(ServerWebExchangeContextFilter.class);
        });
    }

    @Test
    void withoutTheGatewayNothingIsConfigured() {
        runner.withClassLoader(new FilteredClassLoader(AbstractRateLimiter.class))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(RateLimitGatewayAutoConfiguration.LIMITER_BEAN);
                    assertThat(context).doesNotHaveBean(ServerWebExchangeContextFilter.class);
                });
    }

    @Test
    void aServletApplicationGetsNone() {
        new WebApplicationContextRunner()
                .withConfiguration(StarterAutoConfigurations.of())
                .withPropertyValues("ratelimit.store=local")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(RateLimitGatewayAutoConfiguration.LIMITER_BEAN);
                });
    }

    @Test
    void turningOffTheLibraryOrTheGatewayTurnsItOff() {
        runner.withPropertyValues("ratelimit.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(RateLimitGatewayAutoConfiguration.LIMITER_BEAN));
        runner.withPropertyValues("spring.cloud.gateway.server.webflux.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(RateLimitGatewayAutoConfiguration.LIMITER_BEAN));
    }

    @Test
    void anApplicationsOwnBeanOfTheNameReplacesIt() {
        runner.withBean(RateLimitGatewayAutoConfiguration.LIMITER_BEAN, String.class, () -> "the application's")
                .run(context -> {
                    assertThat(context).doesNotHaveBean(GatewayRuleLimiter.class);
                    assertThat(context.getBean(RateLimitGatewayAutoConfiguration.LIMITER_BEAN))
                            .isEqualTo("the application's");
                });
    }

    /** No request in the Reactor context (no ServerWebExchangeContextFilter): the gateway's key alone resolves. */
    @Test
    void withoutTheRequestTheGatewaysKeyStillDecides() {
        runner.run(context -> {
            GatewayRuleLimiter limiter = context.getBean(GatewayRuleLimiter.class);
            assertThat(limiter.isAllowed("hello", "alice").block().isAllowed()).isTrue();
            RateLimiter.Response second = limiter.isAllowed("hello", "alice").block();
            assertThat(second.isAllowed()).isTrue();
            assertThat(second.getHeaders()).containsEntry("X-RateLimit-Remaining", "0");
            RateLimiter.Response third = limiter.isAllowed("hello", "alice").block();
            assertThat(third.isAllowed()).isFalse();
            assertThat(third.getHeaders()).containsKey("Retry-After").containsKey("RateLimit");
            assertThat(limiter.isAllowed("hello", "bob").block().isAllowed()).isTrue();
        });
    }

    @Test
    void aRouteNamingNoRuleOfTheGatewayStopsWithTheRouteAndTheRulesNamed() {
        runner.withInitializer(context -> GatewayArguments.registerBinding((GenericApplicationContext) context))
                .run(context -> {
                    GatewayRuleLimiter limiter = context.getBean(GatewayRuleLimiter.class);
                    GatewayArguments.publish(limiter, "greeting", Map.of("ratelimit.rules", "hello"));
                    assertThat(limiter.getConfig().get("greeting").getRules()).containsExactly("hello");
                    assertThat(limiter.isAllowed("greeting", "carol").block().isAllowed())
                            .isTrue();
                    // Lambdas capture the limiter as an Object, and the answer as a Mono: no method of this class names
                    // a
                    // gateway type, so the tests without the gateway on the class path can still read this class.
                    Object target = limiter;
                    assertThatThrownBy(() -> GatewayArguments.publish(
                                    target, "orders", Map.of("ratelimit.rules", "hello, nope")))
                            .isInstanceOf(InvalidRateLimitConfigurationException.class)
                            .hasMessageContaining("route 'orders'")
                            .hasMessageContaining("ratelimit.rules")
                            .hasMessageContaining("'nope' is no rule of phase gateway (those are [hello])");
                    // A route without arguments decides the rule named as the route; there is none for "orders".
                    Mono<?> unknown = limiter.isAllowed("other", "alice");
                    assertThatThrownBy(unknown::block)
                            .isInstanceOf(InvalidRateLimitConfigurationException.class)
                            .hasMessageContaining("route 'other'")
                            .hasMessageContaining("give a rule the route's id as its name");
                });
    }
}
