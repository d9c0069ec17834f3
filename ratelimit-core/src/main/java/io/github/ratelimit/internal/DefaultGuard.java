package io.github.ratelimit.internal;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.Rule.Counted;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToLongFunction;

/**
 * The {@link Guard} of {@link DefaultRateLimiter}. Immutable; thread-safe.
 */
final class DefaultGuard implements Guard {

    private final DefaultRateLimiter limiter;
    private final CompiledRule[] rules;
    private final List<Rule> ruleList;
    private final boolean settles;
    private final boolean charges;
    /** The only rule, when its calls may be decided with no bookkeeping ({@link DefaultRateLimiter#decideAlone}). */
    private final CompiledRule alone;

    DefaultGuard(DefaultRateLimiter limiter, CompiledRule[] rules) {
        this.limiter = limiter;
        this.rules = rules;
        this.alone = rules.length == 1 && limiter.decidesAlone(rules[0]) ? rules[0] : null;
        this.ruleList = Arrays.stream(rules).map(r -> r.rule).toList();
        this.settles = Arrays.stream(rules).anyMatch(r -> r.rule.count() != Counted.ALL || r.slots);
        this.charges = Arrays.stream(rules).anyMatch(r -> r.rule.charge() != null);
    }

    @Override
    public boolean settlesOnCompletion() {
        return settles;
    }

    @Override
    public void completed(Decision decision, boolean failed, int status) {
        if (settles && decision != null && decision.permitted()) {
            // A concurrency rule's slot comes back whatever the outcome: the call is no longer in flight.
            limiter.returnTokens(
                    rules,
                    decision,
                    rule -> rule.concurrency() > 0
                            || switch (rule.count()) {
                                case FAILURES -> !failed;
                                case STATUSES ->
                                    status != 0 && !rule.countedStatuses().contains(status);
                                default -> false;
                            });
        }
    }

    @Override
    public boolean charges() {
        return charges;
    }

    @Override
    public void settle(Decision decision, ToLongFunction<Rule> actual) {
        if (charges && decision != null && decision.permitted()) {
            limiter.settle(rules, decision, actual);
        }
    }

    @Override
    public Decision refund(Decision decision) {
        if (decision != null && decision.permitted()) {
            return limiter.returnTokens(rules, decision, rule -> true);
        }
        return decision;
    }

