package io.github.ratelimit.spring.boot;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.LocalBucketStore;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.ClassUtils;

import java.util.Locale;

/**
 * The bucket store: Redis when configured (or asked for), else this JVM. Either backs off for a
 * {@link BucketStore} bean of the application's.
 */
final class StoreConfigurations {

    private StoreConfigurations() {
    }

    /** Redis: {@code ratelimit.store=redis}, or {@code auto} with a connection in ratelimit.redis or spring.data.redis. */
    @Configuration(proxyBeanMethods = false)
    @Conditional(RedisStoreCondition.class)
    static class RedisStoreConfiguration {

        @Bean
        @ConditionalOnMissingBean(BucketStore.class)
        BucketStore rateLimitBucketStore(RateLimitProperties properties, Environment environment,
                                         ConfigurableListableBeanFactory beanFactory) {
            if (!ClassUtils.isPresent("redis.clients.jedis.UnifiedJedis", beanFactory.getBeanClassLoader())) {
                throw new InvalidRateLimitConfigurationException("ratelimit.store: the Redis store needs Jedis, which is "
                        + "not on the class path. Add the dependency redis.clients:jedis, or set ratelimit.store=local.");
            }
            return JedisStores.create(properties.getRedis(), environment);
        }
    }

    /** This JVM: the default. */
    @Configuration(proxyBeanMethods = false)
    static class LocalStoreConfiguration {

        @Bean
        @ConditionalOnMissingBean(BucketStore.class)
        BucketStore rateLimitBucketStore(RateLimitProperties properties) {
            return LocalBucketStore.builder().maximumKeys(properties.getLocal().getMaximumKeys()).build();
        }
    }

    static final class RedisStoreCondition implements Condition {

        @Override
        public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
            Environment env = context.getEnvironment();
            String store = env.getProperty("ratelimit.store", "auto").trim().toLowerCase(Locale.ROOT);
            if (store.equals("redis")) {
                return true;
            }
            if (!store.equals("auto")) {
                return false;
            }
            boolean own = env.containsProperty("ratelimit.redis.url") || env.containsProperty("ratelimit.redis.sentinel.master")
                    || env.containsProperty("ratelimit.redis.cluster.nodes") || env.containsProperty("ratelimit.redis.cluster.nodes[0]");
            return own || JedisStores.springDataRedisConfigured(env);
        }
    }
}
