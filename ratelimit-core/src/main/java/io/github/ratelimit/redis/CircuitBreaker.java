package io.github.ratelimit.redis;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * Stops calls from waiting on a store that keeps failing.
 *
 * <p>It opens when failures have come {@code failureThreshold} times in a row <em>and</em> the streak has lasted
 * at least {@code minStreakNanos}: a dead or frozen store fails call after call, while a momentary stall (a
 * pause of the server, a slow network) fails only the calls in flight at that moment, all at once, and must not
 * turn into a second of deciding without the store. Open, calls fail at once, without touching the store, for
 * {@code openNanos}; then one call goes through as a probe (half-open): its success closes the breaker, its
 * failure opens it again.
 *
 * <p>Every call reports back with the epoch it was let through in; a report from an older epoch (a call that
 * started before the state changed and returned late) is ignored, so it can neither close a breaker opened
 * meanwhile nor reopen one a probe has closed. Thread-safe, lock-free.
 */
@SuppressWarnings("NullAway") // status always holds a Status: one from the start, replaced only by another
final class CircuitBreaker {

    /** The state, the epoch it began, when, and the current failure streak. */
    private record Status(
            JedisBucketStore.BreakerState state, long epoch, long since, int failures, long streakStart) {}

    /** Returned by {@link #tryAcquire()} when the call must not go to the store. */
    static final long REFUSED = -1;

    private final int failureThreshold;
    private final long minStreakNanos;
    private final long openNanos;
    private final LongSupplier nanoTime;
    private final AtomicReference<Status> status;

    CircuitBreaker(int failureThreshold, long minStreakNanos, long openNanos, LongSupplier nanoTime) {
        this.failureThreshold = failureThreshold;
        this.minStreakNanos = minStreakNanos;
        this.openNanos = openNanos;
        this.nanoTime = nanoTime;
        this.status = new AtomicReference<>(new Status(JedisBucketStore.BreakerState.CLOSED, 0, 0, 0, 0));
    }

    /**
     * @return the epoch to report back with when the call may go to the store, else {@link #REFUSED}
     */
    long tryAcquire() {
        while (true) {
            Status s = status.get();
            if (s.state() == JedisBucketStore.BreakerState.CLOSED) {
                return s.epoch();
            }
            long now = nanoTime.getAsLong();
            if (now - s.since() < openNanos) {
                return REFUSED;
            }
            // Open long enough, or a probe that never reported: one caller wins the (next) probe.
            Status probe = new Status(JedisBucketStore.BreakerState.HALF_OPEN, s.epoch() + 1, now, 0, 0);
            if (status.compareAndSet(s, probe)) {
                return probe.epoch();
            }
        }
    }

    /**
     * @return whether a call now would be refused, without changing anything: a cheap check before any work (the
     *         call that finds the breaker ready for a probe goes on to {@link #tryAcquire()})
     */
    boolean refusesNow() {
        Status s = status.get();
        return s.state() != JedisBucketStore.BreakerState.CLOSED && nanoTime.getAsLong() - s.since() < openNanos;
    }

    void onSuccess(long epoch) {
        while (true) {
            Status s = status.get();
            if (s.epoch() != epoch || (s.state() == JedisBucketStore.BreakerState.CLOSED && s.failures() == 0)) {
                return;
            }
            Status closed = s.state() == JedisBucketStore.BreakerState.CLOSED
                    ? new Status(JedisBucketStore.BreakerState.CLOSED, s.epoch(), s.since(), 0, 0)
                    : new Status(JedisBucketStore.BreakerState.CLOSED, s.epoch() + 1, nanoTime.getAsLong(), 0, 0);
            if (status.compareAndSet(s, closed)) {
                return;
            }
        }
    }

    void onFailure(long epoch) {
        while (true) {
            Status s = status.get();
            if (s.epoch() != epoch || s.state() == JedisBucketStore.BreakerState.OPEN) {
                return;
            }
            long now = nanoTime.getAsLong();
            Status next;
            if (s.state() == JedisBucketStore.BreakerState.HALF_OPEN) {
                next = new Status(JedisBucketStore.BreakerState.OPEN, s.epoch() + 1, now, 0, 0);
            } else {
                int failures = s.failures() + 1;
                long streakStart = s.failures() == 0 ? now : s.streakStart();
                next = failures >= failureThreshold && now - streakStart >= minStreakNanos
                        ? new Status(JedisBucketStore.BreakerState.OPEN, s.epoch() + 1, now, 0, 0)
                        : new Status(JedisBucketStore.BreakerState.CLOSED, s.epoch(), s.since(), failures, streakStart);
            }
            if (status.compareAndSet(s, next)) {
                return;
            }
        }
    }

    JedisBucketStore.BreakerState state() {
        return status.get().state();
    }

    int consecutiveFailures() {
        return status.get().failures();
    }
}
