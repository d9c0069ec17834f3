package io.github.ratelimit.spring.boot.internal.web.reactive;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;
import org.springframework.web.server.ResponseStatusException;
import reactor.core.publisher.Mono;

/**
 * The store scheduler's bound: decisions that find every thread busy and the queue full are answered 503 with
 * {@code Retry-After: 1}, never queued without bound; the others are decided once threads free up. And the hand-off
 * of a decision to its call: one made for a call cancelled meanwhile gives its concurrency slot back.
 */
class ReactiveDeciderTest {

    @Test
    void decisionsBeyondTheThreadsAndTheQueueAreAnswered503AndTheOthersAreDecided() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (RateLimiter limiter = RateLimiter.builder().build();
                ReactiveDecider decider = new ReactiveDecider(2, 6)) {
            Guard real = limiter.guard(Rule.builder("decider").limits("1000/1s").build());
            // A guard whose decisions block, as a frozen Redis would, until released.
            Guard blocking = answering(real, (context, permits) -> {
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return real.acquireAsync(context, permits);
            });
            assertThat(decider.offloads()).isTrue();
            List<CompletableFuture<Decision>> all = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                all.add(decider.decide(blocking, RequestContext.empty()).toFuture());
            }
            // Subscribing hands each decision to the scheduler at once, which refuses it at once when full.
            long refused = all.stream()
                    .filter(CompletableFuture::isCompletedExceptionally)
                    .count();
            release.countDown();
            int decided = 0;
            for (CompletableFuture<Decision> f : all) {
                try {
                    assertThat(f.get(30, TimeUnit.SECONDS).permitted()).isTrue();
                    decided++;
                } catch (java.util.concurrent.ExecutionException e) {
                    assertThat(e.getCause()).isInstanceOf(ResponseStatusException.class);
                    ResponseStatusException busy = (ResponseStatusException) e.getCause();
                    assertThat(busy.getStatusCode().value()).isEqualTo(503);
                    assertThat(busy.getHeaders().getFirst("Retry-After")).isEqualTo("1");
                }
            }
            // Two running, and each thread's share of the six queued places: at most 8 of 20.
            assertThat(decided).as("decided").isBetween(3, 8);
            assertThat(refused).as("answered 503 at once").isEqualTo(20 - decided);
        }
    }

    @Test
    void inMemoryDecisionsRunOnTheCallingThread() {
        try (RateLimiter limiter = RateLimiter.builder().build();
                ReactiveDecider decider = new ReactiveDecider(0)) {
            Guard guard = limiter.guard(Rule.builder("memory").limits("1/1m").build());
            Thread caller = Thread.currentThread();
            Thread[] decidedOn = new Thread[1];
            Mono<Decision> decision =
                    decider.decide(guard, RequestContext.empty()).doOnNext(d -> decidedOn[0] = Thread.currentThread());
            assertThat(decision.block().permitted()).isTrue();
            assertThat(decidedOn[0]).isSameAs(caller);
            assertThat(decider.offloads()).isFalse();
        }
    }

    /**
     * A decision made after its call was cancelled (the client went away while the store answered, or as a delay
     * ended) is settled by the hand-off: the concurrency rule's slot comes back. One the call took is the call's to
     * end: a late cancellation gives nothing back.
     */
    @Test
    void aDecisionItsCancelledCallNeverTookGivesItsSlotBack() {
        try (RateLimiter limiter = RateLimiter.builder().build();
                ReactiveDecider decider = new ReactiveDecider(0)) {
            Guard slots = limiter.guard(
                    Rule.builder("handoff").key("global").concurrency(1).build());
            // A decision the call's cancellation cannot stop: the store answering, a delay ending at that moment.
            CompletableFuture<Decision> pending = new CompletableFuture<>() {
                @Override
                public boolean cancel(boolean mayInterruptIfRunning) {
                    return false;
                }
            };
            ReactiveDecider.Handoff handoff = decider.handoff(answering(slots, (context, permits) -> pending));
            handoff.decide(RequestContext.empty())
                    .flatMap(d -> handoff.take() ? Mono.just(d) : Mono.<Decision>empty())
                    .doOnCancel(handoff::cancel)
                    .subscribe()
                    .dispose();
            Decision madeTooLate = slots.acquire(RequestContext.empty());
            assertThat(madeTooLate.permitted()).isTrue();
            pending.complete(madeTooLate);
            assertThat(slots.peek(RequestContext.empty()).permitted())
                    .as("the slot came back")
                    .isTrue();

            Decision decided = slots.acquire(RequestContext.empty());
            ReactiveDecider.Handoff taking =
                    decider.handoff(answering(slots, (context, permits) -> CompletableFuture.completedFuture(decided)));
            Decision taken = taking.decide(RequestContext.empty())
                    .flatMap(d -> taking.take() ? Mono.just(d) : Mono.<Decision>empty())
                    .doOnCancel(taking::cancel)
                    .block();
            assertThat(taken.permitted()).isTrue();
            taking.cancel();
            assertThat(slots.peek(RequestContext.empty()).permitted())
                    .as("the call holds its slot")
                    .isFalse();
            slots.completed(taken, false, 200);
            assertThat(slots.peek(RequestContext.empty()).permitted()).isTrue();
        }
    }

    /**
     * @return the guard, its asynchronous calls answered by {@code answer} (a decision the store or a delay completes,
     *         or one that blocks as a frozen Redis would)
     */
    private static Guard answering(Guard real, BiFunction<RequestContext, Long, CompletableFuture<Decision>> answer) {
        return new Guard() {
            @Override
            public List<Rule> rules() {
                return real.rules();
            }

            @Override
            public Decision acquire(RequestContext context, long permits) {
                return real.acquire(context, permits);
            }

            @Override
            public Decision peek(RequestContext context, long permits) {
                return real.peek(context, permits);
            }

            @Override
            public CompletableFuture<Decision> acquireAsync(RequestContext context, long permits) {
                return answer.apply(context, permits);
            }

            @Override
            public void completed(Decision decision, boolean failed, int status) {
                real.completed(decision, failed, status);
            }

            @Override
            public Decision refund(Decision decision) {
                return real.refund(decision);
            }

            @Override
            public boolean settlesOnCompletion() {
                return real.settlesOnCompletion();
            }
        };
    }
}
