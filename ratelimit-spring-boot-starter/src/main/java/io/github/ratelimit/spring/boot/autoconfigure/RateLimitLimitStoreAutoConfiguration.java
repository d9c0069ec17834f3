package io.github.ratelimit.spring.boot.autoconfigure;

import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.internal.config.RateLimitSettings;
import io.github.ratelimit.redis.LimitAdmin;
import io.github.ratelimit.redis.RedisLimitProvider;
import io.github.ratelimit.store.BucketStore;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Per-key limits kept in Redis and changed at run time ({@code ratelimit.limit-store.enabled=true}), and the
 * operations on live keys ({@link LimitAdmin}) that the {@code ratelimitkeys} endpoint and the application's own code
 * use.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
public final class RateLimitLimitStoreAutoConfiguration {

    /** The name of the limit store's bean. */
    public static final String LIMIT_STORE_BEAN = "rateLimitLimitStore";

    /**
     * Every rule is registered with the limiter before the first request (URL rules when the filters are made,
     * annotations once every singleton exists, {@code RateLimitAnnotationValidator}), so the admin knows them all by
     * then: per-key limits kept in Redis, resets with any store.
     */
    @Bean
    @ConditionalOnMissingBean
    LimitAdmin rateLimitAdmin(
            RateLimiter limiter, @Qualifier(LIMIT_STORE_BEAN) ObjectProvider<LimitProvider> limitStore) {
        LimitProvider provider = limitStore.getIfAvailable();
        // The null check first: without Jedis there is no limit store, and the Redis type is never touched.
        return LimitAdmin.of(limiter, provider != null && provider instanceof RedisLimitProvider redis ? redis : null);
    }

    /**
     * A {@link LimitProvider} bean, so the limiter asks it (answering from {@code ratelimit.keys} for keys without an
     * entry of their own), on the store's Redis client.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "redis.clients.jedis.UnifiedJedis")
    static class RedisLimitProviderConfiguration {

        @Bean(name = LIMIT_STORE_BEAN, destroyMethod = "close")
        @ConditionalOnBooleanProperty(name = "ratelimit.limit-store.enabled")
        LimitProvider rateLimitLimitStore(RateLimitSettings settings, BucketStore store) {
            return settings.createLimitStore(store);
        }
    }
}
