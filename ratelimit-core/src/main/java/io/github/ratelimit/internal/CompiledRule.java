package io.github.ratelimit.internal;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.CallTooLargeException;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Limit;
import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.MissingKeyPolicy;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.StoreFailurePolicy;
import io.github.ratelimit.internal.bucket.AllowedVerdict;
import io.github.ratelimit.key.KeyResolver;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.support.LogText;
import io.github.ratelimit.support.RateLimitedLog;
import java.lang.System.Logger.Level;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import org.jspecify.annotations.Nullable;

/**
 * A rule with everything a decision needs resolved up front: its key resolver, its store limits
 * (primary and local-fallback), and the cache of per-key limits. Immutable apart from the caches; thread-safe.
 */
final class CompiledRule {

    /** The primary and the local-fallback limits of one set of limits. */
    record Configs(BucketStore.Limits primary, BucketStore.Limits fallback) {}

    private static final RateLimitedLog PROVIDER_LOG = new RateLimitedLog(10_000_000_000L);
    private static final RateLimitedLog PERMITS_LOG = new RateLimitedLog(10_000_000_000L);
    private static final long MAX_PER_KEY_ENTRIES = 100_000;
    /** The digits of {@link Long#MAX_VALUE}: a count of more is more than any window holds. */
    private static final int MAX_LONG_DIGITS = 19;

    private static final long MAX_DISTINCT_LIMIT_SETS = 10_000;

    final Rule rule;
    final String name;
    /** What clients see in the rule's place: {@link Rule#publicName()}. */
    final String publicName;

    final KeyResolver resolver;
    /** Resolves how many permits a call counts as under this rule ({@link Rule#permits()}), or {@code null}. */
    final KeyResolver permitsResolver;
    /** The keys and addresses this rule never limits, or {@code null}. */
    final Exemption exemption;

    /**
     * The mode calls are decided in: the rule's own (SHADOW for a limiter in shadow mode), or the one it was changed
     * to at run time ({@link #change}).
     */
    volatile Mode mode;
    /** The mode the rule was built with, as the limiter runs it. */
    private final Mode builtMode;

    final long cost;
    final long maxDelayNanos;
    /** How long a key stays refused once the rule refused it ({@link Rule#blockFor()}); 0 for no block. */
    final long blockNanos;

    final StoreFailurePolicy storeFailurePolicy;
    final MissingKeyPolicy missingKeyPolicy;
    final Rule.LocalFirst localFirst;
    /** Whether this is a concurrency rule, whose calls hold slots ({@link Rule#concurrency()}). */
    final boolean slots;
    /** Places for calls of this (SOFT) rule waiting out a delay. */
    final Semaphore waiting;

    /**
     * The shape of this rule's allowed verdicts, when a call it alone decides may take the engine's path that makes
     * no bookkeeping ({@link DefaultRateLimiter#decideAlone}): every call counts (no slots, no count of only some
     * calls, no permits expression), no key is exempt, every key has the rule's own limits (no per-key limits, no
     * plans), and Bucket4j runs them in at most {@value AllowedVerdict#MAX_WINDOWS} windows. Otherwise {@code null}.
     * Replaced when the rule's limits or mode change at run time ({@link #change}).
     */
    volatile @Nullable Alone alone;

    /** The shape of a rule's allowed verdicts that decides alone, with the limits of its buckets: read as one. */
    record Alone(AllowedVerdict.Shape shape, BucketStore.Limits limits) {}

    /** The configurations of the rule's limits as built. */
    private final Configs built;
    /**
     * The configurations of every key without limits of its own: the rule's as built, or those it was changed to at
     * run time ({@link #change}). The one place a rule's limits are read per decision.
     */
    private volatile Configs defaults;

    private final double fallbackShare;
    /** Whether the limiter runs every rule as SHADOW (a dry run). */
    private final boolean shadowLimiter;
    /** Whether calls may decide alone whatever the limits ({@link #alone}): all but the limits' shape allow it. */
    private final boolean mayDecideAlone;

    private final LimitProvider provider;
    private final Cache<String, Configs> perKey;
    private final Cache<List<Limit>, Configs> distinct;
    /** Plans chosen by the call, or {@code null}: their configurations by plan name. */
    private final RequestPlans requestPlans;

    /** The configurations of the plans calls may name, by plan: replaced when a plan changes ({@link #changePlan}). */
    private volatile Map<String, Configs> planConfigs;
    /**
     * The configurations each key's latest call chose (a plan's, or the rule's own), for refunds, which have no call to
     * read a plan from.
     */
    private final Cache<String, Configs> planned;

