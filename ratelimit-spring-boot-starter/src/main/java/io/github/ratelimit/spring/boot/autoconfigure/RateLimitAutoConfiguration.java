package io.github.ratelimit.spring.boot.autoconfigure;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RateLimiter.Waiter;
import io.github.ratelimit.internal.config.RateLimitSettings;
import io.github.ratelimit.key.KeyResolver;
import io.github.ratelimit.spring.boot.internal.method.AuthorityPlans;
import io.github.ratelimit.spring.boot.internal.method.SpelKeyResolverFactory;
import io.github.ratelimit.store.BucketStore;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.ConfigurationPropertiesBindHandlerAdvisor;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Auto-configuration of the engine: the {@code ratelimit.*} settings and a {@link RateLimiter} over a local or Redis
 * {@link BucketStore}. What applies it comes after, one auto-configuration per way in:
 * {@link RateLimitMethodAutoConfiguration} ({@code @RateLimit} on any bean), {@link RateLimitServletAutoConfiguration}
 * (Spring MVC), {@link RateLimitReactiveAutoConfiguration} (Reactor and WebFlux), then metrics, the per-key limit
 * store and the Actuator endpoints. Every bean backs off when the application defines its own; with
 * {@code ratelimit.enabled=false} none is made.
 */
@AutoConfiguration(
        afterName = {
            // The meter registry its metrics bind to, whichever export creates it.
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
            // The Redis connection (spring.data.redis.*, or another DataRedisConnectionDetails) the Redis store reuses.
            "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration"
        })
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
// Imported, not annotated @Configuration: a component scan of these packages (the starter's own tests) must not find
// them before the application's own BucketStore bean.
@Import(RateLimitAutoConfiguration.StoreConfiguration.class)
public final class RateLimitAutoConfiguration {

    /**
     * The {@code ratelimit.*} settings, read from the model Spring bound ({@link RateLimitProperties} is the core's
     * {@code RateLimitConfig}) by {@link RateLimitSettings}, which the servlet filter uses too: it checks every value,
     * with messages that name the property.
     */
    @Bean
    @ConditionalOnMissingBean
    RateLimitSettings rateLimitSettings(RateLimitProperties properties) {
        return RateLimitSettings.of(properties, null, RateLimitSettings.EntryPoint.SPRING_BOOT);
    }

    /**
     * Checks the {@code ratelimit.*} names before Spring binds them, so a typo stops start-up naming the nearest known
     * property (rather than leaving a list element unbound), and says what is wrong with a value Spring cannot
     * convert as the rules file would ({@link RateLimitBinding}).
     */
    @Bean
    static ConfigurationPropertiesBindHandlerAdvisor rateLimitBindHandlerAdvisor(Environment environment) {
        return handler -> new RateLimitBinding(handler, environment);
    }

    /**
     * The name of the bean that, when the application defines one, is the time source of the stores and the
     * limiter: a {@link TimeMeter} (Bucket4j's clock type). Tests define a manual clock under this name; when it is a
     * {@link Waiter} too (as the core's test clock is), SOFT delays wait on it. Without it, local buckets use this
     * JVM's wall clock and Redis buckets the Redis server's clock, which every instance shares.
     */
    public static final String TIME_METER_BEAN = "rateLimitTimeMeter";

