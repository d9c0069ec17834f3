package io.github.ratelimit.internal;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Decision.Verdict;
import io.github.ratelimit.Guard;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Limit;
import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RateLimiter.Waiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.StoreFailurePolicy;
import io.github.ratelimit.internal.bucket.AllowedVerdict;
import io.github.ratelimit.internal.bucket.RecordingBucket;
import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.key.KeyResolver;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.BucketStore.KeyState;
import io.github.ratelimit.store.LocalBucketStore;
import io.github.ratelimit.support.Durations;
import io.github.ratelimit.support.LogText;
import io.github.ratelimit.support.RateLimitedLog;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;

/**
 * The engine behind {@link RateLimiter}. Not part of the public API.
 */
public final class DefaultRateLimiter implements RateLimiter {

    /** How long a fail-closed rejection tells the client to wait. */
    static final long FAIL_CLOSED_RETRY_NANOS = 1_000_000_000L;

    /** How long a rejection for contention tells the client to wait. */
    static final long CONTENTION_RETRY_NANOS = 1_000_000_000L;

    static final RateLimitedLog STORE_LOG = new RateLimitedLog(10_000_000_000L);
    private static final RateLimitedLog LISTENER_LOG = new RateLimitedLog(10_000_000_000L);
    private static final RateLimitedLog CHANGE_LOG = new RateLimitedLog(10_000_000_000L);

    /**
     * Everything {@link RateLimiter.Builder} configured: in small records of what belongs together, so that no two
     * values of one type sit side by side in a long list.
     *
     * @param stores where buckets live, and what a rule does when its store fails
     * @param timing the clock and how delays pass
     * @param keys what key expressions are compiled with
     * @param perKeyLimits per-key limits
     * @param plans the plans a call may name
     * @param exemptions the clients and keys no rule limits
     * @param listeners decision listeners
     * @param observer told as each decision starts and ends, or {@code null}
     * @param maxWaiting the cap on waiting calls, all rules together
     * @param shadow whether every rule behaves as {@link Mode#SHADOW} (a dry run)
     */
    public record Settings(
            Stores stores,
            Timing timing,
            Keys keys,
            PerKeyLimits perKeyLimits,
            Plans plans,
            Exemptions exemptions,
            List<RateLimiter.Listener> listeners,
            RateLimiter.Observer observer,
            int maxWaiting,
            boolean shadow) {

        /**
         * Where buckets live, and what a rule does when its store fails.
         *
         * @param store the primary store
         * @param fallbackStore local buckets for {@link StoreFailurePolicy#LOCAL_FALLBACK}
         * @param defaultFailurePolicy the policy of rules that say {@link StoreFailurePolicy#DEFAULT}
         * @param localFallbackShare the share of limits a fallback bucket holds
         */
        public record Stores(
                BucketStore store,
                LocalBucketStore fallbackStore,
                StoreFailurePolicy defaultFailurePolicy,
                double localFallbackShare) {}

        /**
         * The clock and how delays pass.
         *
         * @param timeMeter the clock
         * @param waiter how delays pass
         * @param ownsWaiter whether the limiter created the waiter (and so closes it)
         */
        public record Timing(TimeMeter timeMeter, Waiter waiter, boolean ownsWaiter) {}

        /**
         * What key expressions are compiled with.
         *
         * @param resolvers custom resolvers by name
         * @param clientIpResolver the resolver behind {@code ip}
         * @param factory compiles key expressions of another language first, or {@code null}
         */
        public record Keys(
                Map<String, KeyResolver> resolvers, ClientIpResolver clientIpResolver, KeyResolver.Factory factory) {}

        /**
         * Per-key limits.
         *
         * @param provider the per-key limits, or {@code null} for none
         * @param ttl how long per-key limits are cached
         */
        public record PerKeyLimits(LimitProvider provider, Duration ttl) {}

        /**
         * The plans a call may name.
         *
         * @param from where a call's plan comes from, or {@code null} when calls name none
         * @param byName the plans' limits by plan name
         * @param rules the rules plans from the call are for; empty for every rule keyed by the user
         * @param headerTrusted whether a plan header is believed from every peer, not only from a trusted proxy
         */
        public record Plans(String from, Map<String, List<Limit>> byName, Set<String> rules, boolean headerTrusted) {}

        /**
         * The clients and keys no rule limits.
         *
         * @param clients client addresses and ranges no rule limits
         * @param byRule by rule name, key values (and addresses, for rules keyed by address) the rule never limits
         */
        public record Exemptions(List<String> clients, Map<String, List<String>> byRule) {}
    }