    /**
     * Compiles the rule's key and permits expressions and its exemptions.
     *
     * @param rule the rule
     * @param settings the limiter's settings
     * @param requestPlans the plans calls may name, when they are for this rule; else {@code null}
     * @throws InvalidRateLimitConfigurationException when an expression, an exemption or a plan does not fit the rule
     */
    CompiledRule(Rule rule, DefaultRateLimiter.Settings settings, RequestPlans requestPlans) {
        DefaultRateLimiter.Settings.Keys keys = settings.keys();
        this.rule = rule;
        this.name = rule.name();
        this.publicName = rule.publicName();
        this.resolver = KeyExpressions.compile(
                rule.key(), keys.resolvers(), keys.clientIpResolver(), keys.factory(), rule.source());
        this.permitsResolver = rule.permits() == null
                ? null
                : KeyExpressions.compileValue(
                        rule.permits(),
                        keys.resolvers(),
                        keys.clientIpResolver(),
                        keys.factory(),
                        rule.source() + ": permits");
        List<String> exemptions = settings.exemptions().byRule().get(rule.name());
        this.exemption = exemptions == null || exemptions.isEmpty()
                ? null
                : Exemption.of(exemptions, rule, keys.clientIpResolver());
        // A limiter in shadow mode (a dry run) runs every rule as SHADOW, whatever the rule says.
        this.shadowLimiter = settings.shadow();
        this.builtMode = shadowLimiter ? Mode.SHADOW : rule.mode();
        this.mode = builtMode;
        this.cost = rule.cost();
        this.maxDelayNanos = rule.maxDelay() == null ? 0 : rule.maxDelay().toNanos();
        this.blockNanos = rule.blockFor() == null ? 0 : rule.blockFor().toNanos();
        this.storeFailurePolicy = rule.onStoreFailure() == StoreFailurePolicy.DEFAULT
                ? settings.stores().defaultFailurePolicy()
                : rule.onStoreFailure();
        this.missingKeyPolicy = rule.onMissingKey();
        this.localFirst = rule.localFirst();
        this.slots = rule.concurrency() > 0;
        this.waiting = new Semaphore(rule.maxWaiting());
        this.fallbackShare = settings.stores().localFallbackShare();
        this.built = rule.concurrency() > 0 ? concurrencyConfigs(rule.concurrency()) : configs(rule.limits());
        this.defaults = built;
        this.requestPlans = requestPlans;
        if (requestPlans != null) {
            Map<String, Configs> byPlan = new HashMap<>();
            requestPlans.plans().forEach((plan, limits) -> {
                checkPlan(rule, plan, limits);
                byPlan.put(plan, limits.equals(rule.limits()) ? built : configs(limits));
            });
            this.planConfigs = Map.copyOf(byPlan);
            this.planned =
                    Caffeine.newBuilder().maximumSize(MAX_PER_KEY_ENTRIES).build();
        } else {
            this.planConfigs = Map.of();
            this.planned = null;
        }
        LimitProvider provider = settings.perKeyLimits().provider();
        this.provider = provider;
        if (provider != null) {
            TimeMeter timeMeter = settings.timing().timeMeter();
            Ticker ticker = timeMeter == TimeMeter.SYSTEM_MILLISECONDS || timeMeter == TimeMeter.SYSTEM_NANOTIME
                    ? Ticker.systemTicker()
                    : timeMeter::currentTimeNanos;
            this.perKey = Caffeine.newBuilder()
                    .maximumSize(MAX_PER_KEY_ENTRIES)
                    .expireAfterWrite(settings.perKeyLimits().ttl())
                    .ticker(ticker)
                    .build();
            this.distinct =
                    Caffeine.newBuilder().maximumSize(MAX_DISTINCT_LIMIT_SETS).build();
        } else {
            this.perKey = null;
            this.distinct = null;
        }
        this.mayDecideAlone = !slots
                && rule.blockFor() == null
                && rule.count() == Rule.Counted.ALL
                && permitsResolver == null
                && exemption == null
                && provider == null
                && requestPlans == null;
        this.alone = alone(built, builtMode);
    }

