package io.github.ratelimit.internal;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Decision.Verdict;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A call that a {@link io.github.ratelimit.Mode#SOFT} concurrency rule makes wait for a slot: after the decision (and
 * any delay of the rules of windows), it asks the store again, first after 1 ms, then twice as long each time up to
 * {@value #MAX_PAUSE_MILLIS} ms, until every such rule has given it a slot, or the smallest of their maxDelays has
 * passed since the decision: then everything the call took is given back and it is rejected. No queue: a slot freed
 * goes to whichever call asks first, a new one or a waiting one (a waiting call asks at least every
 * {@value #MAX_PAUSE_MILLIS} ms), and each waiting call asks the store about 20 times a second at most, within the
 * rule's {@code maxWaiting} places. Listeners hear of the call once it is settled.
 */
final class SlotWaits {

    /** How long a call refused a slot is told to wait: nothing says when a call in flight ends. */
    static final long RETRY_NANOS = 1_000_000_000L;

    private static final long FIRST_PAUSE_NANOS = 1_000_000L;
    private static final long MAX_PAUSE_MILLIS = 50;

    private final DefaultRateLimiter limiter;
    private final Evaluation ev;
    private final CompiledRule[] rules;
    /** When the call was decided, on the limiter's clock. */
    private final long start;
    /** When the call gives up, on the limiter's clock. */
    private final long deadline;

    private final Verdict[] got;
    private long pause = FIRST_PAUSE_NANOS;
    /** Whether the wait has ended: settled by an attempt, or abandoned. Guarded by the evaluation's monitor. */
    private boolean ended;

    /**
     * @param rules the guard's rules, in the order of the call's verdicts
     * @param start when the call was decided, on the limiter's clock
     */
    SlotWaits(DefaultRateLimiter limiter, Evaluation ev, CompiledRule[] rules, long start) {
        this.limiter = limiter;
        this.ev = ev;
        this.rules = rules;
        this.start = start;
        long longest = Long.MAX_VALUE;
        for (int i = 0; i < ev.slotWaitCount(); i++) {
            longest = Math.min(longest, ev.slotWait(i).rule.maxDelayNanos);
        }
        this.deadline = start + longest;
        this.got = new Verdict[ev.slotWaitCount()];
    }

    /**
     * Waits on the calling thread.
     *
     * @return the call's decision: delayed, with its slots, or rejected with everything given back
     * @throws InterruptedException when the thread is interrupted meanwhile (nothing is given back here)
     */
    Decision await() throws InterruptedException {
        while (true) {
            Decision settled = attempt();
            if (settled != null) {
                return settled;
            }
            limiter.waiter().await(nextPause());
        }
    }

    /**
     * Waits without holding a thread: each attempt runs on one of the limiter's {@link SlotPolls} threads, after a
     * timer of the limiter's waiter.
     *
     * @param result completed with the call's decision; when it completes otherwise meanwhile (cancelled, completed by
     *        the caller, a timeout), the wait ends at its next attempt, and {@link #abandon} should be called at once
     */
    void awaitAsync(CompletableFuture<Decision> result) {
        Decision settled;
        synchronized (ev) {
            if (ended) {
                return;
            }
            if (result.isDone()) {
                abandon(result, null);
                return;
            }
            try {
                settled = attempt();
            } catch (RuntimeException | Error e) {
                abandon(result, e);
                return;
            }
            if (settled != null) {
                ended = true;
            }
        }
        if (settled != null) {
            ev.finish();
            if (!result.complete(settled) && settled.permitted()) {
                // Completed otherwise since the attempt: its slots go back too.
                synchronized (ev) {
                    ev.refund();
                }
            }
            return;
        }
        limiter.waiter()
                .after(nextPause())
                .whenCompleteAsync(
                        (ignored, error) -> {
                            if (error != null) {
                                abandon(result, error);
                            } else {
                                awaitAsync(result);
                            }
                        },
                        limiter.slotPolls());
    }

    /**
     * Ends the wait without a decision of its own, unless it has ended already: whatever the call took goes back, its
     * places among the waiting calls too, and listeners hear of it as a call that gave up (basis
     * {@code INTERRUPTED}).
     *
     * @param result completed exceptionally with {@code error}, when there is one
     * @param error why the wait ends (a timer failed, the limiter closed, an attempt threw), or {@code null} when the
     *        caller ended it
     */
    void abandon(CompletableFuture<Decision> result, Throwable error) {
        synchronized (ev) {
            if (ended) {
                return;
            }
            ended = true;
            ev.refund();
        }
        ev.finish();
        limiter.notifyListeners(Verdicts.interrupted(ev.decision()));
        if (error != null) {
            result.completeExceptionally(error);
        }
    }

    private long nextPause() {
        long left = Math.max(1, deadline - limiter.clock().currentTimeNanos());
        long next = Math.min(pause, left);
        pause = Math.min(pause * 2, MAX_PAUSE_MILLIS * 1_000_000L);
        return next;
    }

    /** @return the decision once every slot is held or the time is up; {@code null} to try again */
    private Decision attempt() {
        long now = limiter.clock().currentTimeNanos();
        long waited = Math.max(0, now - start);
        boolean all = true;
        for (int i = 0; i < got.length; i++) {
            if (got[i] == null) {
                ev.decidingVerdict(ev.slotVerdict(i));
                got[i] = limiter.decider().trySlot(ev.slotWait(i), ev, waited);
                all &= got[i] != null;
            }
        }
        Decision settled;
        if (all) {
            settled = settle(waited);
        } else if (now - deadline >= 0) {
            settled = giveUp();
        } else {
            return null;
        }
        limiter.notifyListeners(settled);
        return settled;
    }

    /** Every slot is held (or a failure policy let the call go): delayed by the time it waited. */
    private Decision settle(long waited) {
        List<Verdict> verdicts = new ArrayList<>(ev.decision().verdicts());
        Outcome worst = Outcome.ALLOWED;
        for (int i = 0; i < got.length; i++) {
            verdicts.set(ev.slotVerdict(i), got[i]);
        }
        for (Verdict v : verdicts) {
            if (v.outcome().compareTo(worst) > 0) {
                worst = v.outcome();
            }
        }
        if (worst == Outcome.REJECTED) {
            // A failure policy rejected the call (fail-closed): everything goes back.
            ev.refund();
            Verdict rejecting = verdicts.stream()
                    .filter(v -> v.outcome() == Outcome.REJECTED)
                    .findFirst()
                    .get();
            return new Decision(Outcome.REJECTED, verdicts, 0, rejecting.waitNanos());
        }
        return new Decision(Outcome.DELAYED, verdicts, Math.max(ev.decision().delayNanos(), waited), 0);
    }

    /** The time is up: everything the call took goes back, and it is rejected. */
    private Decision giveUp() {
        ev.refund();
        List<Verdict> verdicts = new ArrayList<>(ev.decision().verdicts());
        for (int i = 0; i < verdicts.size(); i++) {
            verdicts.set(i, Verdicts.refunded(verdicts.get(i), rules[i]));
        }
        for (int i = 0; i < got.length; i++) {
            Verdict v = verdicts.get(ev.slotVerdict(i));
            verdicts.set(
                    ev.slotVerdict(i), Verdicts.copy(v, Outcome.REJECTED, Basis.BUCKET, v.windows(), RETRY_NANOS, 0));
        }
        return new Decision(Outcome.REJECTED, verdicts, 0, RETRY_NANOS);
    }
}
