package io.github.ratelimit.internal;

import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Decision.Verdict;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Mode;
import io.github.ratelimit.store.BucketStore.KeyState;

import java.lang.System.Logger.Level;
import java.util.Arrays;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One call's evaluation of its rules: the decision, and what the call holds until it ends, so that whatever does not
 * go on is given back exactly once.
 *
 * <h2>The SOFT protocol</h2>
 * A call that a SOFT rule delays holds, while it waits:
 * <ol>
 *   <li><b>Places among the waiting calls</b>: one of each delaying rule's own ({@code rule.waiting}, the rule's
 *       {@code maxWaiting}) and one of the limiter's ({@link #permitHeld}, the limiter's ceiling on waiting calls).
 *       A rule whose places are taken rejects with {@code WAITERS_FULL}, so one flooded rule cannot turn another's
 *       delays into rejections. {@link DefaultRateLimiter} takes them in {@code reserve}; a place taken for a
 *       reservation that then fails is given back at once.</li>
 *   <li><b>Charges</b>: every token the call took, in every rule, with the store's receipt (a sliding window's
 *       record of when the call was counted) and the wait it was counted at. When a later rule rejects the call, or
 *       the caller gives up (cancels, is interrupted), {@link #refund()} returns them all: a rejected call costs no
 *       rule anything.</li>
 * </ol>
 * Several SOFT rules each reserve at their own earliest time; the call runs at the latest, so {@link #align}
 * re-counts it at that time in the rules that remember when calls run. Whoever ends the call first, the caller
 * after its wait or a cancellation, calls {@link #finish()}, which releases the places once ({@link #finished}).
 *
 * <p>Not thread-safe while the rules are decided (one thread evaluates); afterwards only {@link #finish()} races,
 * and it is atomic.
 */
final class Evaluation {

    /** Tokens the call took: where, for which rule, how many, with the store's receipt and the wait it was counted at. */
    private static final class Charge {
        final KeyState state;
        final CompiledRule rule;
        final long cost;
        /** The index of the verdict of the rule that made the charge. */
        final int verdict;
        long receipt;
        long wait;

        Charge(KeyState state, CompiledRule rule, long cost, int verdict, long receipt, long wait) {
            this.state = state;
            this.rule = rule;
            this.cost = cost;
            this.verdict = verdict;
            this.receipt = receipt;
            this.wait = wait;
        }
    }

    /** The limiter's places among waiting calls, of which this call may hold one. */
    private final Semaphore waiting;
    Decision decision;
    /** The index of the verdict being decided, for the charges made while deciding it. */
    int verdictIndex;
    /** Whether this call holds one of the limiter's places among waiting calls. */
    boolean permitHeld;
    /** The rules whose own waiting place this call holds (it is delayed by them). */
    private CompiledRule[] rulePermits;
    int rulePermitCount;
    private Charge[] charges;
    private int chargeCount;
    private final AtomicBoolean finished = new AtomicBoolean();
    /**
     * The SOFT concurrency rules' targets that found no free slot, with the index of each one's verdict: the call
     * waits for their slots after the decision ({@link SlotWaits}); {@code null} when none.
     */
    private RuleDecider.Target[] slotWaits;
    private int[] slotVerdicts;
    private int slotWaitCount;

    /**
     * @param waiting the limiter's places among waiting calls
     */
    Evaluation(Semaphore waiting) {
        this.waiting = waiting;
    }

    /** Records that this call holds a place among {@code rule}'s waiting calls. */
    void holdRulePermit(CompiledRule rule) {
        if (rulePermits == null) {
            rulePermits = new CompiledRule[2];
        } else if (rulePermitCount == rulePermits.length) {
            rulePermits = Arrays.copyOf(rulePermits, rulePermitCount * 2);
        }
        rulePermits[rulePermitCount++] = rule;
    }

    /** Gives back this call's place among {@code rule}'s waiting calls. */
    void releaseRulePermit(CompiledRule rule) {
        for (int i = rulePermitCount - 1; i >= 0; i--) {
            if (rulePermits[i] == rule) {
                rulePermits[i] = rulePermits[--rulePermitCount];
                rulePermits[rulePermitCount] = null;
                rule.waiting.release();
                return;
            }
        }
    }

    private void releasePermits() {
        for (int i = 0; i < rulePermitCount; i++) {
            rulePermits[i].waiting.release();
            rulePermits[i] = null;
        }
        rulePermitCount = 0;
        if (permitHeld) {
            permitHeld = false;
            waiting.release();
        }
    }

    /** Records that the call waits for a slot of the target's (SOFT concurrency) rule, for the verdict being decided. */
    void awaitSlot(RuleDecider.Target target) {
        if (slotWaits == null) {
            slotWaits = new RuleDecider.Target[1];
            slotVerdicts = new int[1];
        } else if (slotWaitCount == slotWaits.length) {
            slotWaits = Arrays.copyOf(slotWaits, slotWaitCount * 2);
            slotVerdicts = Arrays.copyOf(slotVerdicts, slotWaitCount * 2);
        }
        slotWaits[slotWaitCount] = target;
        slotVerdicts[slotWaitCount++] = verdictIndex;
    }

    /** @return how many rules' slots the call waits for */
    int slotWaitCount() {
        return slotWaitCount;
    }

    /** @return the target of the {@code i}th rule whose slot the call waits for */
    RuleDecider.Target slotWait(int i) {
        return slotWaits[i];
    }

    /** @return the index of the verdict of the {@code i}th rule whose slot the call waits for */
    int slotVerdict(int i) {
        return slotVerdicts[i];
    }

    /** Forgets the slots the call waits for: it was rejected before it could wait. */
    void clearSlotWaits() {
        slotWaitCount = 0;
    }

    /** Records the tokens the call took, for the verdict being decided. */
    void charge(KeyState state, CompiledRule rule, long cost, long receipt, long wait) {
        if (charges == null) {
            charges = new Charge[2];
        } else if (chargeCount == charges.length) {
            charges = Arrays.copyOf(charges, chargeCount * 2);
        }
        charges[chargeCount++] = new Charge(state, rule, cost, verdictIndex, receipt, wait);
    }

    /** Returns every token this call took. */
    void refund() {
        for (int i = 0; i < chargeCount; i++) {
            Charge c = charges[i];
            try {
                c.state.refund(c.cost, c.receipt);
            } catch (RuntimeException e) {
                DefaultRateLimiter.STORE_LOG.log(Level.WARNING, "Could not give back " + c.cost
                        + " permit(s) to a key; the store failed", e);
            }
        }
        chargeCount = 0;
    }

    /**
     * Counts the call again, at the time it will run, in every SOFT rule that remembers when calls run (a
     * sliding window, which gave a receipt) and counted it earlier: several SOFT rules each reserve at their
     * own earliest time, and the call waits for the latest. A rule whose count moves the time further moves
     * it for the others (at most three rounds; then the call keeps the counts it has).
     *
     * @return the delay, possibly longer; or, as {@code -1 - index}, the verdict of a rule that cannot count
     *         the call within its maxDelay (its charge is already given back)
     */
    long align(long delay, Verdict[] verdicts) {
        for (int round = 0; round < 3; round++) {
            boolean moved = false;
            for (int i = 0; i < chargeCount; i++) {
                Charge c = charges[i];
                CompiledRule rule = c.rule;
                // A slot is held from now on, whenever the call runs.
                if (rule.mode != Mode.SOFT || rule.slots || c.receipt == 0 || c.wait >= delay) {
                    continue;
                }
                KeyState.Probe p;
                try {
                    c.state.refund(c.cost, c.receipt);
                } catch (RuntimeException e) {
                    // The store failed: the call keeps the counts it has, at their earlier times.
                    return delay;
                }
                try {
                    // The rule never makes the call wait longer than its own maxDelay, but accepts the wait
                    // another rule already imposes.
                    p = c.state.reserve(c.cost, delay, Math.max(rule.maxDelayNanos, delay));
                } catch (RuntimeException e) {
                    // Its early place is given back and the store cannot take a later one: the call goes on
                    // uncounted by this rule, as a store failure under fail-open would let it.
                    removeCharge(i);
                    return delay;
                }
                Verdict v = verdicts[c.verdict];
                if (!p.consumed()) {
                    removeCharge(i);
                    verdicts[c.verdict] = Verdicts.copy(v, Outcome.REJECTED, v.basis(), v.windows(),
                            p.waitNanos(), 0);
                    return -1 - c.verdict;
                }
                c.receipt = p.receipt();
                c.wait = p.waitNanos();
                verdicts[c.verdict] = Verdicts.copy(v, Outcome.DELAYED, v.basis(), v.windows(),
                        p.waitNanos(), p.receipt());
                if (p.waitNanos() > delay) {
                    delay = p.waitNanos();
                    moved = true;
                }
            }
            if (!moved) {
                break;
            }
        }
        return delay;
    }

    private void removeCharge(int i) {
        int last = --chargeCount;
        charges[i] = charges[last];
        charges[last] = null;
    }

    /** @return whether this call was the first to finish the evaluation (and so releases its places) */
    boolean finish() {
        if (!finished.compareAndSet(false, true)) {
            return false;
        }
        releasePermits();
        return true;
    }
}
