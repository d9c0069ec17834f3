package io.github.ratelimit;

import java.util.List;
import java.util.Objects;

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
     * @throws NullPointerException when a component is null
     */
    public Decision {
        Objects.requireNonNull(outcome, "outcome");
        verdicts = List.copyOf(verdicts);
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
    public Verdict binding() {
        Verdict best = null;
        for (Verdict v : verdicts) {
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
    public WindowState bindingWindow() {
        WindowState best = null;
        if (outcome == Outcome.REJECTED || outcome == Outcome.DELAYED) {
            Verdict b = binding();
            return b == null ? null : tightest(b.windows(), null);
        }
        for (Verdict v : verdicts) {
            best = tightest(v.windows(), best);
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
        java.util.List<Verdict> all = new java.util.ArrayList<>(verdicts);
        all.addAll(other.verdicts);
        Outcome worst = outcome.compareTo(other.outcome) >= 0 ? outcome : other.outcome;
        return new Decision(worst, all, Math.max(delayNanos, other.delayNanos),
                Math.max(retryAfterNanos, other.retryAfterNanos));
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
            default -> "Rate limit of rule '" + rule + "' exceeded";
        };
        return retryAfterNanos > 0
                ? reason + "; retry after " + RateLimitHeaders.retryAfterSeconds(this) + " s." : reason + ".";
    }

    private static WindowState tightest(List<WindowState> windows, WindowState best) {
        for (WindowState w : windows) {
            if (best == null || w.remaining() < best.remaining()
                    || (w.remaining() == best.remaining() && w.resetNanos() > best.resetNanos())) {
                best = w;
            }
        }
        return best;
    }

    private static long rank(Verdict v) {
        // Outcome severity first, then the wait, then how little is left.
        long minRemaining = Long.MAX_VALUE;
        for (WindowState w : v.windows()) {
            minRemaining = Math.min(minRemaining, w.remaining());
        }
        long severity = (long) v.outcome().ordinal() << 60;
        long wait = Math.min(v.waitNanos(), (1L << 59) - 1);
        if (v.outcome() == Outcome.ALLOWED) {
            return severity + ((1L << 59) - 1 - Math.min(minRemaining, (1L << 59) - 1));
        }
        return severity + wait;
    }
}
