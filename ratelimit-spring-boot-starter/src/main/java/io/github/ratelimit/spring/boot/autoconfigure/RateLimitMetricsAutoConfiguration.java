package io.github.ratelimit.spring.boot.autoconfigure;

import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.internal.config.RateLimitSettings;
import io.github.ratelimit.internal.metrics.DecisionObservations;
import io.github.ratelimit.internal.metrics.MicrometerMetrics;
import io.github.ratelimit.spring.boot.actuate.StoreLatency;
import io.github.ratelimit.store.BucketStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Micrometer, when the application has a registry: every decision counted and timed, the store's breaker, repairs
 * and round trips, and the limit store's repairs ({@code docs/operations.md} names the meters); and each decision
 * an observation ({@code ratelimit.decision}), a span in the request's trace, when it has an observation registry.
 */
@AutoConfiguration(
        after = RateLimitAutoConfiguration.class,
        afterName = {
            // The meter registry the metrics bind to, whichever export creates it.
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
            "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"
        })
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
public final class RateLimitMetricsAutoConfiguration {

    /** The metrics listener, or one that records nothing with {@code ratelimit.metrics=false}. */
    @Bean
    @ConditionalOnBean(MeterRegistry.class)
    RateLimiter.Listener rateLimitMetrics(
            MeterRegistry registry,
            BucketStore store,
            RateLimitSettings settings,
            ObjectProvider<LimitProvider> limitProviders) {
        if (!settings.metrics()) {
            return decision -> {};
        }
        MicrometerMetrics metrics = new MicrometerMetrics(registry, settings.nearLimit());
        metrics.bindStore(store);
        limitProviders.orderedStream().forEach(metrics::bindLimitStore);
        return metrics;
    }

    /**
     * Each decision an observation, when the application has an observation registry (Boot's, with Actuator): with
     * tracing, a span in the request's trace; with metrics, a timer. None for a registry that observes nothing, so
     * deciding costs nothing more. Turned off with {@code management.observations.enable.ratelimit=false}.
     */
    @Bean
    @ConditionalOnBean(ObservationRegistry.class)
    RateLimiterBuilderCustomizer rateLimitObservations(ObservationRegistry registry) {
        return builder -> {
            if (!registry.isNoop()) {
                builder.observer(new DecisionObservations(registry));
            }
        };
    }

    /**
     * The store's latency percentiles as the {@code ratelimit.store.latency} timer publishes them, for the
     * {@code ratelimits} endpoint.
     */
    @Bean
    @ConditionalOnBean(MeterRegistry.class)
    @ConditionalOnMissingBean
    StoreLatency rateLimitStoreLatency(MeterRegistry registry) {
        return percentile -> MicrometerMetrics.storeLatencyMillis(registry, percentile);
    }
}