    private static void checkPermits(long permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("A call takes at least 1 permit, not " + permits);
        }
    }

    @Override
    public List<Rule> rules() {
        return ruleList;
    }

    @Override
    public Decision peek(RequestContext context, long permits) {
        checkPermits(permits);
        return rules.length == 0 ? Decision.unlimited() : limiter.peek(rules, context, permits);
    }

    /**
     * @return the key of the only rule, resolved once for the call, when the call may be decided with no bookkeeping
     *         ({@link DefaultRateLimiter#resolveAlone}: empty when missing); {@code null} when it may not
     */
    String aloneKey(RequestContext context, long permits) {
        return alone != null && permits == 1 ? DefaultRateLimiter.resolveAlone(alone, context) : null;
    }

    /**
     * @param key the call's {@link #aloneKey}, not {@code null}
     * @return the decision on a call that a bucket in this JVM allows at once, made with no bookkeeping
     *         ({@link DefaultRateLimiter#decideAlone}); {@code null}, having taken nothing, when the call needs
     *         {@link #acquireEvaluated} or {@link #acquireAsyncEvaluated}
     */
    Decision decideAtOnce(String key) {
        return limiter.decideAlone(alone, key);
    }

    @Override
    public Decision acquire(RequestContext context, long permits) {
        String key = aloneKey(context, permits);
        Decision decision = key == null ? null : decideAtOnce(key);
        return decision != null ? decision : acquireEvaluated(context, permits, key);
    }

    /**
     * {@link #acquire} on the general path: every rule's bookkeeping, any wait.
     *
     * @param key the call's {@link #aloneKey}, or {@code null} to resolve the keys here
     */
    Decision acquireEvaluated(RequestContext context, long permits, String key) {
        checkPermits(permits);
        if (rules.length == 0) {
            return Decision.unlimited();
        }
        Evaluation ev = limiter.evaluate(rules, context, permits, key);
        Decision decision = ev.decision();
        return decision.outcome() != Outcome.DELAYED ? decision : awaitDelayed(ev, decision);
    }

    /** Waits out a delay, and then any slots, on the calling thread (kept apart: the common path stays small). */
    private Decision awaitDelayed(Evaluation ev, Decision decision) {
        SlotWaits slots = ev.slotWaitCount() == 0
                ? null
                : new SlotWaits(limiter, ev, rules, limiter.clock().currentTimeNanos());
        try {
            if (decision.delayNanos() > 0) {
                limiter.waiter().await(decision.delayNanos());
            }
            return slots == null ? decision : slots.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            ev.refund();
            Decision interrupted = Verdicts.interrupted(decision);
            if (slots != null) {
                limiter.notifyListeners(interrupted);
            }
            return interrupted;
        } catch (RuntimeException | Error e) {
            // Not a store failure (each rule's policy answers those): what the call took goes back.
            ev.refund();
            throw e;
        } finally {
            ev.finish();
        }
    }

    @Override
    public CompletableFuture<Decision> acquireAsync(RequestContext context, long permits) {
        String key = aloneKey(context, permits);
        Decision decision = key == null ? null : decideAtOnce(key);
        return decision != null
                ? CompletableFuture.completedFuture(decision)
                : acquireAsyncEvaluated(context, permits, key);
    }

    /**
     * {@link #acquireAsync} on the general path: every rule's bookkeeping, any wait.
     *
     * @param key the call's {@link #aloneKey}, or {@code null} to resolve the keys here
     */
    CompletableFuture<Decision> acquireAsyncEvaluated(RequestContext context, long permits, String key) {
        checkPermits(permits);
        if (rules.length == 0) {
            return CompletableFuture.completedFuture(Decision.unlimited());
        }
        Evaluation ev = limiter.evaluate(rules, context, permits, key);
        Decision decision = ev.decision();
        if (decision.outcome() != Outcome.DELAYED) {
            return CompletableFuture.completedFuture(decision);
        }
        if (ev.slotWaitCount() > 0) {
            return awaitSlots(
                    ev, new SlotWaits(limiter, ev, rules, limiter.clock().currentTimeNanos()));
        }
        CompletableFuture<Decision> result = new CompletableFuture<>();
        CompletableFuture<Void> timer = limiter.waiter().after(decision.delayNanos());
        timer.whenComplete((ignored, error) -> {
            if (ev.finish()) {
                if (error != null) {
                    ev.refund();
                    result.completeExceptionally(error);
                } else {
                    result.complete(decision);
                }
            }
        });
        result.whenComplete((ignored, error) -> {
            if (result.isCancelled() && ev.finish()) {
                ev.refund();
                timer.cancel(false);
            }
        });
        return result;
    }

    /** A call waiting for slots, after any delay, without holding a thread ({@link SlotWaits#awaitAsync}). */
    private CompletableFuture<Decision> awaitSlots(Evaluation ev, SlotWaits slots) {
        CompletableFuture<Decision> result = new CompletableFuture<>();
        long delay = ev.decision().delayNanos();
        CompletableFuture<Void> timer =
                delay > 0 ? limiter.waiter().after(delay) : CompletableFuture.completedFuture(null);
        timer.whenCompleteAsync(
                (ignored, error) -> {
                    if (error == null) {
                        slots.awaitAsync(result);
                    } else {
                        slots.abandon(result, error);
                    }
                },
                limiter.slotPolls());
        // Completed by the caller (cancelled, a timeout): what the call took goes back now, not at the next attempt.
        result.whenComplete((ignored, error) -> {
            slots.abandon(result, null);
            timer.cancel(false);
        });
        return result;
    }
}
