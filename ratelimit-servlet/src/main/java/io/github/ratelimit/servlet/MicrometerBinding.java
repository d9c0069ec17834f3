package io.github.ratelimit.servlet;

import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.metrics.MicrometerMetrics;
import io.github.ratelimit.store.BucketStore;
import io.micrometer.core.instrument.Metrics;

/**
 * The filter's metrics, in Micrometer's global registry (where an application without Spring adds the registries
 * it exports to). A class of its own, loaded only when Micrometer is on the class path.
 */
final class MicrometerBinding {

    private MicrometerBinding() {
    }

    static boolean available(ClassLoader loader) {
        try {
            Class.forName("io.micrometer.core.instrument.Metrics", false, loader);
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    static RateLimitListener globalRegistry(BucketStore store) {
        MicrometerMetrics metrics = new MicrometerMetrics(Metrics.globalRegistry);
        metrics.bindStore(store);
        return metrics;
    }
}
