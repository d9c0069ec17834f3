package io.github.ratelimit.internal;

import io.github.ratelimit.CallTooLargeException;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Decision.Verdict;
import io.github.ratelimit.Limit;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.StoreFailurePolicy;
import io.github.ratelimit.internal.bucket.Pipelining;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.BucketStore.KeyState;
import io.github.ratelimit.support.RateLimitedLog;
import java.lang.System.Logger.Level;
import java.util.List;

/**
 * Decides one rule for one call: resolves its key, acts on the key's state in the store (or, when the store fails,
 * as the rule's failure policy says), and gives the rule's verdict. A call that meets several rules on a remote store
 * has every rule's consume {@linkplain #sendAll started} before any is awaited, so they travel in one round trip.
 */
final class RuleDecider {

    private static final RateLimitedLog CONTENTION_LOG = new RateLimitedLog(10_000_000_000L);
    private static final RateLimitedLog RESOLVER_LOG = new RateLimitedLog(10_000_000_000L);

    /**
     * A rule's key for one call and the key's state in the store; or the verdict, when the key alone decides (it
     * is missing). Not thread-safe: one call's.
     */
    static final class Target {
        final CompiledRule rule;
        /** The permits the call takes from this rule: the rule's cost times the call's permits. */
        final long cost;
        /** The verdict when the key decided alone, else {@code null}. */
        Verdict verdict;

        String key;
        BucketStore.Key bucketKey;
        CompiledRule.Configs configs;
        /** The key's state, or {@code null} when the store refused to give it ({@link #failure}). */
        KeyState state;

        RuntimeException failure;
        /** The consume started for the key, or {@code null}. */
        Pipelining.Sent sent;

        Target(CompiledRule rule, long cost) {
            this.rule = rule;
            this.cost = cost;
        }
    }

    private final BucketStore store;
    private final BucketStore fallbackStore;

    /**
     * @param store the primary store
     * @param fallbackStore local buckets for {@link StoreFailurePolicy#LOCAL_FALLBACK}
     */
    RuleDecider(BucketStore store, BucketStore fallbackStore) {
        this.store = store;
        this.fallbackStore = fallbackStore;
    }

    /**
     * @param permits the call's permits, at least 1: it takes the rule's cost that many times (and, for a rule with a
     *        {@linkplain Rule#permits() permits expression}, that many times its value)
     * @param resolved the rule's key as already resolved for this call ({@link DefaultRateLimiter#resolveAlone}: empty
     *        when missing), or {@code null} to resolve it now
     * @return the rule's key for the call and its state, or the verdict a missing key gives
     * @throws CallTooLargeException when the call takes more than the key's limits can ever hold, unless the rule is
     *         SHADOW: then its verdict is {@code SHADOW_REJECTED}
     */
    Target target(CompiledRule rule, RequestContext context, long permits, String resolved) {
        try {
            return targetOrTooLarge(rule, context, permits, resolved);
        } catch (CallTooLargeException e) {
            if (rule.mode != Mode.SHADOW) {
                throw e;
            }
            // A SHADOW rule (a dry run included) refuses nothing: a call no window could hold is what it would have
            // rejected, recorded as such, and the call goes on.
            Target t = new Target(rule, rule.cost);
            t.verdict = Verdicts.of(rule, null, Outcome.SHADOW_REJECTED, Basis.BUCKET, List.of(), 0, 0, rule.cost);
            return t;
        }
    }

