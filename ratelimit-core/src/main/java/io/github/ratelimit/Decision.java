package io.github.ratelimit;

import io.github.ratelimit.internal.bucket.AllowedVerdict;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The decision on one call under all the rules that apply to it. Immutable; the rate-limit headers and the
 * metrics are computed from it alone.
 *
 * @param outcome the most restrictive outcome of the verdicts ({@link Outcome#ALLOWED} when there are none)
 * @param verdicts one per rule that was evaluated, in evaluation order; evaluation stops at the first
 *        rejection, so later rules have no verdict then
 * @param delayNanos for {@link Outcome#DELAYED}, how long the call is held back (the longest delay of its
 *        rules); otherwise 0
 * @param retryAfterNanos for {@link Outcome#REJECTED}, how long until the call could pass (0 when unknown);
 *        otherwise 0
 */
public record Decision(Outcome outcome, List<Verdict> verdicts, long delayNanos, long retryAfterNanos) {

    private static final Decision UNLIMITED = new Decision(Outcome.ALLOWED, List.of(), 0, 0);

    /**
     * @param outcome the most restrictive outcome of the verdicts
     * @param verdicts one per rule that was evaluated, in evaluation order
     * @param delayNanos for {@link Outcome#DELAYED}, how long the call is held back; otherwise 0
     * @param retryAfterNanos for {@link Outcome#REJECTED}, how long until the call could pass; otherwise 0
     * @throws NullPointerException when a component is null
     */
    public Decision {
        Objects.requireNonNull(outcome, "outcome");
        // The engine's list of one allowed verdict, made when read, is immutable already.
        verdicts = verdicts instanceof AllowedVerdict ? verdicts : List.copyOf(verdicts);
    }

    /**
     * @return the decision for a call no rule applies to
     */
    public static Decision unlimited() {
        return UNLIMITED;
    }

    /**
     * @return whether the call may go on (possibly after {@link #delayNanos()})
     */
    public boolean permitted() {
        return outcome.permits();
    }

    /**
     * The verdict that decided the outcome: the rejecting one for a rejection, the one with the longest delay
     * for a delay, otherwise the one whose window has the fewest tokens left.
     *
     * @return the binding verdict, or {@code null} when there are no verdicts
     */
    public @Nullable Verdict binding() {
        // Indexed loops here and below: the lists are random-access, and a decision's headers read them on every call.
        Verdict best = null;
        for (int i = 0; i < verdicts.size(); i++) {
            Verdict v = verdicts.get(i);
            if (best == null || rank(v) > rank(best)) {
                best = v;
            }
        }
        return best;
    }

    /**
     * The window the classic {@code X-RateLimit-*} headers report: of all windows of all verdicts, the one with
     * the fewest tokens left (ties: the one that takes longest to reset); on rejection or delay, only the
     * binding verdict's windows are considered.
     *
     * @return the window, or {@code null} when no bucket was consulted
     */
    public @Nullable Window bindingWindow() {
        Window best = null;
        if (outcome == Outcome.REJECTED || outcome == Outcome.DELAYED) {
            Verdict b = binding();
            return b == null ? null : tightest(b.windows(), null);
        }
        for (int i = 0; i < verdicts.size(); i++) {
            best = tightest(verdicts.get(i).windows(), best);
        }
        return best;
    }

    /**
     * Combines two decisions on one call made at different layers (a URL filter, then a method annotation), for
     * headers that report both: the more restrictive outcome, all verdicts, the longer delay and wait.
     *
     * @param other the other decision on the same call
     * @return the combination
     */
    public Decision combine(Decision other) {
        if (other == null || other.verdicts.isEmpty()) {
            return this;
        }
        if (verdicts.isEmpty()) {
            return other;
        }
        List<Verdict> all = new ArrayList<>(verdicts);
        all.addAll(other.verdicts);
        Outcome worst = outcome.compareTo(other.outcome) >= 0 ? outcome : other.outcome;
        return new Decision(
                worst, all, Math.max(delayNanos, other.delayNanos), Math.max(retryAfterNanos, other.retryAfterNanos));
    }

    /**
     * @return a sentence saying why a call was rejected (or that it was not), for response bodies, exceptions and
     *         logs: it names the rule as clients see it ({@link Verdict#publicName()}, which for an unnamed
     *         {@code @RateLimit} rule is a digest, not its class and method), and never the key. The
     *         {@link #binding()} verdict's {@link Verdict#rule()} is the name operators know it by.
     */
    public String describe() {
        Verdict v = binding();
        if (v == null || outcome != Outcome.REJECTED) {
            return "Request permitted";
        }
        String rule = v.publicName();
        String reason = switch (v.basis()) {
            case KEY_MISSING -> "No key could be resolved for rate limit rule '" + rule + "'";
            case FAIL_CLOSED -> "The rate limit store is unavailable and rule '" + rule + "' fails closed";
            case CONTENTION -> "Rate limit rule '" + rule + "' could not be decided under contention";
            case WAITERS_FULL -> "Too many requests are already waiting under rate limit rule '" + rule + "'";
            case INTERRUPTED -> "Interrupted while waiting under rate limit rule '" + rule + "'";
            case BLOCKED -> "Rate limit rule '" + rule + "' blocks this client for a while after it exceeded the limit";
            default -> "Rate limit of rule '" + rule + "' exceeded";
        };
        return retryAfterNanos > 0
                ? reason + "; retry after " + RateLimitHeaders.retryAfterSeconds(this) + " s."
                : reason + ".";
    }

    private static @Nullable Window tightest(List<Window> windows, @Nullable Window best) {
        for (int i = 0; i < windows.size(); i++) {
            Window w = windows.get(i);
            if (best == null
                    || w.remaining() < best.remaining()
                    || (w.remaining() == best.remaining() && w.resetNanos() > best.resetNanos())) {
                best = w;
            }
        }
        return best;
    }

    private static long rank(Verdict v) {
        // Outcome severity first, then the wait, then how little is left.
        long minRemaining = Long.MAX_VALUE;
        List<Window> windows = v.windows();
        for (int i = 0; i < windows.size(); i++) {
            minRemaining = Math.min(minRemaining, windows.get(i).remaining());
        }
        long severity = (long) v.outcome().ordinal() << 60;
        long wait = Math.min(v.waitNanos(), (1L << 59) - 1);
        if (v.outcome() == Outcome.ALLOWED) {
            return severity + ((1L << 59) - 1 - Math.min(minRemaining, (1L << 59) - 1));
        }
        return severity + wait;
    }

    /**
     * One rule's part of a {@link Decision}.
     *
     * @param rule the rule's name ({@link Rule#name()}): what operators see, in metrics, logs and the Actuator endpoint
     * @param key the key the call was counted by (possibly hashed, see {@link io.github.ratelimit.key.KeyResolver});
     *        {@code null} when it could not be resolved. May identify a person: keep it out of metric tags.
     * @param mode the rule's mode
     * @param outcome what the rule decided
     * @param basis what the verdict rests on
     * @param windows the state of each window after the decision; empty when no bucket was consulted, and for a
     *        permitted call of a rule that counts only failures (its windows say nothing of the request rate)
     * @param waitNanos for {@link Outcome#DELAYED}, the delay; for {@link Outcome#REJECTED} and
     *        {@link Outcome#SHADOW_REJECTED}, how long until the call could pass (0 when unknown); otherwise 0
     * @param receipt what identifies the permits this call took in the store, so {@link Guard#refund} gives back
     *        exactly these (a sliding log forgets this call's entry, not another's); opaque, 0 when nothing was taken
     *        or the algorithm needs none
     * @param publicName the name clients see for the rule ({@link Rule#publicName()}), in the rate-limit headers and
     *        response bodies; {@code null} means {@code rule}
     * @param permits the permits the call asked of this rule: the rule's {@link Rule#cost() cost} times the call's
     *        permits ({@link Guard#acquire(RequestContext, long)}); 0 in a verdict made without it, which stands for
     *        the rule's own cost
     */
    public record Verdict(
            String rule,
            @Nullable String key,
            Mode mode,
            Outcome outcome,
            Basis basis,
            List<Window> windows,
            long waitNanos,
            long receipt,
            String publicName,
            long permits) {

        // Wide on purpose: users read these components by name (listeners, rejection handlers, tests), so they stay
        // one public record. The engine builds verdicts in one place (internal Verdicts.of and Verdicts.copy).

        /**
         * A verdict that does not say how many permits the call asked (the rule's own cost).
         *
         * @param rule the rule's name
         * @param key the key, or {@code null}
         * @param mode the rule's mode
         * @param outcome what the rule decided
         * @param basis what the verdict rests on
         * @param windows the state of each window
         * @param waitNanos the delay or the wait
         * @param receipt the permits' receipt, or 0
         * @param publicName the name clients see for the rule
         */
        public Verdict(
                String rule,
                @Nullable String key,
                Mode mode,
                Outcome outcome,
                Basis basis,
                List<Window> windows,
                long waitNanos,
                long receipt,
                String publicName) {
            this(rule, key, mode, outcome, basis, windows, waitNanos, receipt, publicName, 0);
        }

        /**
         * A verdict whose rule shows clients its own name.
         *
         * @param rule the rule's name
         * @param key the key, or {@code null}
         * @param mode the rule's mode
         * @param outcome what the rule decided
         * @param basis what the verdict rests on
         * @param windows the state of each window
         * @param waitNanos the delay or the wait
         * @param receipt the permits' receipt, or 0
         */
        public Verdict(
                String rule,
                @Nullable String key,
                Mode mode,
                Outcome outcome,
                Basis basis,
                List<Window> windows,
                long waitNanos,
                long receipt) {
            this(rule, key, mode, outcome, basis, windows, waitNanos, receipt, rule);
        }

        /**
         * A verdict without a receipt, whose rule shows clients its own name.
         *
         * @param rule the rule's name
         * @param key the key, or {@code null}
         * @param mode the rule's mode
         * @param outcome what the rule decided
         * @param basis what the verdict rests on
         * @param windows the state of each window
         * @param waitNanos the delay or the wait
         */
        public Verdict(
                String rule,
                @Nullable String key,
                Mode mode,
                Outcome outcome,
                Basis basis,
                List<Window> windows,
                long waitNanos) {
            this(rule, key, mode, outcome, basis, windows, waitNanos, 0, rule);
        }

        /**
         * @param rule the rule's name
         * @param key the key, or {@code null}
         * @param mode the rule's mode
         * @param outcome what the rule decided
         * @param basis what the verdict rests on
         * @param windows the state of each window, or {@code null} for none
         * @param waitNanos the delay or the wait
         * @param receipt the permits' receipt, or 0
         * @param publicName the name clients see for the rule, or {@code null} for {@code rule}
         * @param permits the permits the call asked of this rule, or 0 for the rule's own cost
         * @throws NullPointerException when a required component is null
         */
        public Verdict {
            Objects.requireNonNull(rule, "rule");
            Objects.requireNonNull(mode, "mode");
            Objects.requireNonNull(outcome, "outcome");
            Objects.requireNonNull(basis, "basis");
            windows = windows == null ? List.of() : windows;
            publicName = publicName == null ? rule : publicName;
        }
    }

    /**
     * The outcome of a decision, from the least to the most restrictive. When several rules decide on one
     * request, the most restrictive outcome is the request's.
     */
    public enum Outcome {

        /** The request may go on now. */
        ALLOWED,

        /** A {@link Mode#SHADOW} rule would have rejected the request; it goes on, and the event is reported. */
        SHADOW_REJECTED,

        /** A {@link Mode#SOFT} rule reserved tokens; the request goes on after the decision's delay. */
        DELAYED,

        /** The request must not go on. */
        REJECTED;

        /**
         * @return whether the request may go on (possibly after a delay)
         */
        public boolean permits() {
            return this != REJECTED;
        }
    }

    /**
     * What a rule's verdict rests on.
     */
    public enum Basis {

        /** The rule's bucket in the configured store. */
        BUCKET,

        /** A bucket in this JVM's memory, because the store failed ({@link StoreFailurePolicy#LOCAL_FALLBACK}). */
        FALLBACK_BUCKET,

        /** The store failed and the rule lets requests through ({@link StoreFailurePolicy#FAIL_OPEN}). */
        FAIL_OPEN,

        /** The store failed and the rule rejects requests ({@link StoreFailurePolicy#FAIL_CLOSED}). */
        FAIL_CLOSED,

        /**
         * The store answered, but the bucket kept changing under concurrent writers beyond its retry budget: the
         * request is rejected (never admitted uncounted), whatever the rule's failure policy.
         */
        CONTENTION,

        /** The key could not be resolved; see the rule's {@link MissingKeyPolicy}. */
        KEY_MISSING,

        /** A {@link Mode#SOFT} rule would have delayed the request, but the cap on waiting requests was reached. */
        WAITERS_FULL,

        /** The thread was interrupted while a {@link Mode#SOFT} delay was under way; the tokens were returned. */
        INTERRUPTED,

        /**
         * The call is exempt: its client address is one no rule limits, or its key (or address) one the rule never
         * limits ({@link RateLimiter.Builder#exempt}); no store was asked.
         */
        EXEMPT,

        /**
         * The key is blocked: the rule refused one of its calls less than its {@link Rule#blockFor()} ago, so it
         * refuses this one whatever its windows hold (a {@link Mode#SHADOW} rule only records it); the verdict's wait
         * is the block's remaining time.
         */
        BLOCKED
    }

    /**
     * The state of one window of a rule's bucket right after a decision; what the rate-limit headers report.
     *
     * @param name the window's name within its rule, its period in text form ({@code 1s}, {@code 1m})
     * @param limit the bucket capacity of the window (above {@code permits} for a limit with a burst)
     * @param permits tokens the window adds per period: the sustained rate is {@code permits / period}
     * @param period the window's refill period
     * @param remaining tokens left, never negative
     * @param resetNanos nanoseconds until the window is full again (0 when it is full)
     */
    public record Window(String name, long limit, long permits, Duration period, long remaining, long resetNanos) {

        /** The name of a concurrency rule's one window ({@link Rule#concurrency()}). */
        public static final String CONCURRENCY = "concurrency";

        /**
         * @param max the most calls in flight
         * @param inFlight the calls in flight
         * @return a concurrency rule's slots as a window, named {@value #CONCURRENCY}: {@code limit} and
         *         {@code permits} the most calls in flight, {@code remaining} the free slots, a zero period and reset
         *         (nothing refills with time; a slot comes back when a call ends)
         */
        public static Window concurrency(long max, long inFlight) {
            return new Window(CONCURRENCY, max, max, Duration.ZERO, Math.max(0, max - inFlight), 0);
        }

        /** @return whether this window counts calls in flight ({@link #concurrency}) rather than calls in time */
        public boolean concurrent() {
            return period.isZero();
        }
    }
}
