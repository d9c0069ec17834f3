package io.github.ratelimit.spring.boot.autoconfigure;

import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.internal.config.RateLimitSettings;
import io.github.ratelimit.internal.web.Phase;
import io.github.ratelimit.spring.boot.internal.method.SpelKeyResolverFactory;
import io.github.ratelimit.spring.boot.internal.web.reactive.RateLimitWebExceptionHandler;
import io.github.ratelimit.spring.boot.internal.web.reactive.RateLimitWebFilter;
import io.github.ratelimit.spring.boot.internal.web.reactive.ReactiveDecider;
import io.github.ratelimit.spring.boot.internal.web.reactive.ReactiveHandlerRules;
import io.github.ratelimit.spring.boot.internal.web.reactive.ReactiveMethodRateLimit;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.LocalBucketStore;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Project Reactor: what decides reactive calls without blocking, for {@code @RateLimit} methods returning a
 * {@code Mono} or a {@code Flux} in any application; and on Spring WebFlux, URL rules and handler methods' rules in
 * one decision per request, by a {@code WebFilter} right after Spring Security's, and the 429 response.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnClass(name = "reactor.core.publisher.Mono")
public final class RateLimitReactiveAutoConfiguration {

    /**
     * Decisions that may wait on I/O run on a scheduler of their own: those of a Redis store, or of a
     * {@link LimitProvider} bean (the limit store's Redis, an application's database). In memory, none.
     */
    @Bean(name = ReactiveMethodRateLimit.DECIDER_BEAN, destroyMethod = "close")
    ReactiveDecider rateLimitReactiveDecider(
            RateLimitSettings settings, BucketStore store, ObjectProvider<LimitProvider> providers) {
        boolean inMemory = store instanceof LocalBucketStore
                && providers.stream().findAny().isEmpty();
        return new ReactiveDecider(inMemory ? 0 : settings.redis().poolSize());
    }

    /** Spring WebFlux: the filters and the 429 response. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
    @ConditionalOnClass(name = "org.springframework.web.server.WebFilter")
    static class WebFluxConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "rateLimitWebExceptionHandler")
        RateLimitWebExceptionHandler rateLimitWebExceptionHandler(RateLimitSettings settings) {
            return new RateLimitWebExceptionHandler(settings.rejectStatus(), settings.headers());
        }

        /** URL rules after authentication, and the rules of the handler method that will serve the request. */
        @Bean
        @ConditionalOnMissingBean(name = "rateLimitWebFilter")
        RateLimitWebFilter rateLimitWebFilter(
                RateLimitSettings settings,
                RateLimiter limiter,
                ReactiveDecider decider,
                ConfigurableListableBeanFactory beanFactory) {
            SpelKeyResolverFactory spel =
                    SpelKeyResolverFactory.checkedForUrlRules(settings.rules(Phase.AFTER_AUTHENTICATION), beanFactory);
            ReactiveHandlerRules handlerRules = new ReactiveHandlerRules(beanFactory, spel::readsInvocation);
            return new RateLimitWebFilter(
                    limiter,
                    settings.rules(Phase.AFTER_AUTHENTICATION),
                    handlerRules,
                    decider,
                    settings.headers(),
                    settings.trustContainerForwarding(),
                    settings.filterOrder(),
                    settings.rejectStatus(),
                    settings.plansFromAuthorities());
        }

        /** URL rules that decide before Spring Security: limits on authentication attempts. */
        @Bean
        @ConditionalOnMissingBean(name = "rateLimitBeforeAuthenticationWebFilter")
        RateLimitWebFilter rateLimitBeforeAuthenticationWebFilter(
                RateLimitSettings settings,
                RateLimiter limiter,
                ReactiveDecider decider,
                ConfigurableListableBeanFactory beanFactory) {
            SpelKeyResolverFactory.checkedForUrlRules(settings.rules(Phase.BEFORE_AUTHENTICATION), beanFactory);
            return new RateLimitWebFilter(
                    limiter,
                    settings.rules(Phase.BEFORE_AUTHENTICATION),
                    null,
                    decider,
                    settings.headers(),
                    settings.trustContainerForwarding(),
                    settings.beforeAuthenticationOrder(),
                    settings.rejectStatus(),
                    settings.plansFromAuthorities());
        }
    }
}