    private Target targetOrTooLarge(CompiledRule rule, RequestContext context, long permits, String resolved) {
        long own = rule.permitsResolver == null ? 1 : rule.permitsOf(context);
        // A call holds one slot of a concurrency rule, whatever it counts as under rules of windows.
        long callPermits = rule.slots ? 1 : own <= 1 ? permits : CallPermits.multiply(rule, permits, own);
        Target t = new Target(rule, callPermits == 1 ? rule.cost : CallPermits.cost(rule, callPermits));
        if (own < 0) {
            // A call whose permits are no whole number (text, a fraction, a negative number, nothing) is refused,
            // whatever the rule does with a missing key: skipping the rule would let a client opt out of it.
            t.verdict = Verdicts.of(rule, null, rejection(rule), Basis.KEY_MISSING, List.of(), 0, 0, t.cost);
            return t;
        }
        if (rule.exemption != null && rule.exemption.exemptsAddress(context)) {
            t.verdict = Verdicts.of(rule, null, Outcome.ALLOWED, Basis.EXEMPT, List.of(), 0, 0, t.cost);
            return t;
        }
        String key = resolved != null ? resolved : resolveKey(rule, context);
        if (key == null || key.isEmpty()) {
            switch (rule.missingKeyPolicy) {
                case SKIP:
                    t.verdict = Verdicts.of(rule, null, Outcome.ALLOWED, Basis.KEY_MISSING, List.of(), 0, 0, t.cost);
                    return t;
                case REJECT:
                    t.verdict = Verdicts.of(rule, null, rejection(rule), Basis.KEY_MISSING, List.of(), 0, 0, t.cost);
                    return t;
                default:
                    key = KeyExpressions.SHARED_MISSING_KEY;
            }
        }
        if (rule.exemption != null && rule.exemption.exemptsKey(key)) {
            t.verdict = Verdicts.of(rule, key, Outcome.ALLOWED, Basis.EXEMPT, List.of(), 0, 0, t.cost);
            return t;
        }
        t.key = key;
        t.bucketKey = new BucketStore.Key(rule.name, key);
        t.configs = rule.configsFor(key, context);
        if (callPermits != 1) {
            CallPermits.checkHolds(rule, t.key, t.cost, t.configs.primary(), callPermits);
        }
        try {
            if (rule.blockNanos > 0) {
                // A blocked key is refused before its windows are asked: they keep refilling, untouched.
                long left = store.blockedNanos(t.bucketKey);
                if (left > 0) {
                    t.verdict = blocked(rule, key, t.configs.primary(), left, t.cost);
                    return t;
                }
            }
            t.state = store.state(t.bucketKey, t.configs.primary(), rule.localFirst);
        } catch (RuntimeException e) {
            t.failure = e;
        }
        return t;
    }

    /**
     * @return the verdict on a call of a blocked key: refused (only recorded by a SHADOW rule) for the time left. Its
     *         windows say what the key may take until the block ends: nothing, each ready again when the block ends
     *         (so the headers' remaining and reset tell the client the block, not the tokens it cannot use)
     */
    private static Verdict blocked(CompiledRule rule, String key, BucketStore.Limits limits, long left, long cost) {
        List<Limit> list = limits.limits();
        Decision.Window[] windows = new Decision.Window[list.size()];
        for (int i = 0; i < windows.length; i++) {
            Limit limit = list.get(i);
            windows[i] =
                    new Decision.Window(limit.window(), limit.capacity(), limit.permits(), limit.period(), 0, left);
        }
        return Verdicts.of(rule, key, rejection(rule), Basis.BLOCKED, List.of(windows), left, 0, cost);
    }

    /**
     * Starts the block of a rule with {@link Rule#blockFor()} that refused the call because of the key's windows (or,
     * SOFT, because of its wait or its waiting places), in the store whose state refused it; the verdict's wait
     * becomes the block's. A refusal for any other reason (a missing key, a failed store, contention) blocks nothing.
     *
     * @return the verdict, with the block's time left as its wait when the key is now blocked
     */
    private static Verdict blockIfRefused(Target t, Verdict v, BucketStore blocks) {
        CompiledRule rule = t.rule;
        if (rule.blockNanos == 0
                || v.outcome() == Outcome.ALLOWED
                || v.outcome() == Outcome.DELAYED
                || (v.basis() != Basis.BUCKET
                        && v.basis() != Basis.FALLBACK_BUCKET
                        && v.basis() != Basis.WAITERS_FULL)) {
            return v;
        }
        long left;
        try {
            left = blocks.block(t.bucketKey, rule.blockNanos);
        } catch (RuntimeException e) {
            DefaultRateLimiter.STORE_LOG.log(
                    Level.WARNING,
                    () -> "Could not block a key of rule '" + rule.name + "'; the store failed: " + e,
                    null);
            return v;
        }
        return Verdicts.copy(v, v.outcome(), v.basis(), v.windows(), Math.max(v.waitNanos(), left), v.receipt());
    }

    /**
     * @return the rule's key for the call; {@code null} when it is missing or the resolver failed (logged)
     */
    static String resolveKey(CompiledRule rule, RequestContext context) {
        try {
            return rule.resolver.resolve(context);
        } catch (RuntimeException e) {
            RESOLVER_LOG.log(
                    Level.WARNING,
                    "The key resolver of rule '" + rule.name + "' failed; treating the key as missing",
                    e);
            return null;
        }
    }

