package io.github.ratelimit.spring.boot.autoconfigure;

import io.github.ratelimit.spring.boot.method.RateLimitAnnotationValidator;
import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.store.LimitAdmin;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The operations on live keys ({@link LimitAdmin}: per-key limits kept in Redis, resets with any store), with the
 * checks and the addressing of every other way to them: the {@code ratelimitkeys} endpoint uses this bean, and so may
 * the application's own code.
 */
@Configuration(proxyBeanMethods = false)
class RateLimitAdminConfiguration {

    /**
     * Every rule is registered with the limiter before the first request (URL rules when the filters are made,
     * annotations once every singleton exists, {@code RateLimitAnnotationValidator}), so the admin knows them all by
     * then.
     */
    @Bean
    @ConditionalOnMissingBean
    LimitAdmin rateLimitAdmin(RateLimiter limiter,
                              @Qualifier("rateLimitLimitStore") ObjectProvider<LimitProvider> limitStore) {
        LimitProvider provider = limitStore.getIfAvailable();
        // The null check first: without Jedis there is no limit store, and the Redis type is never touched.
        return LimitAdmin.of(limiter, provider != null
                && provider instanceof io.github.ratelimit.store.RedisLimitStore redis ? redis : null);
    }
}
