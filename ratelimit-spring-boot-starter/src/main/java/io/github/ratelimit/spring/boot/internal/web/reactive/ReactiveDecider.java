package io.github.ratelimit.spring.boot.internal.web.reactive;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RequestContext;
import io.micrometer.observation.Observation;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

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
 *   <li>A decision made for a call that is cancelled before it gets it (its client went away while the store
 *       answered, or as its delay ended) is not dropped: a {@link Handoff} settles it as a call that never ran, so a
 *       concurrency rule's slot comes back (otherwise nothing would ever end that call, and on Redis its lease would
 *       be renewed as long as the instance runs).</li>
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
        this.store = threads <= 0
                ? null
                : Schedulers.newBoundedElastic(threads, Math.max(1, queue / threads), "ratelimit-store", 60, true);
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
        return decide(guard, context, null);
    }

    /**
     * @param handoff told of the decision as soon as it is made, or {@code null}
     */
    private Mono<Decision> decide(Guard guard, RequestContext context, Handoff handoff) {
        Mono<Decision> decided = Mono.deferContextual(view -> {
            // KEY is a constant javac copies here: reading it needs no context-propagation library at run time.
            CompletableFuture<Decision> future =
                    acquire(guard, context, view.getOrDefault(ObservationThreadLocalAccessor.KEY, null));
            if (handoff != null) {
                handoff.watch(future);
            }
            return settle(future);
        });
        if (store == null) {
            return decided;
        }
        return decided.subscribeOn(store)
                .onErrorMap(RejectedExecutionException.class, e -> new StoreBusyException(queue, e));
    }

    /**
     * Starts deciding with the request's observation (WebFlux keeps it in the Reactor context, not on a thread) as the
     * current one, so the decision's own observation is a span inside the request's.
     */
    private static CompletableFuture<Decision> acquire(Guard guard, RequestContext context, Observation request) {
        if (request == null) {
            return guard.acquireAsync(context);
        }
        try (Observation.Scope ignored = request.openScope()) {
            return guard.acquireAsync(context);
        }
    }

    /**
     * @param guard the rules of the call
     * @return a hand-off for one subscription's decision
     */
    Handoff handoff(Guard guard) {
        return new Handoff(guard);
    }

    /**
     * One call's decision on its way from the limiter to the call, which may be cancelled meanwhile. Exactly one of
     * two things ends the decision: the call {@linkplain #take() takes} it, and ending it is then the call's part (a
     * cancellation included: the call is a {@code flatMap}'s inner, cancelled when it subscribes after the
     * cancellation); or the call is {@linkplain #cancel() cancelled} first, and a permitted decision is settled here
     * as a call that never ran and did not fail ({@link Guard#completed}): a concurrency rule's slot comes back, a
     * rule that counts failures or statuses gets its tokens back, other rules keep theirs, as for any call that ends.
     * Use: {@link #decide} for the decision, {@link #take()} where it reaches the call
     * ({@code flatMap(d -> take() ? call : empty)}), {@code doOnCancel(handoff::cancel)} outermost; one per
     * subscription. Thread-safe.
     */
    final class Handoff {
        private static final Object TAKEN = new Object();
        private static final Object CANCELLED = new Object();

        private final Guard guard;
        /** {@code null} until the decision is made; then the decision, {@link #TAKEN} or {@link #CANCELLED}. */
        private final AtomicReference<Object> state = new AtomicReference<>();

        private Handoff(Guard guard) {
            this.guard = guard;
        }

        /**
         * @param context the call
         * @return the decision, as {@link ReactiveDecider#decide(Guard, RequestContext)} makes it
         */
        Mono<Decision> decide(RequestContext context) {
            return ReactiveDecider.this.decide(guard, context, this);
        }

        /** Learns the decision when it is made, whatever becomes of the publisher that carries it. */
        private void watch(CompletableFuture<Decision> future) {
            future.whenComplete((decision, error) -> {
                if (decision != null && !state.compareAndSet(null, decision) && state.get() == CANCELLED) {
                    unwanted(decision);
                }
            });
        }

        /**
         * @return whether the call gets the decision: {@code false} once it was cancelled (the decision is settled
         *         here then)
         */
        boolean take() {
            Object s = state.getAndUpdate(x -> x == CANCELLED ? CANCELLED : TAKEN);
            return s != CANCELLED;
        }

        /** The call was cancelled: a decision made and not taken is settled now, one not made yet once it is. */
        void cancel() {
            Object s = state.getAndUpdate(x -> x == TAKEN ? TAKEN : CANCELLED);
            if (s instanceof Decision decision) {
                unwanted(decision);
            }
        }

        private void unwanted(Decision decision) {
            if (decision.permitted() && guard.settlesOnCompletion()) {
                offload(() -> guard.completed(decision, false, 0));
            }
        }
    }

    private Mono<Decision> settle(CompletableFuture<Decision> future) {
        if (future.isDone() && !future.isCompletedExceptionally()) {
            return Mono.just(future.join());
        }
        // A delay: the timer completes the future. A failed timer (the limiter closing) lets the call through, as
        // on the servlet path. Cancelling it returns the tokens: store work, offloaded.
        return Mono.fromFuture(future, true)
                .doOnCancel(() -> offload(() -> future.cancel(false)))
                .onErrorReturn(Decision.unlimited())
                .publishOn(Schedulers.parallel());
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
