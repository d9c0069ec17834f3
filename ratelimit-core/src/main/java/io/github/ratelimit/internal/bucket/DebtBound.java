package io.github.ratelimit.internal.bucket;

import io.github.ratelimit.Limit;
import java.time.Duration;

/**
 * The most a charge ({@link io.github.ratelimit.store.BucketStore.KeyState#charge}) leaves a window owing, whatever
 * its algorithm: what the window refills in a day ({@link #MAX_DEBT_NANOS}), or its capacity when that is more (a
 * window of a day or longer owes at most one capacity). So a report of any size keeps a key waiting about a day at
 * most, while a large but true report (100,000 tokens on {@code 1000/1m}) is owed in full. A bucket owes it below
 * zero; a sliding counter or a calendar quota holds it as a count above the limit. The Redis scripts compute the same
 * bound from the same values ({@code SlidingScripts.DEBT_BOUND}).
 */
public final class DebtBound {

    /** The longest a charge may leave a window owing tokens for: what it refills in this long, at most. */
    public static final long MAX_DEBT_NANOS = Duration.ofDays(1).toNanos();

    /** A bound on any window's debt, whatever its limit, so that sums with it never overflow. */
    public static final long CEILING = Limit.MAX_PERMITS * 1000;

    private DebtBound() {}

    /**
     * @param capacity the most tokens the window holds, at least 1
     * @param refillTokens the tokens it refills per period, at least 1
     * @param periodNanos its period, at least 1 ns
     * @return the most tokens it may owe: at least its capacity, at most {@link #CEILING}
     */
    public static long of(long capacity, long refillTokens, long periodNanos) {
        long periods = MAX_DEBT_NANOS / periodNanos;
        long refilled = BucketKeyState.saturatedMultiply(periods, refillTokens);
        return Math.min(CEILING, Math.max(capacity, refilled));
    }

    /**
     * @param limit a window counted by calls (a sliding counter, a calendar quota, a fixed window of such a rule):
     *        its permits per period; a calendar quota's period is its nominal length, a day or more
     * @return the most tokens it may owe, counted beyond its permits
     */
    public static long of(Limit limit) {
        return of(limit.permits(), limit.permits(), limit.period().toNanos());
    }

    /**
     * @param limit a window counted by calls, as {@link #of(Limit)}
     * @param count what the window counts in the interval or window a charge adds to
     * @return the most a charge may add to that count: up to the limit and its bound, 0 once it is there
     */
    public static long room(Limit limit, long count) {
        // A count is at most a limit plus its bound (Limit#MAX_PERMITS + CEILING): no overflow.
        return Math.max(0, limit.permits() + of(limit) - count);
    }
}
