package io.github.ratelimit.spring.boot.actuate;

import java.util.OptionalDouble;

/**
 * The Redis store's recent latency as the metrics record it, for the {@code ratelimits} endpoint: the starter makes
 * one from the {@code ratelimit.store.latency} timer when Micrometer has a registry.
 */
@FunctionalInterface
public interface StoreLatency {

    /**
     * @param percentile a percentile the timer publishes: 0.5, 0.95 or 0.99
     * @return its value in milliseconds over the timer's recent window, or empty when nothing was recorded yet or the
     *         store is not Redis
     */
    OptionalDouble percentileMillis(double percentile);
}
