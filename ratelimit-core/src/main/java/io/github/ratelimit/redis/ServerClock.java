package io.github.ratelimit.redis;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.support.RateLimitedLog;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Redis server time, read without a round trip per decision: calibrated now and then from the server's
 * {@code TIME} (taking the midpoint of the round trip, and preferring the sample with the shortest one), and
 * advanced between calibrations by this JVM's monotonic clock. Instances whose own wall clocks disagree by
 * seconds therefore agree on bucket time to within a round trip. Until the first calibration succeeds (Redis
 * down at start-up), the local wall clock stands in. Thread-safe.
 */
final class ServerClock implements TimeMeter {

    private static final RateLimitedLog LOG = new RateLimitedLog(60_000_000_000L);

    private final LongSupplier nanoTime;
    private final LongSupplier localWallNanos;

    /** Server epoch nanos at {@link #baseTicks}. */
    private volatile long baseServerNanos;

    private volatile long baseTicks;
    private volatile long baseRoundTrip = Long.MAX_VALUE;
    private volatile long calibratedAt = Long.MIN_VALUE;
    private volatile boolean calibrated;

    ServerClock(LongSupplier nanoTime, LongSupplier localWallNanos) {
        this.nanoTime = nanoTime;
        this.localWallNanos = localWallNanos;
    }

    @Override
    public long currentTimeNanos() {
        if (!calibrated) {
            return localWallNanos.getAsLong();
        }
        return baseServerNanos + (nanoTime.getAsLong() - baseTicks);
    }

    @Override
    public boolean isWallClockBased() {
        return true;
    }

    /**
     * Records one sample.
     *
     * @param before the monotonic clock before the request
     * @param serverMicros the server's time
     * @param after the monotonic clock after the reply
     */
    synchronized void calibrate(long before, long serverMicros, long after) {
        long roundTrip = after - before;
        long midpoint = before + roundTrip / 2;
        // A sample is kept if its round trip is no worse than twice the best one, or the best one is old:
        // a slow sample says less about the offset than a fast one.
        boolean stale = midpoint - calibratedAt > 60_000_000_000L;
        if (!calibrated || stale || roundTrip <= 2 * baseRoundTrip) {
            baseServerNanos = serverMicros * 1_000L;
            baseTicks = midpoint;
            baseRoundTrip = Math.min(roundTrip, stale ? roundTrip : baseRoundTrip);
            calibratedAt = midpoint;
            calibrated = true;
        }
    }

    boolean isCalibrated() {
        return calibrated;
    }

    long ticks() {
        return nanoTime.getAsLong();
    }

    /**
     * Calibrates once now, then every {@code interval} from a daemon thread of its own.
     *
     * @param serverMicros reads the server's time in microseconds (one round trip); may throw during an outage
     * @param interval how often
     * @return the thread's executor, to shut down when the store closes
     */
    ScheduledExecutorService startCalibrating(LongSupplier serverMicros, Duration interval) {
        calibrateFrom(serverMicros);
        ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "ratelimit-redis-clock");
            t.setDaemon(true);
            return t;
        });
        long every = interval.toMillis();
        thread.scheduleWithFixedDelay(() -> calibrateFrom(serverMicros), every, every, TimeUnit.MILLISECONDS);
        return thread;
    }

    private void calibrateFrom(LongSupplier serverMicros) {
        try {
            long before = ticks();
            long micros = serverMicros.getAsLong();
            long after = ticks();
            calibrate(before, micros, after);
        } catch (RuntimeException e) {
            LOG.log(
                    Level.WARNING,
                    "Could not read the Redis server time"
                            + (isCalibrated()
                                    ? "; keeping the last calibration"
                                    : "; using this JVM's clock until Redis answers")
                            + ": " + e,
                    null);
        }
    }
}