    /**
     * @return the index of a HARD rule whose state remembers that it rejects this call (it decides the call alone,
     *         with no round trip), or -1
     */
    static int knownRejection(Target[] targets) {
        for (int i = 0; i < targets.length; i++) {
            Target t = targets[i];
            if (t.rule.mode == Mode.HARD && t.state instanceof Pipelining p) {
                KeyState.Probe known = p.known(t.cost);
                if (known != null && !known.consumed()) {
                    return i;
                }
            }
        }
        return -1;
    }

    /**
     * Starts the consume of every rule (but {@code skip}) whose state can be started apart, when at least two can:
     * they travel to the store together. One alone gains nothing and is left to {@link #decide}.
     */
    static void sendAll(Target[] targets, int skip) {
        int startable = 0;
        for (int i = 0; i < targets.length; i++) {
            if (i != skip && targets[i].verdict == null && targets[i].state instanceof Pipelining) {
                startable++;
            }
        }
        if (startable < 2) {
            return;
        }
        for (int i = 0; i < targets.length; i++) {
            Target t = targets[i];
            if (i != skip && t.verdict == null && t.state instanceof Pipelining p) {
                try {
                    t.sent = p.send(t.cost);
                } catch (RuntimeException e) {
                    t.failure = e;
                    t.state = null;
                }
            }
        }
    }

    /**
     * Awaits the consumes started for the rules from {@code from} on, which the call will not use (an earlier rule
     * rejected it), and gives back the permits they took.
     */
    static void abandon(Target[] targets, int from) {
        for (int i = from; i < targets.length; i++) {
            Target t = targets[i];
            if (t.sent == null) {
                continue;
            }
            try {
                KeyState.Probe p = t.sent.await();
                if (p.consumed()) {
                    t.state.refund(t.cost, p.receipt());
                }
            } catch (RuntimeException e) {
                DefaultRateLimiter.STORE_LOG.log(
                        Level.WARNING,
                        "Could not give back " + t.cost + " permit(s) to a key of rule '" + t.rule.name
                                + "'; the store failed",
                        e);
            } finally {
                t.sent = null;
            }
        }
    }

    /** @return the rule's verdict for the call, taking the consume started for it, if any */
    Verdict decide(Target t, Evaluation ev) {
        if (t.verdict != null) {
            return t.verdict;
        }
        CompiledRule rule = t.rule;
        try {
            if (t.failure != null) {
                throw t.failure;
            }
            KeyState.Probe probe;
            if (t.sent != null) {
                Pipelining.Sent sent = t.sent;
                t.sent = null;
                probe = sent.await();
            } else {
                probe = t.state.consume(t.cost);
            }
            return blockIfRefused(t, settle(t, t.state, probe, Basis.BUCKET, ev), store);
        } catch (RuntimeException e) {
            BucketStore.ContentionException contention = contention(e);
            if (contention != null) {
                CONTENTION_LOG.log(
                        Level.WARNING,
                        () -> "Rule '" + rule.name + "': " + contention.getMessage()
                                + "; rejecting the call rather than admitting it uncounted",
                        null);
                return Verdicts.of(
                        rule,
                        t.key,
                        rejection(rule),
                        Basis.CONTENTION,
                        List.of(),
                        DefaultRateLimiter.CONTENTION_RETRY_NANOS,
                        0,
                        t.cost);
            }
            DefaultRateLimiter.STORE_LOG.log(
                    Level.WARNING,
                    () -> "The rate-limit store failed for rule '" + rule.name + "'; applying "
                            + rule.storeFailurePolicy + ": " + e,
                    null);
            Verdict failed = failed(t);
            if (failed != null) {
                return failed;
            }
            if (rule.blockNanos > 0) {
                long left = fallbackStore.blockedNanos(t.bucketKey);
                if (left > 0) {
                    return blocked(rule, t.key, t.configs.fallback(), left, t.cost);
                }
            }
            KeyState fallback = fallback(t);
            return blockIfRefused(
                    t, settle(t, fallback, fallback.consume(t.cost), Basis.FALLBACK_BUCKET, ev), fallbackStore);
        }
    }