    private final Settings settings;
    private final BucketStore store;
    private final BucketStore fallbackStore;
    private final RateLimiter.Listener[] listeners;
    private final Semaphore waiting;
    private final RuleDecider decider;
    private final Map<String, CompiledRule> compiled = new ConcurrentHashMap<>();
    /** Rules changed at run time in this limiter ({@link #changeRule}), by name; they win over the provider's. */
    private final Map<String, Rule> localChanges = new ConcurrentHashMap<>();
    /**
     * Plans changed at run time in this limiter ({@link #changePlan}) when its limit provider does not keep them, by
     * name.
     */
    private final Map<String, List<Limit>> localPlans = new ConcurrentHashMap<>();
    /** The compiled rules by the name clients see for them ({@link Rule#publicName()}), which must differ too. */
    private final Map<String, CompiledRule> byPublicName = new ConcurrentHashMap<>();

    private final AtomicBoolean closed = new AtomicBoolean();
    private final SlotPolls slotPolls = new SlotPolls();
    /** Whether a call's client is one no rule limits, or {@code null} when none is exempt. */
    private final Predicate<RequestContext> exempt;
    /** Where a call's plan comes from, or {@code null}. */
    private final RequestPlans requestPlans;

    /**
     * @param settings the configuration
     */
    public DefaultRateLimiter(Settings settings) {
        this.settings = settings;
        this.store = settings.stores().store();
        this.fallbackStore = settings.stores().fallbackStore();
        this.listeners = settings.listeners().toArray(RateLimiter.Listener[]::new);
        this.waiting = new Semaphore(settings.maxWaiting());
        this.decider = new RuleDecider(store, fallbackStore);
        List<String> exemptClients = settings.exemptions().clients();
        this.exempt = exemptClients.isEmpty()
                ? null
                : settings.keys().clientIpResolver().clientIn(exemptClients, "exempt address");
        this.requestPlans = settings.plans().from() == null ? null : RequestPlans.of(settings);
        LimitProvider limitProvider = settings.perKeyLimits().provider();
        if (limitProvider != null) {
            limitProvider.onChange(new LimitProvider.Changes() {
                @Override
                public void keyChanged(String rule, String key) {
                    CompiledRule c = compiled.get(rule);
                    if (c != null && key != null) {
                        c.forget(key);
                        store.limitsChanged(new BucketStore.Key(rule, key));
                    }
                }

                @Override
                public void ruleChanged(String rule) {
                    CompiledRule c = compiled.get(rule);
                    if (c != null) {
                        applyChange(c);
                        store.limitsChanged(null);
                    }
                }

                @Override
                public void planChanged(String plan) {
                    compiled.values().forEach(c -> {
                        c.forget(null);
                        applyPlan(c, plan);
                    });
                    store.limitsChanged(null);
                }

                @Override
                public void allChanged() {
                    compiled.values().forEach(c -> {
                        c.forget(null);
                        applyChange(c);
                        plans().keySet().forEach(plan -> applyPlan(c, plan));
                    });
                    store.limitsChanged(null);
                }
            });
        }
    }

    @Override
    public void reset(String rule, String key) {
        Objects.requireNonNull(rule, "rule");
        Objects.requireNonNull(key, "key");
        KeyExpressions.checkNoLoneSurrogate(key, "rule " + LogText.quote(rule));
        store.reset(new BucketStore.Key(rule, key));
        if (fallbackStore != null && fallbackStore != store) {
            fallbackStore.reset(new BucketStore.Key(rule, key));
        }
    }

