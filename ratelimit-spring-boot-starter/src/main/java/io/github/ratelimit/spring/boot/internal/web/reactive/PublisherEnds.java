package io.github.ratelimit.spring.boot.internal.web.reactive;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.spring.boot.internal.method.MethodCharges;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

/**
 * Ends a permitted call when the publisher its method returned ends: its rules that charge what it used are settled
 * with the last value it gave ({@link MethodCharges}), then {@link Guard#completed} hears whether it failed (an error
 * or a cancellation is a failure, and keeps the charging rules' estimate). Once per call, however many times its
 * publisher is subscribed (a retry, a repeat): a decision is settled and completed once.
 */
final class PublisherEnds {

    private final MethodInvocation invocation;
    private final Guard guard;
    private final Decision decision;
    private volatile @Nullable Object last;
    private volatile @Nullable Throwable error;
    private final AtomicBoolean ended = new AtomicBoolean();

    private PublisherEnds(MethodInvocation invocation, Guard guard, Decision decision) {
        this.invocation = invocation;
        this.guard = guard;
        this.decision = decision;
    }

    /**
     * @param offload runs the ending, off the event loop when the store blocks
     * @return {@code call}, ending the call when it ends
     */
    static <T> Mono<T> ending(
            Mono<T> call, MethodInvocation invocation, Guard guard, Decision decision, Consumer<Runnable> offload) {
        PublisherEnds end = new PublisherEnds(invocation, guard, decision);
        return call.doOnNext(end::next)
                .doOnError(end::failed)
                .doFinally(signal -> offload.accept(() -> end.end(signal)));
    }

    /** As {@link #ending(Mono, MethodInvocation, Guard, Decision, Consumer)}, charged with the last element. */
    static <T> Flux<T> ending(
            Flux<T> call, MethodInvocation invocation, Guard guard, Decision decision, Consumer<Runnable> offload) {
        PublisherEnds end = new PublisherEnds(invocation, guard, decision);
        return call.doOnNext(end::next)
                .doOnError(end::failed)
                .doFinally(signal -> offload.accept(() -> end.end(signal)));
    }

    private void next(Object value) {
        last = value;
    }

    private void failed(Throwable e) {
        error = e;
    }

    private void end(SignalType signal) {
        if (!ended.compareAndSet(false, true)) {
            return; // a later subscription's end: the call was settled by the first
        }
        boolean failed = signal != SignalType.ON_COMPLETE;
        if (guard.charges()) {
            Throwable e = error;
            MethodCharges.settle(
                    invocation,
                    guard,
                    decision,
                    last,
                    failed ? (e != null ? e : new CancellationException("the subscriber cancelled")) : null);
        }
        guard.completed(decision, failed);
    }
}
