package io.github.ratelimit.store;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * Stops calls from waiting on a store that keeps failing. After {@code failureThreshold} failures in a row it
 * opens: calls fail at once, without touching the store, for {@code openNanos}. Then one call is let through as
 * a probe (half-open); its success closes the breaker, its failure opens it again. Thread-safe.
 */
final class CircuitBreaker {

    private record Status(JedisBucketStore.BreakerState state, long openedAt) {
    }

    private final int failureThreshold;
    private final long openNanos;
    private final LongSupplier nanoTime;
    private final AtomicInteger consecutiveFailures = new AtomicInteger();
    private final AtomicReference<Status> status = new AtomicReference<>(new Status(JedisBucketStore.BreakerState.CLOSED, 0));

    CircuitBreaker(int failureThreshold, long openNanos, LongSupplier nanoTime) {
        this.failureThreshold = failureThreshold;
        this.openNanos = openNanos;
        this.nanoTime = nanoTime;
    }

    /**
     * @return whether a call may go to the store now
     */
    boolean tryAcquire() {
        Status s = status.get();
        if (s.state() == JedisBucketStore.BreakerState.CLOSED) {
            return true;
        }
        long now = nanoTime.getAsLong();
        if (now - s.openedAt() < openNanos) {
            return false;
        }
        // One caller wins the probe; a probe that never reports back is replaced after another period.
        return status.compareAndSet(s, new Status(JedisBucketStore.BreakerState.HALF_OPEN, now));
    }

    void onSuccess() {
        consecutiveFailures.set(0);
        Status s = status.get();
        if (s.state() != JedisBucketStore.BreakerState.CLOSED) {
            status.compareAndSet(s, new Status(JedisBucketStore.BreakerState.CLOSED, 0));
        }
    }

    void onFailure() {
        int failures = consecutiveFailures.incrementAndGet();
        Status s = status.get();
        if (s.state() == JedisBucketStore.BreakerState.HALF_OPEN || (s.state() == JedisBucketStore.BreakerState.CLOSED && failures >= failureThreshold)) {
            status.compareAndSet(s, new Status(JedisBucketStore.BreakerState.OPEN, nanoTime.getAsLong()));
        }
    }

    JedisBucketStore.BreakerState state() {
        return status.get().state();
    }

    int consecutiveFailures() {
        return consecutiveFailures.get();
    }
}
