package io.github.ratelimit.spring.boot.autoconfigure;

import io.github.ratelimit.RateLimiter;

/**
 * Customizes the auto-configured {@link RateLimiter} before it is built: add listeners, key resolvers, a limit
 * provider, change any setting. Applied in order; define a {@code RateLimiter} bean instead to take over entirely.
 */
@FunctionalInterface
public interface RateLimiterBuilderCustomizer {

    /**
     * @param builder the builder, with the properties applied
     */
    void customize(RateLimiter.Builder builder);
}