    /**
     * A {@link Mode#SOFT} concurrency rule found no free slot: the call waits for one ({@link SlotWaits}) after the
     * decision, holding a place among the rule's and the limiter's waiting calls meanwhile.
     *
     * @return a delayed verdict with no slot yet (receipt 0) and the rule's maxDelay as its wait, the longest it may
     *         be; or a rejection when every place among the waiting calls is taken
     */
    private Verdict awaitSlot(Target t, Evaluation ev, List<Decision.Window> windows) {
        CompiledRule rule = t.rule;
        if (ev.takeWaitingPlaces(rule) == Evaluation.PlacesTaken.NONE) {
            return Verdicts.of(
                    rule, t.key, Outcome.REJECTED, Basis.WAITERS_FULL, windows, SlotWaits.RETRY_NANOS, 0, t.cost);
        }
        ev.awaitSlot(t);
        return Verdicts.of(rule, t.key, Outcome.DELAYED, Basis.BUCKET, windows, rule.maxDelayNanos, 0, t.cost);
    }

    /**
     * Tries once more to take a slot for a call waiting for one ({@link #awaitSlot}); a store failure answers as the
     * rule's failure policy says (its local fallback's slots too).
     *
     * @param waited how long the call has waited so far
     * @return the rule's verdict, delayed with its slot's receipt (or as the failure policy says); {@code null} while
     *         no slot is free
     */
    Verdict trySlot(Target t, Evaluation ev, long waited) {
        CompiledRule rule = t.rule;
        KeyState state = t.state;
        Basis basis = Basis.BUCKET;
        KeyState.Probe probe;
        try {
            if (t.failure != null) {
                throw t.failure;
            }
            probe = state.consume(t.cost);
        } catch (RuntimeException e) {
            DefaultRateLimiter.STORE_LOG.log(
                    Level.WARNING,
                    () -> "The rate-limit store failed for rule '" + rule.name + "'; applying "
                            + rule.storeFailurePolicy + ": " + e,
                    null);
            Verdict failed = failed(t);
            if (failed != null) {
                return failed;
            }
            state = fallback(t);
            basis = Basis.FALLBACK_BUCKET;
            probe = state.consume(t.cost);
        }
        if (!probe.consumed()) {
            return null;
        }
        ev.charge(state, rule, t.cost, probe.receipt(), 0);
        return Verdicts.of(rule, t.key, Outcome.DELAYED, basis, probe.windows(), waited, probe.receipt(), t.cost);
    }

    /**
     * @return the verdict the rule's failure policy gives a call whose store failed, or {@code null} for
     *         {@link StoreFailurePolicy#LOCAL_FALLBACK}, whose local bucket then decides
     */
    private static Verdict failed(Target t) {
        CompiledRule rule = t.rule;
        return switch (rule.storeFailurePolicy) {
            case FAIL_CLOSED ->
                Verdicts.of(
                        rule,
                        t.key,
                        rejection(rule),
                        Basis.FAIL_CLOSED,
                        List.of(),
                        DefaultRateLimiter.FAIL_CLOSED_RETRY_NANOS,
                        0,
                        t.cost);
            case LOCAL_FALLBACK -> null;
            default -> Verdicts.of(rule, t.key, Outcome.ALLOWED, Basis.FAIL_OPEN, List.of(), 0, 0, t.cost);
        };
    }

    /** @return the key's bucket in this JVM, for a rule that falls back locally when its store fails */
    private KeyState fallback(Target t) {
        return fallbackStore.state(t.bucketKey, t.configs.fallback(), t.rule.localFirst);
    }

    /**
     * @return the rule's verdict for a peek at the call: what deciding it would give now, a wait included, with
     *         nothing taken (a store failure answers as the rule's failure policy says)
     */
    Verdict peek(Target t) {
        if (t.verdict != null) {
            return t.verdict;
        }
        CompiledRule rule = t.rule;
        KeyState.Probe probe;
        Basis basis = Basis.BUCKET;
        try {
            if (t.failure != null) {
                throw t.failure;
            }
            probe = t.state.peek(t.cost);
        } catch (UnsupportedOperationException e) {
            throw e;
        } catch (RuntimeException e) {
            Verdict failed = failed(t);
            if (failed != null) {
                return failed;
            }
            probe = fallback(t).peek(t.cost);
            basis = Basis.FALLBACK_BUCKET;
        }
        if (probe.consumed()) {
            return Verdicts.of(rule, t.key, Outcome.ALLOWED, basis, probe.windows(), 0, 0, t.cost);
        }
        // A SOFT concurrency rule would wait for a slot, for at most its maxDelay.
        long wait = rule.slots && rule.mode == Mode.SOFT ? rule.maxDelayNanos : probe.waitNanos();
        Outcome outcome = rule.mode == Mode.SOFT && wait <= rule.maxDelayNanos ? Outcome.DELAYED : rejection(rule);
        return Verdicts.of(rule, t.key, outcome, basis, probe.windows(), wait, 0, t.cost);
    }

