package io.github.ratelimit.internal;


import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Limit;
import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.MissingKeyPolicy;
import io.github.ratelimit.Mode;
import io.github.ratelimit.Rule;
import io.github.ratelimit.StoreFailurePolicy;
import io.github.ratelimit.key.KeyResolver;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.support.RateLimitedLog;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;

/**
 * A rule with everything a decision needs resolved up front: its key resolver, its store limits
 * (primary and local-fallback), and the cache of per-key limits. Immutable apart from the caches; thread-safe.
 */
final class CompiledRule {

    /** The primary and the local-fallback limits of one set of limits. */
    record Configs(BucketStore.Limits primary, BucketStore.Limits fallback) {
    }

    private static final RateLimitedLog PROVIDER_LOG = new RateLimitedLog(10_000_000_000L);
    private static final long MAX_PER_KEY_ENTRIES = 100_000;
    private static final long MAX_DISTINCT_LIMIT_SETS = 10_000;

    final Rule rule;
    final String name;
    /** What clients see in the rule's place: {@link Rule#publicName()}. */
    final String publicName;
    final KeyResolver resolver;
    final Mode mode;
    final long cost;
    final long maxDelayNanos;
    final StoreFailurePolicy storeFailurePolicy;
    final MissingKeyPolicy missingKeyPolicy;
    final io.github.ratelimit.Rule.LocalFirst localFirst;
    /** Places for calls of this (SOFT) rule waiting out a delay. */
    final java.util.concurrent.Semaphore waiting;
    private final Configs defaults;
    private final double fallbackShare;
    private final LimitProvider provider;
    private final Cache<String, Configs> perKey;
    private final Cache<List<Limit>, Configs> distinct;

    CompiledRule(Rule rule, KeyResolver resolver, StoreFailurePolicy defaultPolicy, double fallbackShare,
                 LimitProvider provider, Duration providerTtl, TimeMeter timeMeter, boolean shadow) {
        this.rule = rule;
        this.name = rule.name();
        this.publicName = rule.publicName();
        this.resolver = resolver;
        // A limiter in shadow mode (a dry run) runs every rule as SHADOW, whatever the rule says.
        this.mode = shadow ? io.github.ratelimit.Mode.SHADOW : rule.mode();
        this.cost = rule.cost();
        this.maxDelayNanos = rule.maxDelay() == null ? 0 : rule.maxDelay().toNanos();
        this.storeFailurePolicy = rule.onStoreFailure() == StoreFailurePolicy.DEFAULT ? defaultPolicy
                : rule.onStoreFailure();
        this.missingKeyPolicy = rule.onMissingKey();
        this.localFirst = rule.localFirst();
        this.waiting = new java.util.concurrent.Semaphore(rule.maxWaiting());
        this.fallbackShare = fallbackShare;
        this.defaults = configs(rule.limits());
        this.provider = provider;
        if (provider != null) {
            Ticker ticker = timeMeter == TimeMeter.SYSTEM_MILLISECONDS || timeMeter == TimeMeter.SYSTEM_NANOTIME
                    ? Ticker.systemTicker() : timeMeter::currentTimeNanos;
            this.perKey = Caffeine.newBuilder().maximumSize(MAX_PER_KEY_ENTRIES).expireAfterWrite(providerTtl)
                    .ticker(ticker).build();
            this.distinct = Caffeine.newBuilder().maximumSize(MAX_DISTINCT_LIMIT_SETS).build();
        } else {
            this.perKey = null;
            this.distinct = null;
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

    /**
     * @param key the resolved key
     * @return the configurations for the key: its own limits from the provider, or the rule's
     */
    Configs configsFor(String key) {
        if (perKey == null) {
            return defaults;
        }
        return perKey.get(key, this::load);
    }

    private Configs load(String key) {
        List<Limit> limits;
        try {
            limits = provider.limitsFor(rule, key);
        } catch (RuntimeException e) {
            PROVIDER_LOG.log(Level.WARNING, "Limit provider failed for rule '" + name
                    + "'; using the rule's own limits " + rule.limits(), e);
            return defaults;
        }
        if (limits == null || limits.isEmpty() || limits.equals(rule.limits())) {
            return defaults;
        }
        return distinct.get(List.copyOf(limits), this::validatedConfigs);
    }

    private Configs validatedConfigs(List<Limit> limits) {
        try {
            rule.withLimits(limits);
        } catch (InvalidRateLimitConfigurationException e) {
            PROVIDER_LOG.log(Level.WARNING, "Limit provider returned limits " + limits + " that rule '" + name
                    + "' cannot use (" + e.getMessage() + "); using the rule's own limits " + rule.limits(), null);
            return defaults;
        }
        return configs(limits);
    }

    private Configs configs(List<Limit> limits) {
        BucketStore.Limits primary = BucketStore.Limits.of(limits, rule.algorithm());
        return new Configs(primary, primary.scaled(fallbackShare));
    }
}