    @Override
    public void changeRule(String rule, Rule changed) {
        Objects.requireNonNull(rule, "rule");
        if (changed != null && !changed.name().equals(rule)) {
            throw new IllegalArgumentException(
                    "the changed rule is named '" + changed.name() + "', not '" + rule + "' as the change says");
        }
        CompiledRule c = compiled.get(rule);
        if (c != null) {
            c.change(changed == null ? providerChange(c) : changed); // checks it before it is kept
        }
        if (changed == null) {
            localChanges.remove(rule);
        } else {
            localChanges.put(rule, changed);
        }
        if (c != null) {
            applyChange(c); // the newest of the changes: another thread's may have come in between
            store.limitsChanged(null);
        }
    }

    @Override
    public Map<String, List<Limit>> plans() {
        Map<String, List<Limit>> all = new TreeMap<>(settings.plans().byName());
        if (settings.perKeyLimits().provider() instanceof MapLimitProvider keys) {
            all.putAll(keys.plans());
        }
        return Collections.unmodifiableMap(all);
    }

    @Override
    public void changePlan(String plan, @Nullable List<Limit> limits) {
        Objects.requireNonNull(plan, "plan");
        Map<String, List<Limit>> known = plans();
        if (!known.containsKey(plan)) {
            throw new IllegalArgumentException(PlanNames.unknown(plan, known.keySet()));
        }
        if (limits != null) {
            checkPlan(plan, limits); // before anything changes
        }
        if (settings.perKeyLimits().provider() instanceof MapLimitProvider keys
                && keys.plans().containsKey(plan)) {
            localPlans.remove(plan);
            keys.changePlan(plan, limits); // tells every limiter built with it, this one too
            return;
        }
        if (limits == null) {
            localPlans.remove(plan);
        } else {
            localPlans.put(plan, List.copyOf(limits));
        }
        compiled.values().forEach(c -> applyPlan(c, plan));
        store.limitsChanged(null);
    }

    @Override
    public void checkPlan(String plan, List<Limit> limits) {
        Objects.requireNonNull(limits, "limits");
        List<Rule> rules = new ArrayList<>();
        for (CompiledRule c : compiled.values()) {
            rules.add(c.rule);
            if (c.plansFromCalls() && settings.plans().byName().containsKey(plan)) {
                CompiledRule.checkPlan(c.rule, plan, limits);
            }
        }
        if (settings.perKeyLimits().provider() instanceof MapLimitProvider keys) {
            keys.checkPlan(plan, limits, rules);
        }
    }

    /**
     * Gives the plan, where calls name it for the rule, its limits as changed here ({@link #changePlan}), else as the
     * limit provider says they are changed, else as built. A change the rule cannot use is logged and ignored.
     */
    private void applyPlan(CompiledRule c, String plan) {
        if (!c.plansFromCalls()) {
            return;
        }
        List<Limit> limits = localPlans.get(plan);
        LimitProvider provider = settings.perKeyLimits().provider();
        if (limits == null && provider != null) {
            try {
                limits = provider.changedPlan(plan);
            } catch (RuntimeException e) {
                CHANGE_LOG.log(
                        Level.WARNING,
                        "The limit provider failed to say whether plan '" + plan + "' is changed; it decides as "
                                + "configured: " + e,
                        null);
            }
        }
        try {
            c.changePlan(plan, limits);
        } catch (IllegalArgumentException e) {
            CHANGE_LOG.log(
                    Level.WARNING,
                    "The change of plan '" + plan + "' is ignored for rule '" + c.name + "', the plan as configured "
                            + "decides: " + e.getMessage(),
                    null);
            c.changePlan(plan, null);
        }
    }

    /**
     * Decides the rule from now on with its limits and mode as changed here ({@link #changeRule}), else as the limit
     * provider says they are changed, else as built. A change that cannot serve is logged and ignored.
     */
    private void applyChange(CompiledRule c) {
        Rule local = localChanges.get(c.name);
        Rule changed = local != null ? local : providerChange(c);
        try {
            c.change(changed);
        } catch (IllegalArgumentException e) {
            CHANGE_LOG.log(
                    Level.WARNING,
                    "The change of rule '" + c.name + "' at run time is ignored, the rule as configured decides: "
                            + e.getMessage(),
                    null);
            c.change(null);
        }
    }

