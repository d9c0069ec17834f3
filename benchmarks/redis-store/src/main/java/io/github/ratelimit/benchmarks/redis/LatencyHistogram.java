package io.github.ratelimit.benchmarks.redis;

/**
 * Latencies at 1 µs resolution up to 100 ms; longer ones are counted and only their maximum kept. One per thread
 * (not thread-safe); {@link #add} merges them afterwards.
 */
final class LatencyHistogram {

    private static final int BUCKETS = 100_000; // 1 µs each: 0 .. 100 ms

    private final long[] counts = new long[BUCKETS];
    private long overflow;
    private long total;
    private long maxNanos;

    void record(long nanos) {
        long micros = nanos / 1_000;
        if (micros < BUCKETS) {
            counts[(int) micros]++;
        } else {
            overflow++;
        }
        total++;
        if (nanos > maxNanos) {
            maxNanos = nanos;
        }
    }

    void add(LatencyHistogram other) {
        for (int i = 0; i < BUCKETS; i++) {
            counts[i] += other.counts[i];
        }
        overflow += other.overflow;
        total += other.total;
        maxNanos = Math.max(maxNanos, other.maxNanos);
    }

    long count() {
        return total;
    }

    /**
     * @param quantile between 0 and 1
     * @return the latency in microseconds at that quantile (the lower edge of its 1 µs bucket); the maximum when it
     *         falls above 100 ms; 0 when nothing was recorded
     */
    double percentileMicros(double quantile) {
        if (total == 0) {
            return 0;
        }
        long rank = Math.max(1, (long) Math.ceil(quantile * total));
        long seen = 0;
        for (int i = 0; i < BUCKETS; i++) {
            seen += counts[i];
            if (seen >= rank) {
                return i;
            }
        }
        return maxNanos / 1_000.0;
    }

    double maxMicros() {
        return maxNanos / 1_000.0;
    }
}
