package io.github.ratelimit.spring.boot.autoconfigure;


import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.internal.config.RateLimitSettings;
import io.github.ratelimit.internal.metrics.MicrometerMetrics;
import io.github.ratelimit.store.BucketStore;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;

/**
 * Micrometer, when the application has a registry: every decision counted and timed, the store's breaker, repairs
 * and round trips, and the limit store's repairs ({@code docs/operations.md} names the meters).
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class, afterName = {
        // The meter registry the metrics bind to, whichever export creates it.
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration"})
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
public final class RateLimitMetricsAutoConfiguration {

    /** The metrics listener, or one that records nothing with {@code ratelimit.metrics=false}. */
    @Bean
    @ConditionalOnBean(MeterRegistry.class)
    RateLimiter.Listener rateLimitMetrics(MeterRegistry registry, BucketStore store, RateLimitSettings settings,
                                       ObjectProvider<LimitProvider> limitProviders) {
        if (!settings.metrics()) {
            return decision -> { };
        }
        MicrometerMetrics metrics = new MicrometerMetrics(registry);
        metrics.bindStore(store);
        limitProviders.orderedStream().forEach(metrics::bindLimitStore);
        return metrics;
    }
}