    /** @return the rule as the limit provider says it is changed, or {@code null} (also when the provider failed) */
    private Rule providerChange(CompiledRule c) {
        LimitProvider provider = settings.perKeyLimits().provider();
        if (provider == null) {
            return null;
        }
        try {
            return provider.changedRule(c.rule);
        } catch (RuntimeException e) {
            CHANGE_LOG.log(
                    Level.WARNING,
                    "The limit provider failed to say whether rule '" + c.name + "' is changed; it decides as "
                            + "configured: " + e,
                    null);
            return null;
        }
    }

    @Override
    public Guard guard(Collection<Rule> rules) {
        List<CompiledRule> list = new ArrayList<>(rules.size());
        for (Rule rule : rules) {
            CompiledRule c = compile(rule);
            // A rule reached twice (a URL rule and an annotation naming the same rule) is charged once.
            if (!list.contains(c)) {
                list.add(c);
            }
        }
        // SOFT rules last: time is reserved only once every other rule has allowed the call.
        list.sort(Comparator.comparingInt(r -> r.mode == Mode.SOFT ? 1 : 0));
        DefaultGuard guard = new DefaultGuard(this, list.toArray(CompiledRule[]::new));
        return settings.observer() == null || list.isEmpty() ? guard : new ObservedGuard(guard, settings.observer());
    }

    private CompiledRule compile(Rule rule) {
        CompiledRule existing = compiled.get(rule.name());
        if (existing != null) {
            return checkSame(existing, rule);
        }
        if (rule.blockFor() != null && !store.keepsBlocks()) {
            throw new InvalidRateLimitConfigurationException(
                    rule.source(),
                    Durations.format(rule.blockFor()),
                    "blockFor needs a store that keeps blocks, and "
                            + store.getClass().getName() + " does not",
                    "Remove blockFor, or use a store that keeps blocks (the local store or Redis).");
        }
        RequestPlans plans = requestPlans != null && requestPlans.appliesTo(rule) ? requestPlans : null;
        CompiledRule fresh = new CompiledRule(rule, settings, plans);
        applyChange(fresh); // before its first call
        if (plans != null) {
            plans.plans().keySet().forEach(plan -> applyPlan(fresh, plan));
        }
        existing = compiled.putIfAbsent(rule.name(), fresh);
        if (existing != null) {
            return checkSame(existing, rule);
        }
        CompiledRule showing = byPublicName.putIfAbsent(rule.publicName(), fresh);
        if (showing == null) {
            applyChange(fresh); // again: a change reported before it was registered reached no compiled rule
            if (plans != null) {
                plans.plans().keySet().forEach(plan -> applyPlan(fresh, plan));
            }
        }
        if (showing != null) {
            compiled.remove(rule.name(), fresh);
            throw new InvalidRateLimitConfigurationException(
                    rule.source(),
                    rule.publicName(),
                    "rule '" + rule.name()
                            + "' would show clients the name '" + rule.publicName() + "', which rule '" + showing.name
                            + "' (" + showing.rule.source()
                            + ") shows already, so clients could not tell their headers apart",
                    "Give one of them another name.");
        }
        return fresh;
    }

    private static CompiledRule checkSame(CompiledRule existing, Rule rule) {
        if (!existing.rule.equals(rule)) {
            throw new InvalidRateLimitConfigurationException("rule name '" + rule.name() + "' is used by two "
                    + "different rules: " + existing.rule.source() + " and " + rule.source()
                    + ". Rules with one name share buckets; give one of them another name.");
        }
        return existing;
    }

