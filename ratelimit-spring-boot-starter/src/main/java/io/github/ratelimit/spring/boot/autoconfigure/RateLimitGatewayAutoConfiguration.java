package io.github.ratelimit.spring.boot.autoconfigure;

import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.internal.config.RateLimitSettings;
import io.github.ratelimit.spring.boot.internal.web.reactive.GatewayRuleLimiter;
import io.github.ratelimit.spring.boot.internal.web.reactive.ReactiveDecider;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;

/**
 * Spring Cloud Gateway (server WebFlux): a {@code RateLimiter} for the gateway's {@code RequestRateLimiter} filter,
 * backed by this engine, deciding the {@code ratelimit.rules} of {@code phase=gateway} ({@link GatewayRuleLimiter}).
 * It is the gateway's primary {@code RateLimiter}, so the filter uses it by default, also beside the gateway's own
 * {@code RedisRateLimiter} (which the gateway configures wherever reactive Redis is on the class path, as with
 * {@code spring.data.redis.*}); a route names another with {@code rate-limiter: "#{@redisRateLimiter}"}. An
 * application that wants another default defines a bean named {@value #LIMITER_BEAN}, or excludes this class.
 *
 * <p>The library's WebFlux filter keeps deciding URL rules in front of the gateway's handler; a rule is either a URL
 * rule or a gateway rule, so no request is counted twice by one rule.
 */
@AutoConfiguration(
        after = RateLimitReactiveAutoConfiguration.class,
        beforeName = "org.springframework.cloud.gateway.config.GatewayAutoConfiguration")
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "spring.cloud.gateway.server.webflux.enabled", matchIfMissing = true)
@ConditionalOnClass(
        name = {
            "org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter",
            "org.springframework.web.server.WebFilter"
        })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
public final class RateLimitGatewayAutoConfiguration {

    /** The name of the gateway's {@code RateLimiter} bean, for a route's {@code rate-limiter} argument. */
    public static final String LIMITER_BEAN = "rateLimitGatewayLimiter";

    /** The routes' rate limiter, over the rules of {@code phase=gateway}. */
    @Bean(name = LIMITER_BEAN)
    @Primary
    @ConditionalOnMissingBean(name = LIMITER_BEAN)
    GatewayRuleLimiter rateLimitGatewayLimiter(
            RateLimitSettings settings,
            RateLimiter limiter,
            ReactiveDecider decider,
            ObjectProvider<ConfigurationService> configurationService) {
        return new GatewayRuleLimiter(
                limiter,
                settings.gatewayRules(),
                decider,
                settings.headers(),
                settings.trustContainerForwarding(),
                settings.plansFromAuthorities(),
                configurationService.getIfAvailable());
    }

    /** The key {@value GatewayRuleLimiter#GATEWAY_KEY}: what the route's gateway {@code KeyResolver} resolved. */
    @Bean
    RateLimiterBuilderCustomizer rateLimitGatewayKey() {
        return builder -> builder.keyResolver(GatewayRuleLimiter.GATEWAY_KEY, GatewayRuleLimiter.gatewayKey());
    }

    /** Lets the limiter read the request for every other key: the exchange in the Reactor context. */
    @Bean
    @ConditionalOnMissingBean
    ServerWebExchangeContextFilter rateLimitExchangeContextFilter() {
        return new ServerWebExchangeContextFilter();
    }
}
