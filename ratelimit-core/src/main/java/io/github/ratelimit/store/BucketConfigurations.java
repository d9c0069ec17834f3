package io.github.ratelimit.store;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.ConfigurationBuilder;
import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Limit;
import java.time.Instant;
import java.util.List;

/**
 * Turns limits into Bucket4j configurations: one bandwidth per window, identified by the window's name so a
 * configuration replacement carries each window's spent tokens over to the same window.
 */
final class BucketConfigurations {

    private BucketConfigurations() {}

    /**
     * @param limits the windows
     * @param algorithm how they refill
     * @return the configuration
     */
    static BucketConfiguration of(List<Limit> limits, Algorithm algorithm) {
        ConfigurationBuilder builder = BucketConfiguration.builder();
        for (Limit limit : limits) {
            builder.addLimit(bandwidth(limit, algorithm));
        }
        return builder.build();
    }

    private static Bandwidth bandwidth(Limit limit, Algorithm algorithm) {
        var capacity = Bandwidth.builder().capacity(algorithm.capacity(limit));
        var refill = algorithm == Algorithm.FIXED_WINDOW
                // Aligned to the epoch: windows start at whole multiples of the period on every instance.
                ? capacity.refillIntervallyAligned(limit.permits(), limit.period(), Instant.EPOCH)
                : capacity.refillGreedy(limit.permits(), limit.period());
        return refill.id(limit.window()).build();
    }
}
