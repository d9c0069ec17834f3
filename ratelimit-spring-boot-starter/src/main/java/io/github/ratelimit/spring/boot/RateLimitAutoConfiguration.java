package io.github.ratelimit.spring.boot;

import io.github.ratelimit.DecisionLog;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.LocalFirst;
import io.github.ratelimit.MapLimitProvider;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.key.KeyResolver;
import io.github.ratelimit.servlet.ProblemDetailsRejectionHandler;
import io.github.ratelimit.servlet.RateLimitFilter;
import io.github.ratelimit.servlet.RejectionHandler;
import io.github.ratelimit.web.Phase;
import io.github.ratelimit.web.UrlRule;
import io.github.ratelimit.store.BucketStore;
import org.aopalliance.intercept.MethodInterceptor;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;
import org.springframework.util.ClassUtils;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Auto-configuration of rate limiting: a {@link RateLimiter} over a local or Redis {@link BucketStore}, the
 * {@code @RateLimit} advisor for any bean, URL rules from {@code ratelimit.rules} enforced by the servlet filter,
 * and the 429 response. Every bean backs off when the application defines its own.
 */
@AutoConfiguration(afterName = {
        // The meter registry its metrics bind to, whichever export creates it.
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        // spring.data.redis.* settings the Redis store reuses.
        "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration"})
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
@Import({StoreConfigurations.RedisStoreConfiguration.class, StoreConfigurations.LocalStoreConfiguration.class,
        RateLimitAutoConfiguration.ServletWebConfiguration.class, RateLimitAutoConfiguration.MetricsConfiguration.class,
        RateLimitAutoConfiguration.ActuatorConfiguration.class, RateLimitAutoConfiguration.HealthConfiguration.class})
public final class RateLimitAutoConfiguration {

    private static final boolean SECURITY_PRESENT = ClassUtils.isPresent(
            "org.springframework.security.core.context.SecurityContextHolder", RateLimitAutoConfiguration.class.getClassLoader());

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    RateLimiter rateLimiter(RateLimitProperties properties, BucketStore store, ConfigurableListableBeanFactory beanFactory,
                            ObjectProvider<LimitProvider> limitProvider, ObjectProvider<RateLimitListener> listeners,
                            ObjectProvider<RateLimiterBuilderCustomizer> customizers) {
        RateLimiter.Builder builder = RateLimiter.builder()
                .store(store)
                .defaultStoreFailurePolicy(properties.getDefaultStoreFailurePolicy())
                .localFallbackShare(properties.getLocalFallbackShare())
                .maxWaiting(properties.getMaxWaiting())
                .clientIpResolver(clientIp(properties))
                .keyResolverFactory(new SpelKeyResolverFactory(beanFactory));
        for (Map.Entry<String, KeyResolver> e : beanFactory.getBeansOfType(KeyResolver.class).entrySet()) {
            builder.keyResolver(e.getKey(), e.getValue());
        }
        LimitProvider provider = limitProvider.getIfAvailable(() -> mapLimitProvider(properties));
        if (provider != null) {
            builder.limitProvider(provider, properties.getLimitCacheTtl());
        }
        listeners.orderedStream().forEach(builder::listener);
        if (properties.isLogShadow()) {
            builder.listener(new DecisionLog());
        }
        customizers.orderedStream().forEach(c -> c.customize(builder));
        return builder.build();
    }

    private static ClientIpResolver clientIp(RateLimitProperties properties) {
        if (properties.isTrustContainerForwarding() && !properties.getTrustedProxies().isEmpty()) {
            throw new InvalidRateLimitConfigurationException("ratelimit.trust-container-forwarding = true and "
                    + "ratelimit.trusted-proxies are both set: the web server's forwarding configuration and the "
                    + "limiter's would both decide which proxies to believe. Keep one: remove ratelimit.trusted-proxies "
                    + "to trust the server's, or set ratelimit.trust-container-forwarding=false.");
        }
        try {
            return ClientIpResolver.builder().trustedProxies(properties.getTrustedProxies())
                    .forwardedHeader(properties.getForwardedHeader())
                    .ipv6PrefixLength(properties.getIpv6PrefixLength()).build();
        } catch (InvalidRateLimitConfigurationException e) {
            throw new InvalidRateLimitConfigurationException("ratelimit.trusted-proxies: " + e.getMessage(), e);
        }
    }