    /** @return how calls decide alone under these configurations and mode, or {@code null} when they cannot */
    private @Nullable Alone alone(Configs configs, Mode m) {
        if (!mayDecideAlone || !configs.primary().onBucket4j()) {
            return null;
        }
        AllowedVerdict.Shape shape = AllowedVerdict.Shape.of(
                name, publicName, m, cost, configs.primary().bucketConfiguration());
        return shape == null ? null : new Alone(shape, configs.primary());
    }

    /**
     * Checks that a rule can use a plan's limits, with the message start-up gives.
     *
     * @param rule a rule plans from the call apply to
     * @param plan the plan's name
     * @param limits its limits
     * @throws InvalidRateLimitConfigurationException when the rule cannot use them
     */
    static void checkPlan(Rule rule, String plan, List<Limit> limits) {
        try {
            rule.withLimits(limits);
        } catch (InvalidRateLimitConfigurationException e) {
            throw new InvalidRateLimitConfigurationException(
                    rule.source() + ": plan '" + plan + "' (from the "
                            + "call, ratelimit.plan-from) has limits " + limits + " this rule cannot use: "
                            + e.getMessage()
                            + " Give the plan limits every rule it is for can use, or name the rules "
                            + "(ratelimit.plan-rules).",
                    e);
        }
    }

    /** @return whether calls may name plans for this rule ({@code ratelimit.plan-from}) */
    boolean plansFromCalls() {
        return requestPlans != null;
    }

    /**
     * Gives a plan calls may name other limits from now on, or its configured ones; keys already on it take them at
     * their next call.
     *
     * @param plan the plan's name; one this rule does not know is ignored
     * @param limits its limits from now on, or {@code null} for those it was configured with
     * @throws InvalidRateLimitConfigurationException when the rule cannot use them
     */
    void changePlan(String plan, @Nullable List<Limit> limits) {
        if (requestPlans == null || !requestPlans.plans().containsKey(plan)) {
            return;
        }
        List<Limit> now = limits == null ? requestPlans.plans().get(plan) : limits;
        checkPlan(rule, plan, now);
        Map<String, Configs> byPlan = new HashMap<>(planConfigs);
        byPlan.put(plan, now.equals(rule.limits()) ? built : configs(now));
        planConfigs = Map.copyOf(byPlan);
    }

    /**
     * Decides the rule's calls from now on with the changed rule's limits and mode, or with its own again: keys with
     * limits of their own keep them, and a bucket under the old limits takes the new ones at its next call (the
     * store's additive replacement). A limiter in shadow mode keeps every rule SHADOW.
     *
     * @param changed the rule changed at run time ({@link RuleChanges#changed}), or {@code null} for the rule as built
     * @throws IllegalArgumentException when the changed rule differs from this one in anything but its limits and
     *         mode, or its mode change is not safe at run time
     */
    void change(@Nullable Rule changed) {
        if (changed == null || changed.equals(rule)) {
            defaults = built;
            mode = builtMode;
            alone = alone(built, builtMode);
            return;
        }
        if (!changed.withLimits(rule.limits()).toBuilder()
                .mode(rule.mode())
                .build()
                .equals(rule)) {
            throw new IllegalArgumentException("rule '" + name + "' changed at run time differs from the rule as built "
                    + "in more than its limits and mode");
        }
        String unsafe = RuleChanges.unsafeModeChange(rule.mode(), changed.mode());
        if (unsafe != null) {
            throw new IllegalArgumentException("rule '" + name + "' cannot change mode at run time from " + rule.mode()
                    + " to " + changed.mode() + ": " + unsafe);
        }
        Configs configs = slots || changed.limits().equals(rule.limits()) ? built : configs(changed.limits());
        Mode m = shadowLimiter ? Mode.SHADOW : changed.mode();
        defaults = configs;
        mode = m;
        alone = alone(configs, m);
    }

