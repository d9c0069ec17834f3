package io.github.ratelimit.redis;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.BucketState;
import io.github.bucket4j.distributed.remote.RemoteBucketState;
import io.github.bucket4j.distributed.serialization.Scope;
import io.github.bucket4j.distributed.versioning.Versions;
import io.github.ratelimit.Limit;
import io.github.ratelimit.internal.bucket.BucketKeyState;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import org.jspecify.annotations.Nullable;

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
 *   <li>a window's last refill is dated more than a minute ahead of the store's clock: Bucket4j does not refill a
 *       window until then, so the bucket would stay frozen (empty, or full without refilling as it drains).
 * </ul>
 *
 * A debt is never garbage, however deep: instances deciding locally first ({@code LocalFirst}) may each spend up to
 * the capacity before they synchronise, and a SOFT rule reserves ahead; so is a refill period of years.
 *
 * Only state read back from Redis is checked (on a conflict, or a key's first use), never state this JVM wrote
 * itself, so the check costs nothing on the usual path.
 */
final class StoredBucketCheck {

    /** More windows than any rule has (rules are validated for far fewer). */
    static final int MAX_WINDOWS = 64;

    private static final long MAX_PERIOD_NANOS =
            Duration.ofDays(Limit.MAX_PERIOD_DAYS).toNanos();
    private static final long DAY_MILLIS = Duration.ofDays(1).toMillis();
    /** How far ahead of the store's clock a window's last refill may be: clocks of instances differ a little. */
    private static final long AHEAD_NANOS = Duration.ofMinutes(1).toNanos();

    /** How many times {@link BucketKeyState#maxDebt} a window may owe before its state is taken for garbage. */
    static final long DEBT_FACTOR = 64;

    private StoredBucketCheck() {}

    /**
     * @param state a state decoded from Redis
     * @param nowNanos the store's clock (epoch nanoseconds)
     * @return {@code null} when a rule could have written it, else what is wrong with it
     */
    static @Nullable String problem(RemoteBucketState state, long nowNanos) {
        BucketConfiguration configuration = state.getConfiguration();
        Bandwidth[] windows = configuration == null ? null : configuration.getBandwidths();
        if (windows == null || windows.length == 0 || windows.length > MAX_WINDOWS) {
            return "a configuration of " + (windows == null ? "no" : windows.length) + " windows";
        }
        Long version = state.getConfigurationVersion();
        if (version != null && version > nowNanos / 1_000_000L + DAY_MILLIS) {
            return "a configuration version " + version + " more than a day ahead of the clock";
        }
        for (int i = 0; i < windows.length; i++) {
            Bandwidth w = windows[i];
            if (!within(w.getCapacity(), 1, Limit.MAX_PERMITS)
                    || !within(w.getRefillTokens(), 1, Limit.MAX_PERMITS)
                    || !within(w.getRefillPeriodNanos(), 1, MAX_PERIOD_NANOS)) {
                return "a window no limit makes: " + w;
            }
            if (state.getState().getCurrentSize(i) > w.getCapacity()) {
                return "window " + i + " holds " + state.getState().getCurrentSize(i) + " tokens, above its capacity "
                        + w.getCapacity();
            }
            // A charge owes at most maxDebt (at least a day's refill), SOFT reservations at most an hour's refill, and
            // instances deciding locally first overshoot by up to a capacity each: a debt of 64 times the bound is
            // more than any rule and any fleet of instances makes, and would block the key for months.
            long floor = -DEBT_FACTOR * BucketKeyState.maxDebt(w);
            if (state.getState().getCurrentSize(i) < floor) {
                return "window " + i + " owes " + -state.getState().getCurrentSize(i) + " tokens, more than any call"
                        + " or charge could leave it owing (" + -floor + ")";
            }
        }
        long[] data = stateData(state);
        for (int i = 0; data != null && i < windows.length && 3 * i < data.length; i++) {
            long lastRefill = data[3 * i];
            if (lastRefill > nowNanos + AHEAD_NANOS) {
                return "window " + i + " was last refilled " + Duration.ofNanos(lastRefill - nowNanos)
                        + " from now (it would not refill until then)";
            }
        }
        return null;
    }

    /**
     * @return Bucket4j's state data, per window its last refill time, tokens and rounding error; {@code null} when
     *         the state does not show it (another math type)
     */
    private static long @Nullable [] stateData(RemoteBucketState state) {
        try {
            Object snapshot =
                    BucketState.toJsonCompatibleSnapshot(state.getState(), Versions.getLatest(), Scope.PERSISTED_STATE);
            return snapshot instanceof Map<?, ?> map && map.get("stateData") instanceof long[] data ? data : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static boolean within(long value, long min, long max) {
        return value >= min && value <= max;
    }
}
