package io.github.ratelimit.spring.boot.web.reactive;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RequestContext;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;

/**
 * Decides reactive calls without blocking an event loop, for the WebFlux filter and the advisor alike.
 *
 * <ul>
 *   <li>A decision the limiter makes in memory (local buckets, no {@code LimitProvider} bean) runs on the calling
 *       thread: microseconds, no hand-off.</li>
 *   <li>A decision that may wait on I/O (Redis, whose Jedis client blocks; a {@code LimitProvider} that reads a
 *       database) runs on a bounded scheduler of its own: {@code threads} threads (the Redis pool's connections;
 *       more would only wait for one) and at most {@value #QUEUE} decisions queued. The store's command timeout,
 *       circuit breaker and failure policies apply there as on the servlet path. A decision that finds the queue
 *       full is answered 503 with {@code Retry-After: 1}: Redis is not keeping up, and queueing without bound would
 *       hold every request's memory.</li>
 *   <li>A call decided on the store's scheduler goes on there until its next asynchronous step (the handler's
 *       non-blocking work, then Netty's write): one thread hand-off fewer per request than hopping to another
 *       scheduler, measured in docs/BENCHMARKS.md. Work that blocks in a handler would hold a store thread as it
 *       would hold any other; WebFlux handlers must not block anyway.</li>
 *   <li>A SOFT delay is the limiter's timer completing a future: nothing waits on a thread meanwhile. The call goes on
 *       on Reactor's parallel scheduler, never on the timer's own thread. A cancelled call (the client went away)
 *       cancels the future, which returns the reserved tokens.</li>
 *   <li>Returning tokens when a call has ended (a cancelled delay, a call that did not fail on a rule that counts
 *       failures, a refund) writes to the store as a decision does: with a store that blocks, it runs on the store
 *       scheduler too, and nothing waits for it ({@link #offload}).</li>
 * </ul>
 */
public final class ReactiveDecider implements AutoCloseable {

    /** The most decisions waiting for a thread of the store scheduler. */
    static final int QUEUE = 10_000;

    private final Scheduler store;
    private final int queue;

    /**
     * @param threads the store scheduler's threads, or 0 when every decision is made in memory
     */
    public ReactiveDecider(int threads) {
        this(threads, QUEUE);
    }

    /**
     * @param threads the store scheduler's threads, or 0 when every decision is made in memory
     * @param queue the most decisions waiting for a thread, all threads together (each thread queues its share)
     */
    ReactiveDecider(int threads, int queue) {
        this.queue = queue;
        this.store = threads <= 0 ? null : Schedulers.newBoundedElastic(threads, Math.max(1, queue / threads),
                "ratelimit-store", 60, true);
    }

    /**
     * @return whether decisions run on the store scheduler
     */
    boolean offloads() {
        return store != null;
    }

    /**
     * @param guard the rules
     * @param context the call, read on whichever thread decides
     * @return the decision, once the call may go on or is rejected; on a thread that may run non-blocking code
     */
    Mono<Decision> decide(Guard guard, RequestContext context) {
        if (store == null) {
            return Mono.defer(() -> settle(guard.acquireAsync(context)));
        }
        return Mono.defer(() -> settle(guard.acquireAsync(context)))
                .subscribeOn(store)
                .onErrorMap(RejectedExecutionException.class, e -> new StoreBusyException(queue, e));
    }

    private Mono<Decision> settle(CompletableFuture<Decision> future) {
        if (future.isDone() && !future.isCompletedExceptionally()) {
            return Mono.just(future.join());
        }
        // A delay: the timer completes the future. A failed timer (the limiter closing) lets the call through, as
        // on the servlet path. Cancelling it returns the tokens: store work, offloaded.
        return Mono.fromFuture(future, true).doOnCancel(() -> offload(() -> future.cancel(false)))
                .onErrorReturn(Decision.unlimited()).publishOn(Schedulers.parallel());
    }

    /**
     * Runs store work that no call waits for (returning a finished call's tokens): on the calling thread when
     * decisions are made in memory, else on the store scheduler, so an event loop never blocks on the store. When
     * that scheduler's queue is full, on Reactor's bounded elastic scheduler.
     *
     * @param work the store work
     */
    void offload(Runnable work) {
        if (store == null) {
            work.run();
            return;
        }
        try {
            store.schedule(work);
        } catch (RejectedExecutionException e) {
            Schedulers.boundedElastic().schedule(work);
        }
    }

    @Override
    public void close() {
        if (store != null) {
            store.dispose();
        }
    }
}