    /**
     * @param context a call
     * @return how many permits the call counts as under this rule, from its {@link Rule#permits()} expression: at
     *         least 1 (0 counts as 1; leading zeros are ignored, so {@code 007} is 7, never octal);
     *         {@link Long#MAX_VALUE} for a whole number larger than a long holds, which no window can hold, so the call
     *         is too large ({@link CallTooLargeException}, 413 on the web), not refused as if it
     *         had no count; -1 when the expression gives no whole number (nothing, text, a fraction, a sign), which
     *         refuses the call
     */
    long permitsOf(RequestContext context) {
        String value;
        try {
            value = permitsResolver.resolve(context);
        } catch (RuntimeException e) {
            PERMITS_LOG.log(
                    Level.WARNING, "The permits expression of rule '" + name + "' failed; refusing the call", e);
            return -1;
        }
        if (value == null) {
            return -1;
        }
        String digits = value.trim();
        if (digits.isEmpty() || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            PERMITS_LOG.log(
                    Level.WARNING,
                    "The permits expression of rule '" + name + "' gave " + LogText.quote(value)
                            + ", which is no whole number; refusing the call",
                    null);
            return -1;
        }
        int start = 0;
        while (start < digits.length() - 1 && digits.charAt(start) == '0') {
            start++;
        }
        String significant = digits.substring(start);
        if (significant.length() > MAX_LONG_DIGITS) {
            return Long.MAX_VALUE;
        }
        try {
            return Math.max(1, Long.parseLong(significant));
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE; // 19 digits beyond Long.MAX_VALUE
        }
    }

    /**
     * Forgets the provider's answer for a key (or every key, for {@code null}), so the next call asks again.
     *
     * @param key the key, or {@code null} for all
     */
    void forget(String key) {
        if (perKey != null) {
            if (key == null) {
                perKey.invalidateAll();
            } else {
                perKey.invalidate(key);
            }
        }
    }

    /** The provider's answer for a key without an entry of its own (none, or the provider failed). */
    private static final Configs NO_ENTRY = new Configs(null, null);

    /** @return the key's own configurations from the provider, or {@link #NO_ENTRY} */
    private Configs own(String key) {
        return perKey == null ? NO_ENTRY : perKey.get(key, this::load);
    }

    /**
     * For a refund, which has no call to read a plan from.
     *
     * @param key the resolved key
     * @return the configurations the key's calls are decided with: its own limits from the provider, else those its
     *         latest call chose (a plan's, or the rule's); {@code null} when the rule takes plans from calls and that
     *         choice is forgotten: a refund then keeps the tokens rather than resize the key's state
     */
    Configs configsForRefund(String key) {
        if (rule.concurrency() > 0) {
            return built;
        }
        Configs own = own(key);
        if (own != NO_ENTRY) {
            return own;
        }
        return planned == null ? defaults : planned.getIfPresent(key);
    }

    /**
     * @param key the resolved key
     * @param context the call
     * @return the configurations for the key: its own limits from the provider (an entry wins, even one equal to the
     *         rule's own), else those of the plan the call names ({@code ratelimit.plan-from}), else the rule's
     */
    Configs configsFor(String key, RequestContext context) {
        if (rule.concurrency() > 0) {
            return built;
        }
        Configs own = own(key);
        if (own != NO_ENTRY) {
            return own;
        }
        if (requestPlans == null) {
            return defaults;
        }
        String plan = requestPlans.planOf(context);
        Configs chosen = plan == null ? defaults : planConfigs.getOrDefault(plan, defaults);
        // Remembered whichever it is (the rule's own too), for refunds.
        if (planned.getIfPresent(key) != chosen) {
            planned.put(key, chosen);
        }
        return chosen;
    }

    private Configs load(String key) {
        List<Limit> limits;
        try {
            limits = provider.limitsFor(rule, key);
        } catch (RuntimeException e) {
            PROVIDER_LOG.log(
                    Level.WARNING,
                    "Limit provider failed for rule '" + name + "'; using the rule's own limits " + rule.limits(),
                    e);
            return NO_ENTRY;
        }
        if (limits == null || limits.isEmpty()) {
            return NO_ENTRY;
        }
        if (limits.equals(rule.limits())) {
            return built;
        }
        return distinct.get(List.copyOf(limits), this::validatedConfigs);
    }

    private Configs validatedConfigs(List<Limit> limits) {
        try {
            rule.withLimits(limits);
        } catch (InvalidRateLimitConfigurationException e) {
            PROVIDER_LOG.log(
                    Level.WARNING,
                    "Limit provider returned limits " + limits + " that rule '" + name + "' cannot use ("
                            + e.getMessage() + "); using the rule's own limits " + rule.limits(),
                    null);
            return NO_ENTRY;
        }
        return configs(limits);
    }

    private Configs concurrencyConfigs(int max) {
        BucketStore.Limits primary = BucketStore.Limits.concurrency(max);
        return new Configs(primary, primary.scaled(fallbackShare));
    }

    private Configs configs(List<Limit> limits) {
        BucketStore.Limits primary = BucketStore.Limits.of(limits, rule.algorithm());
        return new Configs(primary, primary.scaled(fallbackShare));
    }
}
