package io.github.ratelimit.store;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Limit;
import io.github.ratelimit.internal.bucket.DebtBound;
import io.github.ratelimit.store.BucketStore.KeyState;
import java.util.List;

/**
 * A key's state under a sliding-window algorithm in this JVM. Every operation holds the state's lock for its
 * whole length, so it is atomic across the windows; the subclasses implement the arithmetic on explicit times
 * (testable without a clock).
 */
abstract class LocalSlidingState implements KeyState {

    private final TimeMeter clock;
    private final Runnable afterReservation;
    /** The limits the last caller asked for: a changed per-key limit applies to the state as it is. */
    private volatile BucketStore.Limits limits;

    LocalSlidingState(BucketStore.Limits limits, TimeMeter clock, Runnable afterReservation) {
        this.limits = limits;
        this.clock = clock;
        this.afterReservation = afterReservation;
    }

    static LocalSlidingState create(BucketStore.Limits limits, TimeMeter clock, Runnable afterReservation) {
        if (limits.calendar()) {
            if (!clock.isWallClockBased()) {
                throw new InvalidRateLimitConfigurationException(
                        "local store: a calendar quota " + "needs a wall-clock time meter, but " + clock
                                + " is not one. Use TimeMeter.SYSTEM_MILLISECONDS.");
            }
            return new CalendarState(limits, clock, afterReservation);
        }
        return limits.algorithm() == Algorithm.SLIDING_WINDOW_LOG
                ? new SlidingLogState(limits, clock, afterReservation)
                : new SlidingCounterState(limits, clock, afterReservation);
    }

    final Algorithm algorithm() {
        return limits.algorithm();
    }

    /** @return whether this state counts calendar quotas */
    final boolean calendar() {
        return limits.calendar();
    }

    final BucketStore.Limits limits() {
        return limits;
    }

    final void limits(BucketStore.Limits limits) {
        if (this.limits != limits) {
            this.limits = limits;
        }
    }

    /**
     * The clock, never going back: after a step back of the wall clock the state keeps deciding at the latest time
     * it saw, rather than indexing into intervals it has already dropped or counting calls it has already trimmed.
     */
    private long now() {
        long now = clock.currentTimeNanos();
        if (now < lastNow) {
            return lastNow;
        }
        lastNow = now;
        return now;
    }

    private long lastNow = Long.MIN_VALUE;

    @Override
    public final synchronized Probe consume(long cost) {
        long now = now();
        BucketStore.Limits l = limits;
        long at = earliest(l, cost, now);
        boolean consumed = at == now;
        if (consumed) {
            add(l, now, cost);
        }
        return new Probe(consumed, consumed ? 0 : Math.max(1, at - now), windows(l, now, cost), consumed ? now : 0);
    }

    @Override
    public final synchronized Probe peek(long cost) {
        long now = now();
        BucketStore.Limits l = limits;
        long at = earliest(l, cost, now);
        return new Probe(at == now, at == now ? 0 : Math.max(1, at - now), windows(l, now, cost), 0);
    }

    @Override
    public final Probe reserve(long cost, long maxWaitNanos) {
        return reserve(cost, 0, maxWaitNanos);
    }

    @Override
    public final Probe reserve(long cost, long minWaitNanos, long maxWaitNanos) {
        long wait;
        long at;
        synchronized (this) {
            long now = now();
            BucketStore.Limits l = limits;
            at = earliest(l, cost, now);
            if (at != Long.MAX_VALUE && at - now < minWaitNanos) {
                at = now + minWaitNanos; // it fits at any later time too: counts only fall as time passes
            }
            wait = at == Long.MAX_VALUE ? Long.MAX_VALUE : at - now;
            if (wait > maxWaitNanos || !canHold(l, at, cost)) {
                return new Probe(false, wait, List.of(), 0);
            }
            add(l, at, cost);
        }
        if (wait > 0 && afterReservation != null) {
            afterReservation.run();
        }
        return new Probe(true, wait, List.of(), at);
    }

    @Override
    public final synchronized void refund(long cost, long receipt) {
        remove(limits, now(), cost, receipt);
    }

    /**
     * Counts what a call used in the interval or window counted now. The key's expiry needs no update: the count
     * matters no longer than a call counted now, which the read that found this state allowed for.
     */
    @Override
    public final synchronized long charge(long tokens) {
        long now = now();
        return chargeAt(now, tokens, now);
    }

    /** As {@link #charge(long)}, in the interval or window the call of {@code receipt} was counted in. */
    @Override
    public final synchronized long charge(long tokens, long receipt) {
        return chargeAt(now(), tokens, receipt);
    }

    /**
     * Counts {@code tokens} more for the call counted at {@code at}, as many as every window's debt bound leaves room
     * for ({@link DebtBound#room}), the same in each.
     */
    private long chargeAt(long now, long tokens, long at) {
        BucketStore.Limits l = limits;
        long[] counts = chargedCounts(l, now, at);
        List<Limit> list = l.limits();
        long taken = tokens;
        for (int i = 0; i < counts.length; i++) {
            taken = Math.min(taken, DebtBound.room(list.get(i), counts[i]));
        }
        if (taken > 0) {
            addCharge(l, now, at, taken);
        }
        return taken;
    }

    /**
     * @return nanoseconds from now until the state can no longer matter (0 when it is empty already)
     */
    final synchronized long nanosUntilIrrelevant() {
        return untilIrrelevant(limits, now());
    }

    /** @return how long after a call is counted now it can still matter: the longest window, or two for counters */
    abstract long horizonNanos(BucketStore.Limits limits);

    /**
     * @return the earliest time at or after {@code now} at which {@code cost} fits into every window, counting
     *         the calls reserved for later too
     */
    abstract long earliest(BucketStore.Limits limits, long cost, long now);

    /**
     * @return whether a call of {@code cost} counted at {@code at} (later than now) stays within what a key may hold
     *         (and, where counts do not only fall as time passes, within the limits there); true unless the algorithm
     *         bounds it
     */
    boolean canHold(BucketStore.Limits limits, long at, long cost) {
        return true;
    }

    /** Counts {@code cost} at time {@code at} (now or later). */
    abstract void add(BucketStore.Limits limits, long at, long cost);

    /** Forgets the call of {@code cost} counted at {@code at}, if still held. */
    abstract void remove(BucketStore.Limits limits, long now, long cost, long at);

    /**
     * Says, per window, what a charge for the call counted at {@code at} adds to ({@link KeyState#charge(long, long)}):
     * the count of the interval or window where that call was counted, or where a call would be counted now when that
     * no longer counts.
     *
     * @return per window, in the order of the limits, the count a charge adds to
     * @throws UnsupportedOperationException from an algorithm that cannot owe tokens (the default)
     */
    long[] chargedCounts(BucketStore.Limits limits, long now, long at) {
        throw new UnsupportedOperationException(algorithm() + " cannot charge tokens after a call");
    }

    /** Adds {@code tokens} to the counts {@link #chargedCounts} named, right after it. */
    void addCharge(BucketStore.Limits limits, long now, long at, long tokens) {
        throw new UnsupportedOperationException(algorithm() + " cannot charge tokens after a call");
    }

    /** @return each window's state at {@code now}, for calls of {@code cost} */
    abstract List<Decision.Window> windows(BucketStore.Limits limits, long now, long cost);

    /** @return nanoseconds from {@code now} until every window would be empty */
    abstract long untilIrrelevant(BucketStore.Limits limits, long now);
}
