package io.github.ratelimit.servlet;

import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.internal.metrics.MicrometerMetrics;
import io.github.ratelimit.store.BucketStore;
import io.micrometer.core.instrument.Metrics;
import java.util.OptionalDouble;

/**
 * The filter's metrics, in Micrometer's global registry (where an application without Spring adds the registries
 * it exports to). A class of its own, loaded only when Micrometer is on the class path: linking it loads Micrometer's
 * types, so whether they are there is asked elsewhere ({@code RulesFile}).
 */
final class MicrometerBinding {

    private MicrometerBinding() {}

    static RateLimiter.Listener globalRegistry(BucketStore store, LimitProvider limitStore, double nearLimit) {
        MicrometerMetrics metrics = new MicrometerMetrics(Metrics.globalRegistry, nearLimit);
        metrics.bindStore(store);
        metrics.bindLimitStore(limitStore);
        return metrics;
    }

    /** @return the Redis store's 99th percentile latency in milliseconds, from the global registry, when recorded */
    static OptionalDouble storeLatencyP99() {
        return MicrometerMetrics.storeLatencyMillis(Metrics.globalRegistry, 0.99);
    }
}
