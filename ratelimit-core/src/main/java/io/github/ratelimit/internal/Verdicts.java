package io.github.ratelimit.internal;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Decision.Verdict;
import io.github.ratelimit.internal.bucket.BucketKeyState;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

/** Verdicts made, copied with other values, and restated once tokens are given back or a wait ends early. */
final class Verdicts {

    private Verdicts() {}

    /** @return the verdict of a rule for a key, for a call that asked the rule for {@code permits} */
    static Verdict of(
            CompiledRule rule,
            String key,
            Outcome outcome,
            Basis basis,
            List<Decision.Window> windows,
            long wait,
            long receipt,
            long permits) {
        return new Verdict(rule.name, key, rule.mode, outcome, basis, windows, wait, receipt, rule.publicName, permits);
    }

    /** @return a verdict for the rule, key and permits of {@code v}, with these values */
    static Verdict copy(
            Verdict v, Outcome outcome, Basis basis, List<Decision.Window> windows, long wait, long receipt) {
        return new Verdict(
                v.rule(), v.key(), v.mode(), outcome, basis, windows, wait, receipt, v.publicName(), v.permits());
    }

    /**
     * @return whether {@code v} is a delayed verdict of a concurrency rule that found no free slot: the call waits for
     *         one after the decision ({@link SlotWaits}); the verdict holds no receipt until it has one
     */
    static boolean awaitsSlot(Verdict v, CompiledRule rule) {
        return rule.slots && v.outcome() == Outcome.DELAYED && v.receipt() == 0;
    }

    /** @return the permits the call of {@code v} took from {@code rule} */
    static long permits(Verdict v, CompiledRule rule) {
        return v.permits() > 0 ? v.permits() : rule.cost;
    }

    /**
     * A permitted verdict as it stands once its rule's tokens are given back (another rule rejected the call): each
     * window has the cost back, and says when it is full again from that state, not the one before the refund. A
     * window the refund fills is full now: its reset is 0. Otherwise the store is not read again (on Redis, a round
     * trip more), so the reset is computed from the state before: a {@link Algorithm#TOKEN_BUCKET} window refills
     * continuously, so the cost comes off its reset at the window's rate; a {@link Algorithm#FIXED_WINDOW} window,
     * whose capacity is its limit, still refills at the next boundary; a sliding window keeps its reset, an upper
     * bound (the call given back may have been the one the window waited for).
     */
    static Verdict refunded(Verdict v, CompiledRule rule) {
        // A delayed verdict's windows were read before its reservation, which the refund undid: still true.
        if (v.outcome() != Outcome.ALLOWED || v.windows().isEmpty()) {
            return v;
        }
        long cost = permits(v, rule);
        boolean refills =
                rule.rule.algorithm() == Algorithm.TOKEN_BUCKET || rule.rule.algorithm() == Algorithm.LEAKY_BUCKET;
        List<Decision.Window> windows = new ArrayList<>(v.windows().size());
        for (Decision.Window w : v.windows()) {
            long remaining = Math.min(w.limit(), w.remaining() + cost);
            long reset = remaining >= w.limit() ? 0 : w.resetNanos();
            if (reset > 0 && refills) {
                long refill = BigInteger.valueOf(cost)
                        .multiply(BigInteger.valueOf(w.period().toNanos()))
                        .divide(BigInteger.valueOf(w.permits()))
                        .min(BigInteger.valueOf(Long.MAX_VALUE))
                        .longValue();
                reset = Math.max(0, reset - refill);
            }
            windows.add(new Decision.Window(w.name(), w.limit(), w.permits(), w.period(), remaining, reset));
        }
        return copy(v, v.outcome(), v.basis(), windows, v.waitNanos(), v.receipt());
    }

    /** @return a delayed decision turned into a rejection: its caller was interrupted while it waited */
    static Decision interrupted(Decision delayed) {
        List<Verdict> verdicts = new ArrayList<>(delayed.verdicts().size());
        for (Verdict v : delayed.verdicts()) {
            verdicts.add(
                    v.outcome() == Outcome.DELAYED
                            ? copy(v, Outcome.REJECTED, Basis.INTERRUPTED, v.windows(), 0, v.receipt())
                            : v);
        }
        return new Decision(Outcome.REJECTED, verdicts, 0, 0);
    }

    /** A call whose client no rule limits: every rule allows it, and no store is asked. */
    static Decision exempted(CompiledRule[] rules, long permits) {
        List<Verdict> verdicts = new ArrayList<>(rules.length);
        for (CompiledRule rule : rules) {
            verdicts.add(Verdicts.of(
                    rule,
                    null,
                    Outcome.ALLOWED,
                    Basis.EXEMPT,
                    List.of(),
                    0,
                    0,
                    BucketKeyState.saturatedMultiply(rule.cost, permits)));
        }
        return new Decision(Outcome.ALLOWED, verdicts, 0, 0);
    }
}
