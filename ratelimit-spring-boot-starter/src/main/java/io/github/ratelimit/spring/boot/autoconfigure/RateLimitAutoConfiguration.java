package io.github.ratelimit.spring.boot.autoconfigure;

import io.github.ratelimit.spring.boot.actuate.RateLimitKeysEndpoint;
import io.github.ratelimit.spring.boot.actuate.RateLimitsEndpoint;
import io.github.ratelimit.spring.boot.actuate.RateLimitsEndpointProperties;
import io.github.ratelimit.spring.boot.actuate.RateLimitsEndpointWebExtension;
import io.github.ratelimit.spring.boot.actuate.RedisStoreHealthIndicator;
import io.github.ratelimit.spring.boot.actuate.RejectedKeys;
import io.github.ratelimit.spring.boot.method.LazyLimiter;
import io.github.ratelimit.spring.boot.method.RateLimitAdvisor;
import io.github.ratelimit.spring.boot.method.RateLimitAnnotationValidator;
import io.github.ratelimit.spring.boot.method.RateLimitMethodInterceptor;
import io.github.ratelimit.spring.boot.method.SecurityPrincipal;
import io.github.ratelimit.spring.boot.method.SpelKeyResolverFactory;
import io.github.ratelimit.spring.boot.web.reactive.RateLimitWebExceptionHandler;
import io.github.ratelimit.spring.boot.web.reactive.RateLimitWebFilter;
import io.github.ratelimit.spring.boot.web.reactive.ReactiveDecider;
import io.github.ratelimit.spring.boot.web.reactive.ReactiveHandlerRules;
import io.github.ratelimit.spring.boot.web.reactive.ReactiveMethodRateLimit;
import io.github.ratelimit.spring.boot.web.servlet.AuthenticationFailureMarker;
import io.github.ratelimit.spring.boot.web.servlet.MvcHandlerRulesFactory;
import io.github.ratelimit.spring.boot.web.servlet.RateLimitExceptionResolver;
import io.github.ratelimit.spring.boot.web.servlet.WebAccess;
import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Waiter;
import io.github.ratelimit.config.RateLimitSettings;
import io.github.ratelimit.key.KeyResolver;
import io.github.ratelimit.servlet.ClientConnections;
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
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Auto-configuration of rate limiting: a {@link RateLimiter} over a local or Redis {@link BucketStore}, the
 * {@code @RateLimit} advisor for any bean, URL rules from {@code ratelimit.rules} enforced by the servlet filter on
 * Spring MVC or by the {@code WebFilter} on Spring WebFlux, and the 429 response. Every bean backs off when the
 * application defines its own.
 */
@AutoConfiguration(afterName = {
        // The meter registry its metrics bind to, whichever export creates it.
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        // spring.data.redis.* settings the Redis store reuses.
        "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration"})
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
@Import({RateLimitAutoConfiguration.ServletWebConfiguration.class, RateLimitAutoConfiguration.MetricsConfiguration.class,
        RateLimitAutoConfiguration.ActuatorConfiguration.class, RateLimitAutoConfiguration.HealthConfiguration.class,
        RateLimitAutoConfiguration.LimitStoreConfiguration.class, RateLimitAutoConfiguration.ReactorConfiguration.class,
        RateLimitAutoConfiguration.ReactiveWebConfiguration.class, RateLimitAdminConfiguration.class})
public final class RateLimitAutoConfiguration {

