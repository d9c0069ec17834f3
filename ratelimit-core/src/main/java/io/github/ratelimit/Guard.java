package io.github.ratelimit;

import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Rule.Counted;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToLongFunction;

/**
 * A fixed set of rules, compiled and validated by {@link RateLimiter#guard}, that decides calls together: a
 * call passes only when every rule allows it, and a rule that rejects does not spend the tokens of the others
 * (tokens already taken are returned).
 *
 * <p>Rules are evaluated in order, except that {@link Mode#SOFT} rules come last, so no time is reserved for a
 * call another rule then rejects. Evaluation stops at the first rejection. Thread-safe; create guards once
 * (per method, per URL rule) and reuse them.
 */
public interface Guard {

    /**
     * @return the rules, in evaluation order
     */
    List<Rule> rules();

    /**
     * Decides a call, waiting out a {@link Mode#SOFT} delay on the calling thread. Never throws for a limit: a
     * rejection is a {@link Outcome#REJECTED} decision. If the thread is interrupted while waiting, the
     * tokens are returned, the interrupt status is kept, and the decision is a rejection with
     * {@link Basis#INTERRUPTED}.
     *
     * @param context the call
     * @return the decision, after any delay has passed
     */
    default Decision acquire(RequestContext context) {
        return acquire(context, 1);
    }

    /**
     * As {@link #acquire(RequestContext)}, for a call that counts as {@code permits} calls (a batch of items, a
     * request priced by its size): every rule takes its {@link Rule#cost() cost} {@code permits} times, all or
     * nothing. A rejected call is told when that many can pass.
     *
     * @param context the call
     * @param permits how many calls this one counts as, at least 1
     * @return the decision, after any delay has passed
     * @throws IllegalArgumentException when {@code permits} is below 1, or a rule's limits for the call's key could
     *         never hold that many (a window smaller than the call): such a call would be rejected forever, so it is
     *         an error, raised before any store is asked
     */
    Decision acquire(RequestContext context, long permits);

    /**
     * Decides a call without blocking: the returned future completes at once unless the decision is
     * {@link Outcome#DELAYED}, in which case it completes when the delay has passed. Cancelling the future
     * before then returns the reserved tokens. Dependent actions added without an executor run on the thread that
     * completes the future: the caller's, when it completes at once; else the limiter's delay thread
     * ({@code ratelimit-delays-<n>}), or, for a call waiting for a concurrency slot, one of the limiter's few
     * slot-poll threads ({@code ratelimit-slot-polls-<n>}): keep them short (e.g. an
     * {@code AsyncContext.dispatch()}).
     *
     * @param context the call
     * @return the decision, completed when the call may go on (or is rejected)
     */
    default CompletableFuture<Decision> acquireAsync(RequestContext context) {
        return acquireAsync(context, 1);
    }

    /**
     * As {@link #acquireAsync(RequestContext)}, for a call that counts as {@code permits} calls
     * ({@link #acquire(RequestContext, long)}).
     *
     * @param context the call
     * @param permits how many calls this one counts as, at least 1
     * @return the decision, completed when the call may go on (or is rejected)
     * @throws IllegalArgumentException as {@link #acquire(RequestContext, long)} does, at once (not in the future)
     */
    CompletableFuture<Decision> acquireAsync(RequestContext context, long permits);

    /**
     * Says what deciding a call would give now, without deciding it: whether it would pass, and when it would, for
     * user interfaces ("3 left, next in 12 s") and schedulers. Nothing is taken, no listener or metric hears of it, and
     * a store may still be asked (one round trip per rule on Redis, which counts nothing; none for a key this instance
     * remembers rejecting). The
     * decision's outcome is what {@link #acquire} would decide now: {@link Outcome#ALLOWED} with each window's
     * state, {@link Outcome#DELAYED} with the wait a {@link Mode#SOFT} rule would impose (the limiter's places
     * among waiting calls are not checked), {@link Outcome#REJECTED} with the {@link Decision#retryAfterNanos()} at
     * which it would pass if nothing else took the tokens first.
     *
     * @param context the call
     * @return the decision deciding the call would give now
     * @throws UnsupportedOperationException when the limiter's store cannot peek (every store of this project can)
     */
    default Decision peek(RequestContext context) {
        return peek(context, 1);
    }

    /**
     * As {@link #peek(RequestContext)}, for a call that would count as {@code permits} calls.
     *
     * @param context the call
     * @param permits how many calls it would count as, at least 1
     * @return the decision deciding the call would give now
     * @throws IllegalArgumentException as {@link #acquire(RequestContext, long)} does
     */
    Decision peek(RequestContext context, long permits);

    /**
     * Reports how a call this guard permitted ended, for rules that count only failed calls
     * ({@link Counted#FAILURES}): when the call did not fail, the tokens those rules took for it are returned. As
     * {@link #completed(Decision, boolean, int)} with no status: rules that count statuses keep their tokens.
     *
     * @param decision what {@link #acquire} or {@link #acquireAsync} decided for the call
     * @param failed whether the call failed (a wrong password, a rejected API key)
     */
    default void completed(Decision decision, boolean failed) {
        completed(decision, failed, 0);
    }

