package io.github.ratelimit.internal;

import io.github.ratelimit.RateLimiter.Waiter;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The real-time {@link Waiter}: {@link #await} parks the calling thread; {@link #after} completes futures from a
 * scheduler thread of this waiter's own, started on first use and stopped by {@link #close()}.
 *
 * <p>The JDK's shared {@code CompletableFuture.delayedExecutor} would do the same, but its thread lives as long as
 * the JVM and keeps the context class loader of whichever thread first used it: in a servlet container that is a
 * web application's loader, pinned after the application is undeployed. This thread is the limiter's: it has this
 * class's loader as its context loader, and it ends when the limiter closes. Delays still pending then complete
 * exceptionally (with a {@link CancellationException}), so nothing waits forever.
 */
public final class ScheduledWaiter implements Waiter, AutoCloseable {

    private static final AtomicInteger THREADS = new AtomicInteger();

    private final Set<CompletableFuture<Void>> pending = ConcurrentHashMap.newKeySet();
    private volatile ScheduledThreadPoolExecutor scheduler;
    private volatile boolean closed;

    @Override
    public void await(long nanos) throws InterruptedException {
        long deadline = System.nanoTime() + nanos;
        long left = nanos;
        while (left > 0) {
            LockSupport.parkNanos(left);
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            left = deadline - System.nanoTime();
        }
    }

    @Override
    public CompletableFuture<Void> after(long nanos) {
        CompletableFuture<Void> timer = new CompletableFuture<>();
        ScheduledThreadPoolExecutor s = scheduler();
        if (s == null) {
            timer.completeExceptionally(new CancellationException("the rate limiter is closed"));
            return timer;
        }
        pending.add(timer);
        ScheduledFuture<?> task;
        try {
            task = s.schedule(
                    () -> {
                        pending.remove(timer);
                        timer.complete(null);
                    },
                    nanos,
                    TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            task = null; // closed meanwhile
        }
        if (task == null || closed) {
            // Closed while this one was being scheduled: it would never run.
            if (pending.remove(timer)) {
                timer.completeExceptionally(new CancellationException("the rate limiter is closed"));
            }
            if (task != null) {
                task.cancel(false);
            }
            return timer;
        }
        ScheduledFuture<?> scheduled = task;
        timer.whenComplete((ignored, error) -> {
            if (timer.isCancelled()) {
                pending.remove(timer);
                scheduled.cancel(false);
            }
        });
        return timer;
    }

    private ScheduledThreadPoolExecutor scheduler() {
        ScheduledThreadPoolExecutor s = scheduler;
        if (s != null || closed) {
            return closed ? null : s;
        }
        synchronized (this) {
            if (closed) {
                return null;
            }
            if (scheduler == null) {
                ScheduledThreadPoolExecutor created = new ScheduledThreadPoolExecutor(1, runnable -> {
                    Thread t = new Thread(runnable, "ratelimit-delays-" + THREADS.incrementAndGet());
                    t.setDaemon(true);
                    t.setContextClassLoader(ScheduledWaiter.class.getClassLoader());
                    return t;
                });
                created.setRemoveOnCancelPolicy(true);
                scheduler = created;
            }
            return scheduler;
        }
    }

    /**
     * Stops the scheduler thread; delays still pending complete exceptionally. Idempotent.
     */
    @Override
    public void close() {
        ScheduledThreadPoolExecutor s;
        synchronized (this) {
            closed = true;
            s = scheduler;
        }
        if (s != null) {
            s.shutdownNow();
        }
        for (CompletableFuture<Void> timer : pending) {
            if (pending.remove(timer)) {
                timer.completeExceptionally(new CancellationException("the rate limiter was closed"));
            }
        }
    }

    /**
     * @return whether the scheduler thread was started and has not yet ended (for tests and diagnostics)
     */
    public boolean isRunning() {
        ScheduledThreadPoolExecutor s = scheduler;
        return s != null && !s.isTerminated();
    }
}