    private static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono",
            RateLimitAutoConfiguration.class.getClassLoader());

    private static final boolean SECURITY_PRESENT = ClassUtils.isPresent(
            "org.springframework.security.core.context.SecurityContextHolder", RateLimitAutoConfiguration.class.getClassLoader());

    /**
     * The {@code ratelimit.*} settings, read by the model the servlet filter uses too: Spring binds the properties,
     * {@link RateLimitSettings} applies the defaults, checks every value and refuses unknown properties (with the
     * nearest known name), so a typo stops start-up here as it does in a rules file.
     */
    @Bean
    @ConditionalOnMissingBean
    RateLimitSettings rateLimitSettings(RateLimitProperties properties, Environment environment) {
        RateLimitSettings.checkNames(propertyNames(environment), RateLimitSettings.Face.SPRING_BOOT);
        return RateLimitSettings.parse(PropertiesFlattener.flatten(properties), null, RateLimitSettings.Face.SPRING_BOOT);
    }

    /** Every {@code ratelimit.*} name in the environment, canonical: what a user wrote, typos included. */
    static List<String> propertyNames(Environment environment) {
        ConfigurationPropertyName root = ConfigurationPropertyName.of("ratelimit");
        List<String> names = new ArrayList<>();
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (source instanceof IterableConfigurationPropertySource iterable) {
                iterable.stream().filter(root::isAncestorOf).map(ConfigurationPropertyName::toString).forEach(names::add);
            }
        }
        return names;
    }

    /**
     * The name of the bean that, when the application defines one, is the time source of the stores and the
     * limiter: a {@link TimeMeter} (Bucket4j's clock type). Tests define a manual clock under this name; when it is a
     * {@link Waiter} too (as the core's test clock is), SOFT delays wait on it. Without it, local buckets use this
     * JVM's wall clock and Redis buckets the Redis server's clock, which every instance shares.
     */
    public static final String TIME_METER_BEAN = "rateLimitTimeMeter";

    private static TimeMeter clock(ConfigurableListableBeanFactory beanFactory) {
        return beanFactory.containsBean(TIME_METER_BEAN) ? beanFactory.getBean(TIME_METER_BEAN, TimeMeter.class) : null;
    }

    /**
     * The store: Redis when {@code ratelimit.redis.*} names a server, or else {@code spring.data.redis.*} does
     * (unless {@code ratelimit.store=local}); this JVM otherwise. Its clock is the {@value #TIME_METER_BEAN} bean
     * when there is one.
     */
    @Bean
    @ConditionalOnMissingBean
    BucketStore rateLimitBucketStore(RateLimitSettings settings, Environment environment,
                                     ConfigurableListableBeanFactory beanFactory) {
        TimeMeter clock = clock(beanFactory);
        if (settings.store() == RateLimitSettings.StoreKind.LOCAL) {
            return settings.createStore(clock);
        }
        if (settings.redis().hasServer()) {
            JedisPresence.require(beanFactory.getBeanClassLoader());
            return settings.createStore(clock);
        }
        boolean springData = JedisPresence.springDataRedisConfigured(environment);
        if (springData) {
            JedisPresence.require(beanFactory.getBeanClassLoader());
            return JedisStores.fromSpringDataRedis(settings.redis(), environment, clock);
        }
        if (settings.store() == RateLimitSettings.StoreKind.REDIS) {
            throw new InvalidRateLimitConfigurationException("ratelimit.store", "redis", "'redis' needs a Redis server, "
                    + "but none of ratelimit.redis.url, ratelimit.redis.sentinel.master, ratelimit.redis.cluster.nodes "
                    + "or spring.data.redis.* is set", "Set one of them, e.g. ratelimit.redis.url=redis://localhost:6379.");
        }
        return settings.createStore(clock);
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    RateLimiter rateLimiter(RateLimitSettings settings, BucketStore store, ConfigurableListableBeanFactory beanFactory,
                            ObjectProvider<LimitProvider> limitProvider, ObjectProvider<RateLimitListener> listeners,
                            ObjectProvider<RateLimiterBuilderCustomizer> customizers) {
        RateLimiter.Builder builder = settings.applyTo(RateLimiter.builder())
                .store(store)
                .keyResolverFactory(new SpelKeyResolverFactory(beanFactory));
        TimeMeter clock = clock(beanFactory);
        if (clock != null) {
            builder.timeMeter(clock);
            if (clock instanceof Waiter waiter) {
                builder.waiter(waiter);
            }
        }
        for (Map.Entry<String, KeyResolver> e : beanFactory.getBeansOfType(KeyResolver.class).entrySet()) {
            builder.keyResolver(e.getKey(), e.getValue());
        }
        // A LimitProvider bean (plans from a database) replaces ratelimit.plans and ratelimit.keys.
        limitProvider.ifAvailable(provider -> builder.limitProvider(provider, settings.limitCacheTtl()));
        listeners.orderedStream().forEach(builder::listener);
        customizers.orderedStream().forEach(c -> c.customize(builder));
        return builder.build();
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static RateLimitMethodInterceptor rateLimitMethodInterceptor(ObjectProvider<RateLimiter> limiter,
                                                                 ObjectProvider<RateLimitSettings> settings,
                                                                 ConfigurableListableBeanFactory beanFactory) {
        Supplier<String> principal = principal(WebAccess.detect(RateLimitAutoConfiguration.class.getClassLoader()));
        ReactiveMethodRateLimit reactive = REACTOR_PRESENT ? ReactiveMethodRateLimit.create(beanFactory, settings::getObject)
                : null;
        return new RateLimitMethodInterceptor(new LazyLimiter(limiter), settings::getObject,
                WebAccess.detect(RateLimitAutoConfiguration.class.getClassLoader()), principal, reactive);
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
                                                                     ObjectProvider<RateLimitSettings> settings,
                                                                     Environment environment) {
        return new RateLimitAnnotationValidator(beanFactory, interceptor, () -> {
            RateLimitSettings s = settings.getObject();
            ForwardedHeadersCheck.check(environment, s, limiter.getObject(), beanFactory);
            // Every rule is known now (URL rules, and the annotations just compiled): keys must name real ones.
            // The limit store answers from ratelimit.keys for keys without an entry: those are checked all the same.
            boolean ownProvider = java.util.Arrays.stream(beanFactory.getBeanNamesForType(LimitProvider.class))
                    .anyMatch(name -> !name.equals("rateLimitLimitStore"));
            if (s.limitProvider() != null && !ownProvider) {
                List<io.github.ratelimit.Rule> declared = limiter.getObject().rules();
                s.limitProvider().checkRules(declared);
                warnAboutKeysNoRuleCounts(s.limitProvider().keysNoRuleCounts(declared));
            }
        });
    }

    static void warnAboutKeysNoRuleCounts(List<String> keys) {
        if (!keys.isEmpty()) {
            System.getLogger(RateLimitAutoConfiguration.class.getName()).log(System.Logger.Level.WARNING,
                    "No rate-limit rule counts by these keys' expressions, so their limits apply to none (yet): " + keys
                    + ". A key is '<key expression of a rule>:<value>', e.g. user:241531; check for a typo.");
        }
    }

    /** Micrometer, when the application has a registry. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
    static class MetricsConfiguration {

        /** The metrics listener, or one that records nothing with {@code ratelimit.metrics=false}. */
        @Bean
        @org.springframework.boot.autoconfigure.condition.ConditionalOnBean(io.micrometer.core.instrument.MeterRegistry.class)
        RateLimitListener rateLimitMetrics(io.micrometer.core.instrument.MeterRegistry registry, BucketStore store,
                                           RateLimitSettings settings, ObjectProvider<LimitProvider> limitProviders) {
            if (!settings.metrics()) {
                return decision -> { };
            }
            io.github.ratelimit.metrics.MicrometerMetrics metrics = new io.github.ratelimit.metrics.MicrometerMetrics(registry);
            metrics.bindStore(store);
            limitProviders.orderedStream().forEach(metrics::bindLimitStore);
            return metrics;
        }
    }

    /** The ratelimits endpoint and the rejected-keys summary it shows. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"org.springframework.boot.actuate.endpoint.annotation.Endpoint",
            "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint"})
    @EnableConfigurationProperties(RateLimitsEndpointProperties.class)
    static class ActuatorConfiguration {

        @Bean
        RejectedKeys rateLimitRejectedKeys() {
            return new RejectedKeys(1000);
        }

        @Bean
        @ConditionalOnMissingBean
        @org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint
        RateLimitsEndpoint rateLimitsEndpoint(RateLimiter limiter, BucketStore store, RejectedKeys rejected,
                                              RateLimitsEndpointProperties properties) {
            return new RateLimitsEndpoint(limiter, store, rejected, properties.getShowValues());
        }

        @Bean
        @ConditionalOnMissingBean
        @org.springframework.boot.autoconfigure.condition.ConditionalOnBean(RateLimitsEndpoint.class)
        @org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint(
                exposure = org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure.WEB)
        RateLimitsEndpointWebExtension rateLimitsEndpointWebExtension(RateLimitsEndpoint endpoint,
                                                                      RateLimitsEndpointProperties properties) {
            return new RateLimitsEndpointWebExtension(endpoint, properties.getShowValues(), properties.getRoles());
        }

        @Bean
        @ConditionalOnMissingBean
        @org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint(
                exposure = org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure.WEB)
        RateLimitKeysEndpoint rateLimitKeysEndpoint(io.github.ratelimit.store.LimitAdmin admin) {
            return new RateLimitKeysEndpoint(admin);
        }
    }

    /**
     * Project Reactor: what decides reactive calls without blocking, for {@code @RateLimit} methods returning a
     * {@code Mono} or a {@code Flux} in any application, and for the WebFlux filter.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "reactor.core.publisher.Mono")
    static class ReactorConfiguration {

        /**
         * Decisions that may wait on I/O run on a scheduler of their own: those of a Redis store, or of a
         * {@link LimitProvider} bean (the limit store's Redis, an application's database). In memory, none.
         */
        @Bean(name = ReactiveMethodRateLimit.DECIDER_BEAN, destroyMethod = "close")
        ReactiveDecider rateLimitReactiveDecider(RateLimitSettings settings, BucketStore store,
                                                 ObjectProvider<LimitProvider> providers) {
            boolean inMemory = store instanceof io.github.ratelimit.store.LocalBucketStore
                    && providers.stream().findAny().isEmpty();
            return new ReactiveDecider(inMemory ? 0 : settings.redis().poolSize());
        }
    }

    /**
     * Spring WebFlux: URL rules and handler methods' rules in one decision per request, by a {@code WebFilter} right
     * after Spring Security's, and the 429 response.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
    @ConditionalOnClass(name = {"org.springframework.web.server.WebFilter", "reactor.core.publisher.Mono"})
    static class ReactiveWebConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "rateLimitWebExceptionHandler")
        RateLimitWebExceptionHandler rateLimitWebExceptionHandler(RateLimitSettings settings) {
            return new RateLimitWebExceptionHandler(settings.rejectStatus(), settings.headers());
        }

        /** URL rules after authentication, and the rules of the handler method that will serve the request. */
        @Bean
        @ConditionalOnMissingBean(name = "rateLimitWebFilter")
        RateLimitWebFilter rateLimitWebFilter(RateLimitSettings settings, RateLimiter limiter, ReactiveDecider decider,
                                              ConfigurableListableBeanFactory beanFactory) {
            SpelKeyResolverFactory spel = checkedSpel(settings.rules(Phase.AFTER_AUTHENTICATION), beanFactory);
            ReactiveHandlerRules handlerRules = new ReactiveHandlerRules(beanFactory,
                    rule -> SpelKeyResolverFactory.isSpel(rule.key()) && spel.readsInvocation(rule.key()));
            return new RateLimitWebFilter(limiter, settings.rules(Phase.AFTER_AUTHENTICATION), handlerRules, decider,
                    settings.headers(), settings.trustContainerForwarding(), settings.filterOrder());
        }

        /** URL rules that decide before Spring Security: limits on authentication attempts. */
        @Bean
        @ConditionalOnMissingBean(name = "rateLimitBeforeAuthenticationWebFilter")
        RateLimitWebFilter rateLimitBeforeAuthenticationWebFilter(RateLimitSettings settings, RateLimiter limiter,
                                                                  ReactiveDecider decider,
                                                                  ConfigurableListableBeanFactory beanFactory) {
            checkedSpel(settings.rules(Phase.BEFORE_AUTHENTICATION), beanFactory);
            return new RateLimitWebFilter(limiter, settings.rules(Phase.BEFORE_AUTHENTICATION), null, decider,
                    settings.headers(), settings.trustContainerForwarding(), settings.beforeAuthenticationOrder());
        }
    }

    /** Checks that URL rules' SpEL keys read only the request; returns the factory that checked them. */
    private static SpelKeyResolverFactory checkedSpel(List<UrlRule> rules, ConfigurableListableBeanFactory beanFactory) {
        SpelKeyResolverFactory spel = new SpelKeyResolverFactory(beanFactory);
        for (UrlRule rule : rules) {
            if (SpelKeyResolverFactory.isSpel(rule.rule().key())) {
                spel.checkRequestReferences(rule.rule().key(), rule.rule().source());
            }
        }
        return spel;
    }

    /**
     * Per-key limits kept in Redis and changed at run time ({@code ratelimit.limit-store.enabled=true}): a
     * {@link LimitProvider} bean, so the limiter asks it (answering from {@code ratelimit.keys} for keys without an
     * entry of their own), on the store's Redis client.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "redis.clients.jedis.UnifiedJedis")
    static class LimitStoreConfiguration {

        @Bean(destroyMethod = "close")
        @ConditionalOnBooleanProperty(name = "ratelimit.limit-store.enabled")
        LimitProvider rateLimitLimitStore(RateLimitSettings settings, BucketStore store) {
            return settings.createLimitStore(store);
        }
    }

    /**
     * The store's health: {@code UP}, or {@code DEGRADED} while Redis is unreachable and rules decide by their
     * failure policies. Boot's default status order does not know {@code DEGRADED}, so it leaves the application's
     * health {@code UP}: an instance serving under fail-open stays in its load balancer. A health group that orders
     * it makes it count (docs/spring-boot.md).
     */
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
    @Import(TomcatConnectionsConfiguration.class)
    static class ServletWebConfiguration {

        @Bean
        @ConditionalOnMissingBean
        RejectionHandler rateLimitRejectionHandler(RateLimitSettings settings) {
            return new ProblemDetailsRejectionHandler(settings.rejectStatus());
        }

        @Bean
        @ConditionalOnClass(name = "org.springframework.web.servlet.HandlerExceptionResolver")
        RateLimitExceptionResolver rateLimitExceptionResolver(RejectionHandler rejectionHandler) {
            return new RateLimitExceptionResolver(rejectionHandler);
        }

        /**
         * URL rules after authentication, and the {@code @RateLimit} rules of the Spring MVC handler that will serve
         * the request, in one decision.
         */
        @Bean
        @ConditionalOnMissingBean(name = "rateLimitFilter")
        FilterRegistrationBean<RateLimitFilter> rateLimitFilter(RateLimitSettings settings, RateLimiter limiter,
                                                                RejectionHandler rejectionHandler,
                                                                ConfigurableListableBeanFactory beanFactory,
                                                                ObjectProvider<MvcHandlerRulesFactory> handlerRules,
                                                                ObjectProvider<ClientConnections> connections) {
            FilterRegistrationBean<RateLimitFilter> registration = registration("rateLimitFilter",
                    settings.rules(Phase.AFTER_AUTHENTICATION), settings.filterOrder(), settings, limiter,
                    rejectionHandler, beanFactory, connections);
            handlerRules.ifAvailable(factory -> {
                registration.getFilter().handlerRules(factory.create());
                registration.setEnabled(true);
            });
            return registration;
        }

        /** URL rules that decide before Spring Security: limits on authentication attempts. */
        @Bean
        @ConditionalOnMissingBean(name = "rateLimitBeforeAuthenticationFilter")
        FilterRegistrationBean<RateLimitFilter> rateLimitBeforeAuthenticationFilter(RateLimitSettings settings,
                                                                                    RateLimiter limiter,
                                                                                    RejectionHandler rejectionHandler,
                                                                                    ConfigurableListableBeanFactory beanFactory,
                                                                                    ObjectProvider<ClientConnections> connections) {
            return registration("rateLimitBeforeAuthenticationFilter", settings.rules(Phase.BEFORE_AUTHENTICATION),
                    settings.beforeAuthenticationOrder(), settings, limiter, rejectionHandler, beanFactory, connections);
        }

        private static FilterRegistrationBean<RateLimitFilter> registration(String name, List<UrlRule> rules, int order,
                                                                           RateLimitSettings settings,
                                                                           RateLimiter limiter,
                                                                           RejectionHandler rejectionHandler,
                                                                           ConfigurableListableBeanFactory beanFactory,
                                                                           ObjectProvider<ClientConnections> connections) {
            checkedSpel(rules, beanFactory);
            RateLimitFilter filter = new RateLimitFilter(limiter, rules, settings.headers(), rejectionHandler, false,
                    settings.trustContainerForwarding());
            // A SOFT wait whose client goes away ends, and returns its tokens, where the server can tell (Tomcat).
            connections.ifUnique(filter::clientConnections);
            FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(filter);
            registration.setOrder(order);
            registration.setAsyncSupported(true);
            // ASYNC too: a SOFT delay resumes the request with an async dispatch, on which the filter lets it on
            // and settles rules that count only failures once it completes.
            registration.setDispatcherTypes(jakarta.servlet.DispatcherType.REQUEST, jakarta.servlet.DispatcherType.ASYNC);
            registration.setEnabled(!rules.isEmpty());
            registration.setName(name);
            return registration;
        }

        /** Spring MVC: the handler's rules decide in the filter. */
        @Bean
        @ConditionalOnClass(name = "org.springframework.web.servlet.DispatcherServlet")
        static MvcHandlerRulesFactory rateLimitMvcHandlerRules(ConfigurableListableBeanFactory beanFactory) {
            return new MvcHandlerRulesFactory(beanFactory);
        }

        /** Marks a request whose authentication failed, for rules that count only failed attempts. */
        @Bean
        @ConditionalOnClass(name = "org.springframework.security.authentication.event.AbstractAuthenticationFailureEvent")
        static AuthenticationFailureMarker rateLimitAuthenticationFailureMarker() {
            return new AuthenticationFailureMarker();
        }
    }
}