    private static MapLimitProvider mapLimitProvider(RateLimitProperties properties) {
        if (properties.getPlans().isEmpty() && properties.getKeys().isEmpty()) {
            return null;
        }
        MapLimitProvider.Builder b = MapLimitProvider.builder().source("ratelimit");
        properties.getPlans().forEach((plan, limits) -> b.plan(plan, limits.toArray(String[]::new)));
        List<RateLimitProperties.KeyLimit> keys = properties.getKeys();
        for (int i = 0; i < keys.size(); i++) {
            RateLimitProperties.KeyLimit k = keys.get(i);
            if ((k.getPlan() == null) == k.getLimits().isEmpty()) {
                throw new InvalidRateLimitConfigurationException("ratelimit.keys[" + i + "]: give exactly one of plan "
                        + "and limits for key '" + k.getKey() + "'.");
            }
            if (k.getPlan() != null) {
                b.assign(k.getKey(), k.getPlan());
            } else {
                b.limits(k.getKey(), k.getLimits().toArray(String[]::new));
            }
        }
        return b.build();
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static RateLimitMethodInterceptor rateLimitMethodInterceptor(ObjectProvider<RateLimiter> limiter,
                                                                 ObjectProvider<RateLimitProperties> properties) {
        Supplier<String> principal = principal(WebAccess.detect(RateLimitAutoConfiguration.class.getClassLoader()));
        RateLimitProperties p = properties.getObject();
        return new RateLimitMethodInterceptor(new LazyLimiter(limiter), p.getHeaders(),
                WebAccess.detect(RateLimitAutoConfiguration.class.getClassLoader()), principal,
                p.isTrustContainerForwarding());
    }

    private static Supplier<String> principal(WebAccess web) {
        Supplier<String> fromRequest = () -> {
            var request = web.currentRequest();
            if (request == null) {
                return null;
            }
            return request.getUserPrincipal() != null ? request.getUserPrincipal().getName() : request.getRemoteUser();
        };
        if (!SECURITY_PRESENT) {
            return fromRequest;
        }
        return () -> {
            String name = SecurityPrincipal.currentName();
            return name != null ? name : fromRequest.get();
        };
    }

    /**
     * Applies {@code @RateLimit} to any bean. A Spring AOP advisor (as for {@code @Transactional}), so no AspectJ
     * weaver is needed; infrastructure role, so Boot's auto-proxy creator applies it with or without AspectJ.
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static Advisor rateLimitAdvisor(ObjectProvider<RateLimitMethodInterceptor> interceptor) {
        StaticMethodMatcherPointcut pointcut = new StaticMethodMatcherPointcut() {
            @Override
            public boolean matches(Method method, Class<?> targetClass) {
                return RateLimitAnnotationValidator.appliesTo(method, targetClass);
            }
        };
        MethodInterceptor lazy = invocation -> interceptor.getObject().invoke(invocation);
        return new RateLimitAdvisor(pointcut, lazy);
    }

    @Bean
    static RateLimitAnnotationValidator rateLimitAnnotationValidator(ConfigurableListableBeanFactory beanFactory,
                                                                     ObjectProvider<RateLimitMethodInterceptor> interceptor,
                                                                     ObjectProvider<RateLimiter> limiter,
                                                                     ObjectProvider<RateLimitProperties> properties,
                                                                     org.springframework.core.env.Environment environment) {
        return new RateLimitAnnotationValidator(beanFactory, interceptor,
                () -> ForwardedHeadersCheck.check(environment, properties.getObject(), limiter.getObject(), beanFactory));
    }

    /** Micrometer, when the application has a registry. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
    static class MetricsConfiguration {

        @Bean
        @org.springframework.boot.autoconfigure.condition.ConditionalOnBean(io.micrometer.core.instrument.MeterRegistry.class)
        io.github.ratelimit.metrics.MicrometerMetrics rateLimitMetrics(io.micrometer.core.instrument.MeterRegistry registry,
                                                                      BucketStore store) {
            io.github.ratelimit.metrics.MicrometerMetrics metrics = new io.github.ratelimit.metrics.MicrometerMetrics(registry);
            metrics.bindStore(store);
            return metrics;
        }
    }

    /** The ratelimits endpoint and the rejected-keys summary it shows. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"org.springframework.boot.actuate.endpoint.annotation.Endpoint",
            "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint"})
    static class ActuatorConfiguration {

        @Bean
        RejectedKeys rateLimitRejectedKeys() {
            return new RejectedKeys(1000);
        }

        @Bean
        @ConditionalOnMissingBean
        @org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint
        RateLimitsEndpoint rateLimitsEndpoint(RateLimiter limiter, BucketStore store, RejectedKeys rejected) {
            return new RateLimitsEndpoint(limiter, store, rejected);
        }
    }

    /** The Redis store's health. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"org.springframework.boot.health.contributor.HealthIndicator",
            "redis.clients.jedis.UnifiedJedis"})
    static class HealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "rateLimitStoreHealthIndicator")
        org.springframework.boot.health.contributor.HealthIndicator rateLimitStoreHealthIndicator(BucketStore store) {
            return store instanceof io.github.ratelimit.store.JedisBucketStore redis ? new RedisStoreHealthIndicator(redis)
                    : () -> org.springframework.boot.health.contributor.Health.up().withDetail("store", "local").build();
        }
    }

    /** Web: the 429 response, and the filter for URL rules. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    @ConditionalOnClass(name = "jakarta.servlet.Filter")
    static class ServletWebConfiguration {

        @Bean
        @ConditionalOnMissingBean
        RejectionHandler rateLimitRejectionHandler(RateLimitProperties properties) {
            return new ProblemDetailsRejectionHandler(properties.getRejectStatus());
        }

        @Bean
        @ConditionalOnClass(name = "org.springframework.web.servlet.HandlerExceptionResolver")
        RateLimitExceptionResolver rateLimitExceptionResolver(RejectionHandler rejectionHandler) {
            return new RateLimitExceptionResolver(rejectionHandler);
        }

        @Bean
        @ConditionalOnMissingBean(name = "rateLimitFilter")
        FilterRegistrationBean<RateLimitFilter> rateLimitFilter(RateLimitProperties properties, RateLimiter limiter,
                                                                RejectionHandler rejectionHandler) {
            return registration("rateLimitFilter", urlRules(properties, Phase.AFTER_AUTHENTICATION),
                    properties.getFilter().getOrder(), properties, limiter, rejectionHandler);
        }

        /** URL rules that decide before Spring Security: limits on authentication attempts. */
        @Bean
        @ConditionalOnMissingBean(name = "rateLimitBeforeAuthenticationFilter")
        FilterRegistrationBean<RateLimitFilter> rateLimitBeforeAuthenticationFilter(RateLimitProperties properties,
                                                                                    RateLimiter limiter,
                                                                                    RejectionHandler rejectionHandler) {
            return registration("rateLimitBeforeAuthenticationFilter", urlRules(properties, Phase.BEFORE_AUTHENTICATION),
                    properties.getFilter().getBeforeAuthenticationOrder(), properties, limiter, rejectionHandler);
        }

        private static FilterRegistrationBean<RateLimitFilter> registration(String name, List<UrlRule> rules, int order,
                                                                           RateLimitProperties properties,
                                                                           RateLimiter limiter,
                                                                           RejectionHandler rejectionHandler) {
            FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(
                    new RateLimitFilter(limiter, rules, properties.getHeaders(), rejectionHandler, false,
                            properties.isTrustContainerForwarding()));
            registration.setOrder(order);
            registration.setAsyncSupported(true);
            registration.setEnabled(!rules.isEmpty());
            registration.setName(name);
            return registration;
        }

        /** Marks a request whose authentication failed, for rules that count only failed attempts. */
        @Bean
        @ConditionalOnClass(name = "org.springframework.security.authentication.event.AbstractAuthenticationFailureEvent")
        static AuthenticationFailureMarker rateLimitAuthenticationFailureMarker() {
            return new AuthenticationFailureMarker();
        }

        private static List<UrlRule> urlRules(RateLimitProperties properties, Phase phase) {
            List<UrlRule> result = new ArrayList<>();
            List<RateLimitProperties.UrlRuleProperties> rules = properties.getRules();
            for (int i = 0; i < rules.size(); i++) {
                RateLimitProperties.UrlRuleProperties p = rules.get(i);
                if (p.getPhase() != phase) {
                    continue;
                }
                String where = "ratelimit.rules[" + i + "]";
                Rule.Builder b = Rule.builder(p.getName() != null ? p.getName() : "rules[" + i + "]").source(where)
                        .key(p.getKey()).limits(p.getLimits().toArray(String[]::new)).mode(p.getMode())
                        .maxDelay(p.getMaxDelay()).cost(p.getCost()).onStoreFailure(p.getOnStoreFailure())
                        .onMissingKey(p.getOnMissingKey()).algorithm(p.getAlgorithm()).count(p.getCount());
                if (p.getMaxWaiting() != null) {
                    b.maxWaiting(p.getMaxWaiting());
                }
                if (p.getLocalFirstTokens() != null) {
                    try {
                        b.localFirst(new LocalFirst(p.getLocalFirstTokens(), p.getLocalFirstTime()));
                    } catch (InvalidRateLimitConfigurationException e) {
                        throw new InvalidRateLimitConfigurationException(where + ": " + e.getMessage(), e);
                    }
                }
                result.add(UrlRule.of(b.build(), p.getPaths(), new LinkedHashSet<>(p.getMethods()), phase));
            }
            return result;
        }
    }
}