    @Override
    public List<Rule> rules() {
        return compiled.values().stream()
                .map(c -> c.rule)
                .sorted(Comparator.comparing(Rule::name))
                .toList();
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            slotPolls.close();
            try {
                store.close();
            } finally {
                try {
                    fallbackStore.close();
                } finally {
                    Settings.Timing timing = settings.timing();
                    if (timing.ownsWaiter() && timing.waiter() instanceof AutoCloseable closeable) {
                        try {
                            closeable.close();
                        } catch (Exception e) {
                            throw new IllegalStateException("closing the delay scheduler failed", e);
                        }
                    }
                }
            }
        }
    }

    // ----------------------------------------------------------------------------------------------------
    // Deciding

    /**
     * @param permits the call's permits, at least 1: each rule takes its cost that many times
     * @param resolved the only rule's key as {@link #resolveAlone} resolved it for this call, or {@code null}
     * @throws IllegalArgumentException when a rule's key can never hold what the call takes (before any store call)
     */
    Evaluation evaluate(CompiledRule[] rules, RequestContext context, long permits, String resolved) {
        if (exempt != null && exempt.test(context)) {
            Evaluation ev = new Evaluation(waiting);
            ev.decided(Verdicts.exempted(rules, permits));
            notifyListeners(ev.decision());
            return ev;
        }
        RuleDecider.Target[] targets = new RuleDecider.Target[rules.length];
        for (int i = 0; i < rules.length; i++) {
            targets[i] = decider.target(rules[i], context, permits, i == 0 ? resolved : null);
        }
        Evaluation ev = new Evaluation(waiting);
        Verdict[] verdicts = new Verdict[rules.length];
        int early = -1;
        Verdict earlyVerdict = null;
        if (rules.length > 1) {
            // A rule this JVM remembers rejecting decides first and alone: a flood of rejected calls costs the
            // store nothing, whichever rule rejects it.
            early = RuleDecider.knownRejection(targets);
            if (early >= 0) {
                ev.decidingVerdict(early);
                earlyVerdict = decider.decide(targets[early], ev);
                if (earlyVerdict.outcome() == Outcome.REJECTED) {
                    ev.decided(new Decision(Outcome.REJECTED, List.of(earlyVerdict), 0, earlyVerdict.waitNanos()));
                    notifyListeners(ev.decision());
                    return ev;
                }
            }
            RuleDecider.sendAll(targets, early);
        }
        try {
            return decideInOrder(rules, targets, ev, verdicts, early, earlyVerdict);
        } catch (RuntimeException | Error e) {
            // Not a store failure (each rule's policy answers those): give back what was taken and started.
            RuleDecider.abandon(targets, 0);
            ev.refund();
            ev.finish();
            throw e;
        }
    }

    /**
     * @param rule a guard's only rule
     * @return whether calls of {@code rule} alone may be decided by {@link #decideAlone}: its shape allows it, the store
     *         keeps buckets in this JVM, and no client is exempt
     */
    boolean decidesAlone(CompiledRule rule) {
        return rule.alone != null && store instanceof LocalBucketStore && exempt == null;
    }

    /**
     * Resolves the key of a rule that decides a call alone ({@link #decidesAlone}), once for the call: the short path
     * ({@link #decideAlone}) and, when it cannot decide, the general one ({@link #evaluate}) both use it.
     *
     * @return the key; empty when it is missing or the resolver failed (logged)
     */
    static String resolveAlone(CompiledRule rule, RequestContext context) {
        String key = RuleDecider.resolveKey(rule, context);
        return key == null ? "" : key;
    }

    /**
     * Decides a call of one permit that {@code rule} alone decides ({@link #decidesAlone}) when its bucket allows it
     * at once, with no bookkeeping: no evaluation, no probe, and the verdict's records made only when read
     * ({@link AllowedVerdict}). The decision is the one {@link #evaluate} gives.
     *
     * @param key the call's key, from {@link #resolveAlone}
     * @return the decision, or {@code null} when the call needs the general path ({@link #evaluate}), having taken
     *         nothing: its key is missing, its bucket does not allow it now, or its store failed
     */
    Decision decideAlone(CompiledRule rule, String key) {
        if (key.isEmpty()) {
            return null;
        }
        CompiledRule.Alone alone = rule.alone;
        if (alone == null) {
            return null; // the rule's limits were changed into a shape the short path does not take
        }
        KeyState state;
        try {
            state = store.state(rule.name, key, alone.limits(), rule.localFirst);
        } catch (RuntimeException e) {
            return null; // the rule's failure policy answers, on the general path
        }
        if (!(state instanceof RecordingBucket bucket)) {
            return null;
        }
        AllowedVerdict verdict = new AllowedVerdict(alone.shape(), key);
        if (!bucket.consume(rule.cost, verdict)) {
            return null;
        }
        Decision decision = new Decision(Outcome.ALLOWED, verdict, 0, 0);
        notifyListeners(decision);
        return decision;
    }

    /**
     * What deciding the call would give now, taking nothing and telling no listener: each rule's verdict, a wait
     * included ({@link Guard#peek}).
     *
     * @throws IllegalArgumentException as {@link #evaluate} does
     */
    Decision peek(CompiledRule[] rules, RequestContext context, long permits) {
        if (exempt != null && exempt.test(context)) {
            return Verdicts.exempted(rules, permits);
        }
        List<Verdict> verdicts = new ArrayList<>(rules.length);
        Outcome worst = Outcome.ALLOWED;
        long delay = 0;
        long retryAfter = 0;
        for (CompiledRule rule : rules) {
            Verdict v = decider.peek(decider.target(rule, context, permits, null));
            verdicts.add(v);
            if (v.outcome().compareTo(worst) > 0) {
                worst = v.outcome();
            }
            if (v.outcome() == Outcome.DELAYED) {
                delay = Math.max(delay, v.waitNanos());
            } else if (v.outcome() == Outcome.REJECTED) {
                retryAfter = Math.max(retryAfter, v.waitNanos());
            }
        }
        return new Decision(
                worst, verdicts, worst == Outcome.DELAYED ? delay : 0, worst == Outcome.REJECTED ? retryAfter : 0);
    }

    private Evaluation decideInOrder(
            CompiledRule[] rules,
            RuleDecider.Target[] targets,
            Evaluation ev,
            Verdict[] verdicts,
            int early,
            Verdict earlyVerdict) {
        int n = 0;
        Outcome worst = Outcome.ALLOWED;
        long delay = 0;
        long retryAfter = 0;
        for (int i = 0; i < rules.length; i++) {
            ev.decidingVerdict(n);
            Verdict v = i == early ? earlyVerdict : decider.decide(targets[i], ev);
            verdicts[n++] = v;
            if (v.outcome().compareTo(worst) > 0) {
                worst = v.outcome();
            }
            // A call waiting for a slot waits after the delay, as long as it takes (SlotWaits).
            if (v.outcome() == Outcome.DELAYED && !Verdicts.awaitsSlot(v, rules[i])) {
                delay = Math.max(delay, v.waitNanos());
            }
            if (v.outcome() == Outcome.REJECTED) {
                retryAfter = v.waitNanos();
                ev.clearSlotWaits();
                RuleDecider.abandon(targets, i + 1);
                ev.refund();
                ev.finish();
                delay = 0;
                // The rules before this one got their tokens back: report their windows as they are now.
                for (int j = 0; j < n - 1; j++) {
                    verdicts[j] = Verdicts.refunded(verdicts[j], rules[j]);
                }
                break;
            }
        }
        if (worst == Outcome.DELAYED) {
            Evaluation.Alignment aligned = ev.align(delay, verdicts);
            if (!aligned.rejected()) {
                delay = aligned.delayNanos();
            } else {
                // A rule cannot count the call when it would run: rejected, everything given back.
                int rejecting = aligned.rejectingVerdict();
                retryAfter = verdicts[rejecting].waitNanos();
                ev.clearSlotWaits();
                ev.refund();
                ev.finish();
                worst = Outcome.REJECTED;
                delay = 0;
                for (int i = 0; i < n; i++) {
                    if (i != rejecting) {
                        verdicts[i] = Verdicts.refunded(verdicts[i], rules[i]);
                    }
                }
            }
        }
        if (worst != Outcome.DELAYED && ev.holdsWaitingPlaces()) {
            ev.finish();
        }
        ev.decided(new Decision(worst, Arrays.asList(Arrays.copyOf(verdicts, n)), delay, retryAfter));
        if (ev.slotWaitCount() == 0) {
            // Listeners hear of a call waiting for a slot once it has one, or gave up (SlotWaits).
            notifyListeners(ev.decision());
        }
        return ev;
    }

    void notifyListeners(Decision decision) {
        for (RateLimiter.Listener listener : listeners) {
            try {
                listener.onDecision(decision);
            } catch (RuntimeException e) {
                LISTENER_LOG.log(Level.WARNING, "A rate-limit listener failed: " + listener, e);
            }
        }
    }

    /** Tells the listeners how a call was settled under a charging rule ({@link Charges}). */
    void notifySettled(Verdict verdict, Guard.Settlement settlement, long tokens) {
        for (RateLimiter.Listener listener : listeners) {
            try {
                listener.onSettled(verdict, settlement, tokens);
            } catch (RuntimeException e) {
                LISTENER_LOG.log(Level.WARNING, "A rate-limit listener failed: " + listener, e);
            }
        }
    }

    /** Settles what a permitted call used under the guard's charging rules ({@link Guard#settle}). */
    void settle(CompiledRule[] rules, Decision decision, ToLongFunction<Rule> actual) {
        Charges.settle(this, rules, decision, actual);
    }

    /** @return the store */
    BucketStore store() {
        return store;
    }

    /** @return the store of the local fallback */
    BucketStore fallbackStore() {
        return fallbackStore;
    }

    /**
     * Returns the tokens that the rules (all, or those that count only some calls and did not count this one) took
     * for a permitted call.
     *
     * @param giveBack which rules give their tokens back
     *
     * @return the decision as it stands afterwards: the verdicts whose tokens came back report their windows with
     *         them ({@link Verdicts#refunded}); the others, and any whose store failed, as they were
     */
    Decision returnTokens(CompiledRule[] rules, Decision decision, Predicate<Rule> giveBack) {
        List<Verdict> after = null;
        List<Verdict> verdicts = decision.verdicts();
        for (int i = 0; i < verdicts.size(); i++) {
            Verdict v = verdicts.get(i);
            if ((v.outcome() != Outcome.ALLOWED && v.outcome() != Outcome.DELAYED)
                    || v.key() == null
                    || (v.basis() != Basis.BUCKET && v.basis() != Basis.FALLBACK_BUCKET)) {
                continue;
            }
            for (CompiledRule rule : rules) {
                if (rule.name.equals(v.rule()) && giveBack.test(rule.rule)) {
                    BucketStore.Key bucketKey = new BucketStore.Key(rule.name, v.key());
                    CompiledRule.Configs configs = rule.configsForRefund(v.key());
                    if (configs == null) {
                        // The plan the key's call named is forgotten (100,000 keys since): keep the call's tokens
                        // rather than resize the key's state to a plan it may not have.
                        break;
                    }
                    try {
                        KeyState state = v.basis() == Basis.BUCKET
                                ? store.state(bucketKey, configs.primary(), rule.localFirst)
                                : fallbackStore.state(bucketKey, configs.fallback(), null);
                        state.refund(Verdicts.permits(v, rule), v.receipt());
                        if (after == null) {
                            after = new ArrayList<>(verdicts);
                        }
                        after.set(i, Verdicts.refunded(v, rule));
                    } catch (RuntimeException e) {
                        STORE_LOG.log(
                                Level.WARNING,
                                "Could not return the token(s) of a call to rule '" + rule.name + "'; the store failed",
                                e);
                    }
                    break;
                }
            }
        }
        return after == null
                ? decision
                : new Decision(decision.outcome(), after, decision.delayNanos(), decision.retryAfterNanos());
    }

    Waiter waiter() {
        return settings.timing().waiter();
    }

    /** @return the limiter's clock */
    TimeMeter clock() {
        return settings.timing().timeMeter();
    }

    /** @return what decides each rule */
    RuleDecider decider() {
        return decider;
    }

    /** @return the threads that ask the store for slots for calls waiting asynchronously */
    SlotPolls slotPolls() {
        return slotPolls;
    }
}
