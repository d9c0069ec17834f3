package io.github.ratelimit.store;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.Algorithm;
import io.github.ratelimit.WindowState;

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
    private volatile StoreLimits limits;

    LocalSlidingState(StoreLimits limits, TimeMeter clock, Runnable afterReservation) {
        this.limits = limits;
        this.clock = clock;
        this.afterReservation = afterReservation;
    }

    static LocalSlidingState create(StoreLimits limits, TimeMeter clock, Runnable afterReservation) {
        return limits.algorithm() == Algorithm.SLIDING_WINDOW_LOG
                ? new SlidingLogState(limits, clock, afterReservation)
                : new SlidingCounterState(limits, clock, afterReservation);
    }

    final Algorithm algorithm() {
        return limits.algorithm();
    }

    final StoreLimits limits() {
        return limits;
    }

    final void limits(StoreLimits limits) {
        if (this.limits != limits) {
            this.limits = limits;
        }
    }

    @Override
    public final synchronized Probe tryConsume(long cost) {
        long now = clock.currentTimeNanos();
        StoreLimits l = limits;
        long at = earliest(l, cost, now);
        boolean consumed = at == now;
        if (consumed) {
            add(l, now, cost);
        }
        return new Probe(consumed, consumed ? 0 : Math.max(1, at - now), windows(l, now));
    }

    @Override
    public final long reserve(long cost, long maxWaitNanos) {
        long wait;
        synchronized (this) {
            long now = clock.currentTimeNanos();
            StoreLimits l = limits;
            long at = earliest(l, cost, now);
            wait = at - now;
            if (wait > maxWaitNanos) {
                return -1;
            }
            add(l, at, cost);
        }
        if (wait > 0 && afterReservation != null) {
            afterReservation.run();
        }
        return wait;
    }

    @Override
    public final synchronized void refund(long cost) {
        removeNewest(limits, clock.currentTimeNanos(), cost);
    }

    /**
     * @return nanoseconds from now until the state can no longer matter (0 when it is empty already)
     */
    final synchronized long nanosUntilIrrelevant() {
        return untilIrrelevant(limits, clock.currentTimeNanos());
    }

    /**
     * @return the earliest time at or after {@code now} at which {@code cost} fits into every window, counting
     *         the calls reserved for later too
     */
    abstract long earliest(StoreLimits limits, long cost, long now);

    /** Counts {@code cost} at time {@code at} (now or later). */
    abstract void add(StoreLimits limits, long at, long cost);

    /** Forgets the most recent {@code cost} permits. */
    abstract void removeNewest(StoreLimits limits, long now, long cost);

    /** @return each window's state at {@code now} */
    abstract List<WindowState> windows(StoreLimits limits, long now);

    /** @return nanoseconds from {@code now} until every window would be empty */
    abstract long untilIrrelevant(StoreLimits limits, long now);
}
