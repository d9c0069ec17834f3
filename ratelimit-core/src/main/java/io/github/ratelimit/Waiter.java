package io.github.ratelimit;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * How a {@link RateLimiter} lets time pass for delayed ({@link Mode#SOFT}) calls. The default parks the
 * calling thread, or completes a future from the JDK's shared delay scheduler; tests substitute one that
 * advances a manual clock instead of sleeping.
 */
public interface Waiter {

    /**
     * Blocks the calling thread.
     *
     * @param nanos how long, positive
     * @throws InterruptedException when the thread is interrupted meanwhile
     */
    void await(long nanos) throws InterruptedException;

    /**
     * @param nanos how long, positive
     * @return a future that completes after that long, without holding a thread meanwhile
     */
    CompletableFuture<Void> after(long nanos);

    /**
     * @return the waiter that uses real time
     */
    static Waiter system() {
        return SystemWaiter.INSTANCE;
    }

    /** The real-time waiter. */
    enum SystemWaiter implements Waiter {
        INSTANCE;

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
            return CompletableFuture.runAsync(() -> { },
                    CompletableFuture.delayedExecutor(nanos, TimeUnit.NANOSECONDS, Runnable::run));
        }
    }
}