    private static @Nullable TimeMeter clock(ConfigurableListableBeanFactory beanFactory) {
        return beanFactory.containsBean(TIME_METER_BEAN) ? beanFactory.getBean(TIME_METER_BEAN, TimeMeter.class) : null;
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    RateLimiter rateLimiter(
            RateLimitSettings settings,
            BucketStore store,
            ConfigurableListableBeanFactory beanFactory,
            ObjectProvider<LimitProvider> limitProvider,
            ObjectProvider<RateLimiter.Listener> listeners,
            ObjectProvider<RateLimiterBuilderCustomizer> customizers) {
        RateLimiter.Builder builder = settings.applyTo(RateLimiter.builder())
                .store(store)
                .keyResolverFactory(new AuthorityPlans(new SpelKeyResolverFactory(beanFactory)));
        TimeMeter clock = clock(beanFactory);
        if (clock != null) {
            builder.timeMeter(clock);
            if (clock instanceof Waiter waiter) {
                builder.waiter(waiter);
            }
        }
        for (Map.Entry<String, KeyResolver> e :
                beanFactory.getBeansOfType(KeyResolver.class).entrySet()) {
            builder.keyResolver(e.getKey(), e.getValue());
        }
        // A LimitProvider bean (plans from a database) replaces ratelimit.plans and ratelimit.keys.
        limitProvider.ifAvailable(provider -> builder.limitProvider(provider, settings.limitCacheTtl()));
        listeners.orderedStream().forEach(builder::listener);
        customizers.orderedStream().forEach(c -> c.customize(builder));
        return settings.build(builder);
    }

    /**
     * The store, chosen from the bound settings: this JVM with {@code ratelimit.store=local}; Redis when
     * {@code ratelimit.redis.*} names a server, or else Spring Boot's Redis connection does: {@code spring.data.redis.*},
     * or a {@code DataRedisConnectionDetails} bean of the application's (Testcontainers' {@code @ServiceConnection},
     * Docker Compose); this JVM otherwise, unless {@code ratelimit.store=redis}, which then fails naming what to set.
     * Its clock is the {@value #TIME_METER_BEAN} bean when there is one.
     */
    static class StoreConfiguration {

        @Bean
        @ConditionalOnMissingBean
        BucketStore rateLimitBucketStore(
                RateLimitSettings settings, Environment environment, ConfigurableListableBeanFactory beanFactory) {
            if (settings.store() == RateLimitSettings.StoreKind.LOCAL) {
                return chosen("local, as ratelimit.store=local says", settings.createStore(clock(beanFactory)));
            }
            if (settings.redis().hasServer()) {
                requireJedis(beanFactory.getBeanClassLoader());
                return chosen("Redis, named by ratelimit.redis.*", settings.createStore(clock(beanFactory)));
            }
            String details = connectionDetailsBean(beanFactory);
            if (springDataRedisConfigured(environment) || details != null) {
                requireJedis(beanFactory.getBeanClassLoader());
                return chosen(
                        "Redis, named by "
                                + (details != null
                                        ? "the DataRedisConnectionDetails bean '" + details + "'"
                                        : "spring.data.redis.*"),
                        JedisStores.fromSpringBoot(
                                settings.redis(), environment, connectionDetails(beanFactory), clock(beanFactory)));
            }
            if (settings.store() == RateLimitSettings.StoreKind.REDIS) {
                throw new InvalidRateLimitConfigurationException(
                        "ratelimit.store",
                        "redis",
                        "'redis' needs a Redis "
                                + "server, but none of ratelimit.redis.url, ratelimit.redis.sentinel.master, "
                                + "ratelimit.redis.cluster.nodes or spring.data.redis.* is set",
                        "Set one of them, e.g. " + "ratelimit.redis.url=redis://localhost:6379.");
            }
            return chosen("local: no Redis is configured", settings.createStore(clock(beanFactory)));
        }
    }

    /** Says at start-up which store was made, and why: the choice is no condition in the conditions report. */
    private static BucketStore chosen(String why, BucketStore store) {
        System.getLogger(RateLimitAutoConfiguration.class.getName())
                .log(System.Logger.Level.INFO, "Rate-limit store: " + why);
        return store;
    }

    /** @return whether {@code spring.data.redis.*} names a server */
    private static boolean springDataRedisConfigured(Environment env) {
        return env.containsProperty("spring.data.redis.host")
                || env.containsProperty("spring.data.redis.url")
                || env.containsProperty("spring.data.redis.port")
                || env.containsProperty("spring.data.redis.sentinel.master")
                || env.containsProperty("spring.data.redis.cluster.nodes")
                || env.containsProperty("spring.data.redis.cluster.nodes[0]");
    }

    /** Spring Boot's description of its Redis connection, in {@code spring-boot-data-redis}. */
    private static final String CONNECTION_DETAILS =
            "org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails";

    /** The connection details Boot makes from {@code spring.data.redis.*}, which name a server only with them. */
    static final String PROPERTIES_CONNECTION_DETAILS =
            "org.springframework.boot.data.redis.autoconfigure.PropertiesDataRedisConnectionDetails";

    /**
     * @param beanFactory the context's bean factory, or {@code null}
     * @return the name of a {@code DataRedisConnectionDetails} bean Boot did not make from {@code spring.data.redis.*}
     *         (the application's own, Testcontainers' {@code @ServiceConnection}'s, Docker Compose's), or {@code null};
     *         no bean is made to find it
     */
    private static @Nullable String connectionDetailsBean(ConfigurableListableBeanFactory beanFactory) {
        Class<?> type = connectionDetailsType(beanFactory);
        if (type == null) {
            return null;
        }
        for (String name : beanFactory.getBeanNamesForType(type, true, false)) {
            Class<?> actual = beanFactory.getType(name, false);
            if (actual == null || !actual.getName().equals(PROPERTIES_CONNECTION_DETAILS)) {
                return name;
            }
        }
        return null;
    }

    /**
     * @param beanFactory the context's bean factory
     * @return the {@code DataRedisConnectionDetails} bean, Boot's own included, or {@code null} when there is none or
     *         {@code spring-boot-data-redis} is not on the class path
     */
    private static @Nullable Object connectionDetails(ConfigurableListableBeanFactory beanFactory) {
        Class<?> type = connectionDetailsType(beanFactory);
        return type == null ? null : beanFactory.getBeanProvider(type).getIfAvailable();
    }

    private static @Nullable Class<?> connectionDetailsType(@Nullable ConfigurableListableBeanFactory beanFactory) {
        ClassLoader loader = beanFactory == null ? null : beanFactory.getBeanClassLoader();
        return beanFactory == null || !ClassUtils.isPresent(CONNECTION_DETAILS, loader)
                ? null
                : ClassUtils.resolveClassName(CONNECTION_DETAILS, loader);
    }

    /**
     * @param classLoader the application's class loader
     * @throws InvalidRateLimitConfigurationException when Jedis is missing
     */
    private static void requireJedis(@Nullable ClassLoader classLoader) {
        if (!ClassUtils.isPresent("redis.clients.jedis.UnifiedJedis", classLoader)) {
            throw new InvalidRateLimitConfigurationException(
                    "ratelimit.store",
                    null,
                    "the Redis store needs Jedis, " + "which is not on the class path",
                    "Add the dependency redis.clients:jedis (7.x), or set " + "ratelimit.store=local.");
        }
    }
}
