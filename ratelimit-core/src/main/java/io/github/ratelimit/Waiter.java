package io.github.ratelimit;

import java.util.concurrent.CompletableFuture;

/**
 * How a {@link RateLimiter} lets time pass for delayed ({@link Mode#SOFT}) calls. The default parks the
 * calling thread, or completes a future from a scheduler thread the limiter owns ({@link #system()}); tests
 * substitute one that advances a manual clock instead of sleeping.
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
     * A new waiter that uses real time: {@link #await} parks the calling thread; {@link #after} completes futures
     * from a scheduler thread of the waiter's own (started on first use, with the library's class loader as its
     * context loader), never the JDK's shared delay thread, which would pin a web application's class loader after
     * an undeploy. A {@link RateLimiter} built without a waiter creates one and stops its thread when it closes; a
     * waiter created here and handed to a builder is the caller's to close, if it is {@link AutoCloseable}.
     *
     * @return a new real-time waiter
     */
    static Waiter system() {
        return new io.github.ratelimit.internal.ScheduledWaiter();
    }
}