    /**
     * @return the contention behind a store failure, or {@code null}: Bucket4j's batching hands one exception to
     *         every call of a batch wrapped in its own, so the cause chain is searched (bounded)
     */
    static BucketStore.ContentionException contention(Throwable e) {
        Throwable t = e;
        for (int depth = 0; t != null && depth < 8; depth++, t = t.getCause()) {
            if (t instanceof BucketStore.ContentionException c) {
                return c;
            }
        }
        return null;
    }

    private static Outcome rejection(CompiledRule rule) {
        return rule.mode == Mode.SHADOW ? Outcome.SHADOW_REJECTED : Outcome.REJECTED;
    }

    /** @return the verdict a consume's outcome gives; a delayed SOFT call reserves its time first */
    private Verdict settle(Target t, KeyState state, KeyState.Probe probe, Basis basis, Evaluation ev) {
        CompiledRule rule = t.rule;
        String key = t.key;
        long cost = t.cost;
        if (probe.consumed()) {
            ev.charge(state, rule, cost, probe.receipt(), 0);
            // A rule that counts only failures (or statuses) holds a token while a permitted call runs and gives it
            // back unless the call fails: its windows say nothing of the caller's request rate, so a permitted call
            // does not report them (they would take over the headers: a login rule's 5/1m on every response). A
            // rejection reports them.
            List<Decision.Window> windows = rule.rule.count() != Rule.Counted.ALL ? List.of() : probe.windows();
            return Verdicts.of(rule, key, Outcome.ALLOWED, basis, windows, 0, probe.receipt(), cost);
        }
        long wait = probe.waitNanos();
        if (rule.slots && rule.mode == Mode.SOFT) {
            return awaitSlot(t, ev, probe.windows());
        }
        if (rule.mode == Mode.HARD || (rule.mode == Mode.SOFT && wait > rule.maxDelayNanos)) {
            return Verdicts.of(rule, key, Outcome.REJECTED, basis, probe.windows(), wait, 0, cost);
        }
        if (rule.mode == Mode.SHADOW) {
            return Verdicts.of(rule, key, Outcome.SHADOW_REJECTED, basis, probe.windows(), wait, 0, cost);
        }
        return reserve(rule, key, cost, state, basis, ev, probe.windows(), wait);
    }

    private Verdict reserve(
            CompiledRule rule,
            String key,
            long cost,
            KeyState state,
            Basis basis,
            Evaluation ev,
            List<Decision.Window> windows,
            long wait) {
        // A place among this rule's waiting calls, and one among all the limiter's.
        Evaluation.PlacesTaken places = ev.takeWaitingPlaces(rule);
        if (places == Evaluation.PlacesTaken.NONE) {
            return Verdicts.of(rule, key, Outcome.REJECTED, Basis.WAITERS_FULL, windows, wait, 0, cost);
        }
        boolean reserved = false;
        try {
            KeyState.Probe reservation = state.reserve(cost, rule.maxDelayNanos);
            if (!reservation.consumed()) {
                // The wait grew past maxDelay between the probe and the reservation.
                return Verdicts.of(rule, key, Outcome.REJECTED, basis, windows, wait, 0, cost);
            }
            long nanos = reservation.waitNanos();
            ev.charge(state, rule, cost, reservation.receipt(), reservation.waitNanos());
            if (nanos == 0) {
                return Verdicts.of(rule, key, Outcome.ALLOWED, basis, windows, 0, reservation.receipt(), cost);
            }
            reserved = true;
            return Verdicts.of(rule, key, Outcome.DELAYED, basis, windows, nanos, reservation.receipt(), cost);
        } finally {
            if (!reserved) {
                ev.giveBackWaitingPlaces(rule, places);
            }
        }
    }
}