    /**
     * Reports how a call this guard permitted ended, for rules that count only some calls: a rule that counts
     * failures ({@link Counted#FAILURES}) gets its tokens back unless the call failed; one that counts statuses
     * ({@link Counted#STATUSES}) unless the response's status is one of {@link Rule#countedStatuses()} (with no
     * status, 0, it keeps them); a concurrency rule ({@link Rule#concurrency()}) gets its slot back whatever the
     * outcome: until this is called, the call holds it. No effect on other rules, or for a decision that permitted
     * nothing. Call it once per decision, after the call; entry points do (the servlet and WebFlux filters after the
     * response, the Spring advisor after the method, or once its {@code CompletionStage} or publisher ends).
     *
     * @param decision what {@link #acquire} or {@link #acquireAsync} decided for the call
     * @param failed whether the call failed (a wrong password, a rejected API key)
     * @param status the HTTP status the call was answered with (500 for a request whose processing threw), or 0
     *        when there is none or it is not known
     */
    void completed(Decision decision, boolean failed, int status);

    /**
     * Returns every token a permitted call took under this guard's rules, for a call that a later layer refused
     * after this guard let it through (the servlet filter decided the URL rules, then the handler's own rule
     * rejected the call): a rejected call costs the other rules nothing. No effect for a decision that permitted
     * nothing; call it at most once per decision, and not together with {@link #completed}.
     *
     * @param decision what {@link #acquire} or {@link #acquireAsync} decided for the call
     * @return the decision as it stands after the refund, for the rate-limit headers of the response that refuses
     *         the call: each rule that gave its tokens back reports its windows with them (a window the refund fills
     *         again says it is full); {@code decision} itself when nothing was given back
     */
    Decision refund(Decision decision);

    /**
     * Charges a call that this guard permitted what it used, once it has run, under the rules that charge
     * ({@link Rule#charge()}; no effect on the others): each took the call's estimate when it admitted it (its permits
     * times its cost, as any rule); now it takes the rest of {@code actual}, or gives back what the call did not use
     * (as far as the store can: a window never holds more than its capacity). What it takes beyond the tokens left is
     * debt: the windows go below zero (a bucket) or past their limit (a sliding counter, in the interval the call was
     * counted in; a calendar quota, in its window), and the key's next calls wait ({@link Mode#SOFT}) or are refused
     * until the windows allow them again, with a {@link Decision#retryAfterNanos()} that covers the debt and the next
     * call's estimate.
     *
     * <p>Bounded: a window is never left owing more than it refills in a day (or its capacity, for a window of a day
     * or longer), so a true report of many times a window is owed in full, while a huge one (a bug, a hostile
     * upstream) neither overflows nor blocks a key for much longer than a day; the rest is not taken. (A sliding
     * counter forgets a debt with the interval it is counted in, two periods on at most, and a calendar quota when its
     * window ends: their debts are shorter.) A call that
     * reports no usable number ({@code actual} below 0: it threw, or its report was absent or no whole number) keeps
     * its estimate, and that is logged once per rule every 10 s and counted. When the store fails, the charge is lost
     * (the call keeps its estimate): it is logged, counted, and never thrown, as the response has been given.
     *
     * <p>Why here and not on the decision: a {@link Decision} is an immutable record of what was decided, with no
     * reference to its guard; a call's end is reported to the guard, as {@link #completed} and {@link #refund} are.
     * Call it once per decision, after the call, instead of {@link #completed} for those rules (a charging rule counts
     * every call and holds no slot, so {@link #completed} does nothing to it; both may be called for a guard that also
     * has such rules). The entry points do: the Spring advisor after the method (or once its {@code CompletionStage} or
     * publisher ends), the servlet and WebFlux filters after the response. No effect for a decision that permitted
     * nothing.
     *
     * @param decision what {@link #acquire} or {@link #acquireAsync} decided for the call
     * @param actual the tokens the call used, 0 or more; below 0 when it reported no usable number
     */
    default void settle(Decision decision, long actual) {
        settle(decision, rule -> actual);
    }

    /**
     * As {@link #settle(Decision, long)}, each charging rule with the tokens the call used under it: for rules that
     * read them from different places.
     *
     * @param decision what {@link #acquire} or {@link #acquireAsync} decided for the call
     * @param actual the tokens the call used under a charging rule (asked only for those), below 0 for no usable
     *        number
     * @throws UnsupportedOperationException from a guard written before this method (the default) that has charging
     *         rules; the limiter's guards implement it
     */
    default void settle(Decision decision, ToLongFunction<Rule> actual) {
        if (charges()) {
            throw new UnsupportedOperationException(getClass().getName() + " cannot charge what a call used");
        }
    }

    /**
     * @return whether any of this guard's rules charges what a call used ({@link Rule#charge()}), so {@link #settle}
     *         has work to do and must be called
     */
    default boolean charges() {
        return rules().stream().anyMatch(r -> r.charge() != null);
    }

    /** What settling a call did under one charging rule ({@link RateLimiter.Listener#onSettled}). */
    enum Settlement {
        /** The call used more than its estimate: the rest was taken. */
        CHARGED,
        /** The call used more than its estimate, and the debt bound held part of the rest back. */
        CLAMPED,
        /** The call used less than its estimate: the difference was given back. */
        REFUNDED,
        /** The call used its estimate: nothing to do. */
        EXACT,
        /** The call reported no usable number (it threw, or its report was absent or no whole number): it keeps its estimate. */
        UNUSABLE,
        /** The store failed (or forgot the key's plan): the charge or refund is lost; the call keeps its estimate. */
        LOST
    }

    /**
     * @return whether any of this guard's rules counts only some calls (failures, statuses) or holds slots (a
     *         concurrency rule), so {@link #completed} has work to do and must be called
     */
    boolean settlesOnCompletion();
}
