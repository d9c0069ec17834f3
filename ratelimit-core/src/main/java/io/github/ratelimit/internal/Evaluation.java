package io.github.ratelimit.internal;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Decision.Verdict;
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
 *       {@code maxWaiting}) and one of the limiter's ({@link #limiterPlaceHeld}, the limiter's ceiling on waiting
 *       calls). A rule whose places are taken rejects with {@code WAITERS_FULL}, so one flooded rule cannot turn
 *       another's delays into rejections. {@link RuleDecider} takes them ({@link #takeWaitingPlaces}) before it
 *       reserves; a place taken for a reservation that then fails is given back at once
 *       ({@link #giveBackWaitingPlaces}).</li>
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

    /** What {@link #takeWaitingPlaces} took. */
    enum PlacesTaken {
        /** No place was free: nothing is held, and the rule rejects the call ({@code WAITERS_FULL}). */
        NONE,
        /** The rule's place; the call held one of the limiter's already (another SOFT rule delays it too). */
        RULE,
        /** The rule's place and one of the limiter's. */
        RULE_AND_LIMITER
    }

    /**
     * What {@link #align} found: the delay the call waits, or the verdict of a rule that cannot count the call
     * within its maxDelay. Made only for a call a SOFT rule delays, whose verdicts are copied anyway.
     *
     * @param delayNanos the delay, possibly longer than before; 0 when rejected
     * @param rejectingVerdict the index of the rejecting rule's verdict, when {@link #rejected()}
     */
    record Alignment(long delayNanos, int rejectingVerdict) {

        private static final int NONE = -1;

        static Alignment delay(long delayNanos) {
            return new Alignment(delayNanos, NONE);
        }

        static Alignment rejectedBy(int verdict) {
            return new Alignment(0, verdict);
        }

        /** @return whether a rule rejects the call (its charge already given back) */
        boolean rejected() {
            return rejectingVerdict != NONE;
        }
    }

    /** The limiter's places among waiting calls, of which this call may hold one. */
    private final Semaphore waiting;
    /** The decision, once made. */
    private Decision decision;
    /** The index of the verdict being decided, for the charges made while deciding it. */
    private int verdictIndex;
    /** Whether this call holds one of the limiter's places among waiting calls. */
    private boolean limiterPlaceHeld;
    /** The rules whose own waiting place this call holds (it is delayed by them). */
    private CompiledRule[] rulePlaces;

    private int rulePlaceCount;
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

    /** @return the decision, once {@link #decided} */
    Decision decision() {
        return decision;
    }

    /** Records the call's decision. */
    void decided(Decision decision) {
        this.decision = decision;
    }

    /** Says which verdict is being decided: the charges, places and slot waits recorded from now on are its. */
    void decidingVerdict(int index) {
        this.verdictIndex = index;
    }

    /**
     * Takes a place among {@code rule}'s waiting calls and, unless the call holds one already, among the limiter's.
     *
     * @return what was taken; with {@link PlacesTaken#NONE} nothing is held
     */
    PlacesTaken takeWaitingPlaces(CompiledRule rule) {
        if (!rule.waiting.tryAcquire()) {
            return PlacesTaken.NONE;
        }
        holdRulePlace(rule);
        if (limiterPlaceHeld) {
            return PlacesTaken.RULE;
        }
        if (!waiting.tryAcquire()) {
            releaseRulePlace(rule);
            return PlacesTaken.NONE;
        }
        limiterPlaceHeld = true;
        return PlacesTaken.RULE_AND_LIMITER;
    }

    /** Gives back what {@link #takeWaitingPlaces} took for {@code rule}: its reservation failed. */
    void giveBackWaitingPlaces(CompiledRule rule, PlacesTaken taken) {
        if (taken == PlacesTaken.NONE) {
            return;
        }
        releaseRulePlace(rule);
        if (taken == PlacesTaken.RULE_AND_LIMITER) {
            limiterPlaceHeld = false;
            waiting.release();
        }
    }

    /** @return whether the call holds any place among waiting calls, a rule's or the limiter's */
    boolean holdsWaitingPlaces() {
        return limiterPlaceHeld || rulePlaceCount > 0;
    }

    private void holdRulePlace(CompiledRule rule) {
        if (rulePlaces == null) {
            rulePlaces = new CompiledRule[2];
        } else if (rulePlaceCount == rulePlaces.length) {
            rulePlaces = Arrays.copyOf(rulePlaces, rulePlaceCount * 2);
        }
        rulePlaces[rulePlaceCount++] = rule;
    }

    private void releaseRulePlace(CompiledRule rule) {
        for (int i = rulePlaceCount - 1; i >= 0; i--) {
            if (rulePlaces[i] == rule) {
                rulePlaces[i] = rulePlaces[--rulePlaceCount];
                rulePlaces[rulePlaceCount] = null;
                rule.waiting.release();
                return;
            }
        }
    }

    private void releasePlaces() {
        for (int i = 0; i < rulePlaceCount; i++) {
            rulePlaces[i].waiting.release();
            rulePlaces[i] = null;
        }
        rulePlaceCount = 0;
        if (limiterPlaceHeld) {
            limiterPlaceHeld = false;
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
                DefaultRateLimiter.STORE_LOG.log(
                        Level.WARNING, "Could not give back " + c.cost + " permit(s) to a key; the store failed", e);
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
     * @return the delay, possibly longer; or the verdict of a rule that cannot count the call within its maxDelay
     *         (its charge is already given back, its verdict in {@code verdicts} a rejection)
     */
    Alignment align(long delay, Verdict[] verdicts) {
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
                    return Alignment.delay(delay);
                }
                try {
                    // The rule never makes the call wait longer than its own maxDelay, but accepts the wait
                    // another rule already imposes.
                    p = c.state.reserve(c.cost, delay, Math.max(rule.maxDelayNanos, delay));
                } catch (RuntimeException e) {
                    // Its early place is given back and the store cannot take a later one: the call goes on
                    // uncounted by this rule, as a store failure under fail-open would let it.
                    removeCharge(i);
                    return Alignment.delay(delay);
                }
                Verdict v = verdicts[c.verdict];
                if (!p.consumed()) {
                    removeCharge(i);
                    verdicts[c.verdict] = Verdicts.copy(v, Outcome.REJECTED, v.basis(), v.windows(), p.waitNanos(), 0);
                    return Alignment.rejectedBy(c.verdict);
                }
                c.receipt = p.receipt();
                c.wait = p.waitNanos();
                verdicts[c.verdict] =
                        Verdicts.copy(v, Outcome.DELAYED, v.basis(), v.windows(), p.waitNanos(), p.receipt());
                if (p.waitNanos() > delay) {
                    delay = p.waitNanos();
                    moved = true;
                }
            }
            if (!moved) {
                break;
            }
        }
        return Alignment.delay(delay);
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
        releasePlaces();
        return true;
    }
}
