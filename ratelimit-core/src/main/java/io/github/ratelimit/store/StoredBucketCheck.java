package io.github.ratelimit.store;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.remote.RemoteBucketState;
import io.github.ratelimit.Limit;
import io.github.ratelimit.Rule;

import java.time.Duration;

/**
 * Whether a bucket state read from Redis is one a rule could have written, so that garbage that happens to decode
 * (a migration bug, a hand edit) is replaced rather than obeyed. A state is garbage when:
 *
 * <ul>
 *   <li>its configuration has no window, more than {@value #MAX_WINDOWS}, or a window no {@link Limit} can make
 *       (a capacity or refill outside 1 to {@link Limit#MAX_PERMITS}, a period outside 1 ns to
 *       {@link Limit#MAX_PERIOD_DAYS} days): it would be obeyed by every instance whose configuration is older;
 *   <li>its configuration version is more than a day ahead of the store's clock (versions are the clock's
 *       milliseconds), so it would win over every configuration for that long;
 *   <li>a window holds more tokens than its capacity;
 *   <li>it would not be full again after the longest a rule's bucket can take to refill (the capacity's worth of
 *       refills, a debt of the longest delay, {@link Rule#MAX_DELAY_LIMIT}, and a minute): a refill time far in
 *       the future, which freezes the bucket until then.
 * </ul>
 *
 * Only state read back from Redis is checked (on a conflict, or a key's first use), never state this JVM wrote
 * itself, so the check costs nothing on the usual path.
 */
final class StoredBucketCheck {

    /** More windows than any rule has (rules are validated for far fewer). */
    static final int MAX_WINDOWS = 64;

    private static final long MAX_PERIOD_NANOS = Duration.ofDays(Limit.MAX_PERIOD_DAYS).toNanos();
    private static final long DAY_MILLIS = Duration.ofDays(1).toMillis();
    private static final long SLACK_NANOS = Rule.MAX_DELAY_LIMIT.toNanos() + Duration.ofMinutes(1).toNanos();
    /** The longest refill horizon checked: beyond it every legitimate bucket is full (see {@link CasProxyManager}). */
    private static final long MAX_HORIZON_NANOS = CasProxyManager.MAX_TTL_MILLIS * 1_000_000L;

    private StoredBucketCheck() {
    }

    /**
     * @param state a state decoded from Redis
     * @param nowNanos the store's clock (epoch nanoseconds)
     * @return {@code null} when a rule could have written it, else what is wrong with it
     */
    static String problem(RemoteBucketState state, long nowNanos) {
        BucketConfiguration configuration = state.getConfiguration();
        Bandwidth[] windows = configuration == null ? null : configuration.getBandwidths();
        if (windows == null || windows.length == 0 || windows.length > MAX_WINDOWS) {
            return "a configuration of " + (windows == null ? "no" : windows.length) + " windows";
        }
        Long version = state.getConfigurationVersion();
        if (version != null && version > nowNanos / 1_000_000L + DAY_MILLIS) {
            return "a configuration version " + version + " more than a day ahead of the clock";
        }
        long horizon = 0;
        for (int i = 0; i < windows.length; i++) {
            Bandwidth w = windows[i];
            if (!within(w.getCapacity(), 1, Limit.MAX_PERMITS) || !within(w.getRefillTokens(), 1, Limit.MAX_PERMITS)
                    || !within(w.getRefillPeriodNanos(), 1, MAX_PERIOD_NANOS)) {
                return "a window no limit makes: " + w;
            }
            if (state.getState().getCurrentSize(i) > w.getCapacity()) {
                return "window " + i + " holds " + state.getState().getCurrentSize(i) + " tokens, above its capacity "
                        + w.getCapacity();
            }
            // The capacity's worth of refills, and two periods more for an interval's alignment.
            double refills = Math.ceil((double) w.getCapacity() / w.getRefillTokens()) + 2;
            horizon = (long) Math.min(MAX_HORIZON_NANOS, Math.max(horizon, refills * w.getRefillPeriodNanos()));
        }
        long at = nowNanos + Math.min(MAX_HORIZON_NANOS, horizon + SLACK_NANOS);
        RemoteBucketState later = state.copy();
        later.refillAllBandwidth(at);
        for (int i = 0; i < windows.length; i++) {
            if (later.getState().getCurrentSize(i) < windows[i].getCapacity()) {
                return "window " + i + " would still not be full in " + Duration.ofNanos(at - nowNanos)
                        + " (a refill time in the future)";
            }
        }
        return null;
    }

    private static boolean within(long value, long min, long max) {
        return value >= min && value <= max;
    }
}
