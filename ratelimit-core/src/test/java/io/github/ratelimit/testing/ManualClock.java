package io.github.ratelimit.testing;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.RateLimiter.Waiter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A wall-clock {@link TimeMeter} that moves only when told, and a {@link Waiter} that waits by moving it, so
 * no test sleeps. Thread-safe.
 */
public final class ManualClock implements TimeMeter, Waiter {

    /** 2026-01-01T00:00:00Z, a whole minute, hour and day. */
    public static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

    private long nanos;
    private final List<Timer> timers = new ArrayList<>();
    private long awaitedNanos;

    private record Timer(long due, CompletableFuture<Void> future) {}

    public ManualClock() {
        this(START);
    }

    public ManualClock(Instant start) {
        this.nanos = start.getEpochSecond() * 1_000_000_000L + start.getNano();
    }

    @Override
    public synchronized long currentTimeNanos() {
        return nanos;
    }

    @Override
    public boolean isWallClockBased() {
        return true;
    }

    /** Moves time forward and completes the timers that came due. */
    public void advance(Duration duration) {
        advanceNanos(duration.toNanos());
    }

    public void advanceNanos(long delta) {
        List<CompletableFuture<Void>> due = new ArrayList<>();
        synchronized (this) {
            nanos += delta;
            for (Iterator<Timer> it = timers.iterator(); it.hasNext(); ) {
                Timer t = it.next();
                if (t.due() <= nanos) {
                    due.add(t.future());
                    it.remove();
                }
            }
        }
        due.forEach(f -> f.complete(null));
    }

    public synchronized Instant now() {
        return Instant.ofEpochSecond(0, nanos);
    }

    /** @return the total time callers waited through {@link #await(long)} */
    public synchronized long awaitedNanos() {
        return awaitedNanos;
    }

    @Override
    public void await(long delay) throws InterruptedException {
        if (Thread.currentThread().isInterrupted()) {
            throw new InterruptedException();
        }
        synchronized (this) {
            awaitedNanos += delay;
        }
        advanceNanos(delay);
    }

    @Override
    public synchronized CompletableFuture<Void> after(long delay) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        timers.add(new Timer(nanos + delay, f));
        return f;
    }

    public synchronized int pendingTimers() {
        return timers.size();
    }
}
