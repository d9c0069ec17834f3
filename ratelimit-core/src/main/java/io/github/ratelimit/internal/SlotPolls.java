package io.github.ratelimit.internal;

import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads that ask the store for a slot on behalf of calls waiting for one without holding a thread of their own
 * ({@link SlotWaits#awaitAsync}): an attempt may block for a round trip to Redis (up to the command timeout), which
 * must not hold the limiter's delay thread, the one that ends every other call's SOFT delay. At most
 * {@value #THREADS} threads, started on first use, idle ones ending after 30 s, all stopped by {@link #close()}
 * (after which attempts run on the thread that asks, so a wait still ends). Thread-safe.
 */
final class SlotPolls implements Executor, AutoCloseable {

    private static final int THREADS = 4;
    private static final AtomicInteger NAMES = new AtomicInteger();

    private ThreadPoolExecutor pool;
    private boolean closed;

    private synchronized ThreadPoolExecutor pool() {
        if (pool == null && !closed) {
            pool = new ThreadPoolExecutor(THREADS, THREADS, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), task -> {
                Thread t = new Thread(task, "ratelimit-slot-polls-" + NAMES.incrementAndGet());
                t.setDaemon(true);
                t.setContextClassLoader(SlotPolls.class.getClassLoader());
                return t;
            });
            pool.allowCoreThreadTimeOut(true);
        }
        return pool;
    }

    @Override
    public void execute(Runnable attempt) {
        ThreadPoolExecutor p = pool();
        if (p != null) {
            try {
                p.execute(attempt);
                return;
            } catch (RejectedExecutionException e) {
                // Closed meanwhile: run it here.
            }
        }
        attempt.run();
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (pool != null) {
            pool.shutdownNow();
        }
    }
}
