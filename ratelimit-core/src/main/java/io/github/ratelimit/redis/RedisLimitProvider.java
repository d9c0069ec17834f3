package io.github.ratelimit.redis;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Limit;
import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.Mode;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.KeyExpressions;
import io.github.ratelimit.internal.MapLimitProvider;
import io.github.ratelimit.internal.PlanNames;
import io.github.ratelimit.internal.RuleChanges;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.support.LogText;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Per-key limits kept in Redis, changed at run time, and served to every instance's limiter (the design's
 * configuration store: {@code user:241531} → {@code 5/1s}). A key of a rule gets limits of its own or a plan; keys
 * without an entry keep the rule's limits. Operators change entries through {@link LimitAdmin}, which finds rules by
 * name and keys by what decisions and listings show; the methods here take the {@link Rule} itself, and refuse
 * limits it cannot use.
 *
 * <p><b>Layout</b> (one Cluster slot, hash tag {@code {limits}}; nothing expires): a hash per rule,
 * {@code <prefix>:{limits}:rule:<rule>} (field: the key as the rule counts by it, canonical and at most 128
 * characters, a longer one hashed as the limiter hashes it; value: limits or plan, who, when), and a stream of
 * changes, {@code <prefix>:{limits}:changes}, capped at about {@value #MAX_CHANGES} entries. A change writes both in
 * one script that checks both keys' types first: both writes happen, or neither. A rule's own limits or mode changed
 * at run time ({@link #changeRule}) are a field of {@code <prefix>:{limits}:rules} (field: the rule's name; value:
 * limits, mode, who, when), written the same way and recorded in the same stream; each instance reads a rule's change
 * when its limiter registers the rule and again when the stream says it changed. A change there that is garbage
 * (another layout, limits or a mode the rule cannot take, a value over 4 KiB) is ignored with a warning: the rule
 * decides as configured.
 *
 * <p><b>Consistency</b>: each instance caches answers (bounded, no expiry) and reads the stream every
 * {@link Builder#refreshInterval} (default 1 s): a change applies on every instance within that interval plus a
 * round trip, at the key's next call (the bucket takes the new limits as configuration changes do), on the instance
 * that made it at once. An instance that finds the stream trimmed or started again, or that recovers from an
 * outage, forgets every answer. <b>Failures</b>: while Redis cannot be read, cached answers stay; a key not cached
 * gets the rule's own limits, without waiting on Redis once a read or refresh has failed. Changes fail with
 * {@link RateLimitStoreException}.
 *
 * <p><b>Garbage</b> (state this store did not write) is never obeyed and never reaches another rule: an entry that
 * does not parse, or whose limits its rule cannot use, gives the rule's own limits and a warning (at most every
 * 10 s); a rule's hash of another type is read as empty and replaced ({@code UNLINK}) by the rule's next change; a
 * stream of another type, or with IDs clients cannot read, is replaced by the next change or refresh, and every
 * instance then forgets its answers.
 * {@link #repairs()} counts the keys this instance replaced.
 *
 * <p>Every change is logged (logger {@code io.github.ratelimit.limits}, INFO) with who made it, control characters
 * of keys and names escaped. Thread-safe; {@link #close()} stops the refresh thread (the client is the caller's).
 */
public final class RedisLimitProvider implements LimitProvider, AutoCloseable {

    /** About how many changes the stream keeps. */
    public static final int MAX_CHANGES = 10_000;

    private static final System.Logger AUDIT = System.getLogger("io.github.ratelimit.limits");

    /**
     * One key's entry.
     *
     * @param rule the rule's name
     * @param key the key, as the rule counts by it (as stored: for a field that is not UTF-8, with U+FFFD)
     * @param address what reaches this very entry in the admin operations ({@link LimitAdmin#address(byte[])})
     * @param limits the limits that apply (a plan's, for a plan); empty when there is a problem
     * @param plan the plan's name, or {@code null} for limits of the key's own
     * @param changedBy who made the change, as given
     * @param changedAt when, or {@code null} when the entry does not say
     * @param problem why the entry gives the key no limits of its own (unreadable, a plan not known here), or
     *        {@code null} when it does
     */
    public record Entry(
            String rule,
            String key,
            String address,
            List<Limit> limits,
            @Nullable String plan,
            String changedBy,
            @Nullable Instant changedAt,
            @Nullable String problem) {}

    /**
     * One page of a rule's entries.
     *
     * @param entries the entries, in no particular order
     * @param next the cursor for the next page, or {@code null} after the last
     */
    public record Page(List<Entry> entries, @Nullable String next) {}

    private final UnifiedJedis jedis;
    private final String prefix;
    private final Map<String, List<Limit>> plans;
    private final @Nullable LimitProvider defaults;
    private final Clock clock;
    private final AtomicLong repairs = new AtomicLong();
    private final LimitAnswers answers;
    private final LimitReads reads;
    private final ScheduledExecutorService refresher;

    @SuppressWarnings("NullAway") // build() refuses a builder without a client
    private RedisLimitProvider(Builder b) {
        this.jedis = b.client;
        this.prefix = b.keyPrefix;
        this.plans = Map.copyOf(b.plans);
        this.defaults = b.defaults;
        this.clock = b.clock;
        this.answers = new LimitAnswers(jedis, prefix, plans, b.maximumCachedKeys, repairs);
        this.reads = new LimitReads(jedis, answers);
        if (defaults instanceof MapLimitProvider keys) {
            // Keys of configuration assigned a plan take its limits as changed in Redis, as keys stored here do.
            keys.planChangesFrom(answers::changedPlan);
        }
        long every = b.refreshInterval.toMillis();
        this.refresher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "ratelimit-limits-refresh");
            t.setDaemon(true);
            return t;
        });
        refresher.scheduleWithFixedDelay(answers::refresh, 0, every, TimeUnit.MILLISECONDS);
    }

    /**
     * @return a builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Gives a key of a rule limits of its own.
     *
     * @param rule the rule
     * @param key the key, as the rule counts by it (a longer one than 128 characters is hashed, as the limiter does)
     * @param limits the limits, 1 to {@value Rule#MAX_LIMITS}, that the rule can use
     * @param actor who makes the change (for the log and the entry), or {@code null} when not known
     * @return the entry as written
     * @throws InvalidRateLimitConfigurationException when the rule cannot use the limits (a burst on a sliding
     *         window, two limits on one window, more than a log keeps, more than a rule may have), naming them
     * @throws IllegalArgumentException when an argument is missing or empty, or the key is one the rule never counts
     *         by (a {@code ~sha256:} key that is no hash, {@code ~missing} for a rule that keeps no shared bucket)
     * @throws RateLimitStoreException when Redis fails
     */
    public Entry setLimits(Rule rule, String key, List<Limit> limits, String actor) {
        String k = key(rule, key);
        if (limits == null || limits.isEmpty()) {
            throw new IllegalArgumentException("limits for rule '" + rule.name() + "' key " + LogText.quote(k) + " are "
                    + "empty; give at least one, e.g. 100/1m, or remove the entry to go back to the rule's limits");
        }
        LimitEntries.usable(
                rule, limits, "limits " + limits + " for key " + LogText.quote(k) + " of rule '" + rule.name() + "'");
        String by = by(actor);
        long now = clock.millis();
        change("set", rule.name(), utf8(k), LimitEntries.limits(limits, by, now), by);
        AUDIT.log(
                Level.INFO,
                () -> "Limits of rule '" + rule.name() + "' key " + LogText.quote(k) + " set to "
                        + String.join(",", limits.stream().map(Limit::toString).toList()) + " by " + who(actor));
        return LimitEntries.written(rule.name(), k, limits, null, by, now);
    }

    /**
     * Puts a key of a rule on a plan.
     *
     * @param rule the rule
     * @param key the key, as the rule counts by it
     * @param plan a plan this store was built with, whose limits the rule can use
     * @param actor who makes the change, or {@code null} when not known
     * @return the entry as written
     * @throws InvalidRateLimitConfigurationException when the rule cannot use the plan's limits
     * @throws InvalidRateLimitConfigurationException when the name is not a plan's name ({@code PlanNames}: the
     *         same rule as {@link Builder#plan} and configuration)
     * @throws IllegalArgumentException when the plan is not known, an argument is missing, or the key is one the
     *         rule never counts by
     * @throws RateLimitStoreException when Redis fails
     */
    public Entry assignPlan(Rule rule, String key, String plan, String actor) {
        String k = key(rule, key);
        PlanNames.check(null, plan);
        if (!plans.containsKey(plan)) {
            throw new IllegalArgumentException(PlanNames.unknown(plan, plans.keySet()));
        }
        List<Limit> limits = Objects.requireNonNull(answers.plans().get(plan), plan);
        LimitEntries.usable(
                rule,
                limits,
                "plan '" + plan + "' " + limits + " for key " + LogText.quote(k) + " of rule '" + rule.name() + "'");
        String by = by(actor);
        long now = clock.millis();
        change("set", rule.name(), utf8(k), LimitEntries.plan(plan, by, now), by);
        AUDIT.log(
                Level.INFO,
                () -> "Rule '" + rule.name() + "' key " + LogText.quote(k) + " put on plan '" + plan + "' by "
                        + who(actor));
        return LimitEntries.written(rule.name(), k, limits, plan, by, now);
    }

    /**
     * Changes a rule's own limits or mode on every instance: each instance's limiter takes the change within the
     * refresh interval (this one at once), for every key without limits of its own.
     *
     * @param rule the rule as configured
     * @param limits its limits from now on, 1 to {@value Rule#MAX_LIMITS}, or {@code null} to keep its configured ones
     * @param mode its mode from now on ({@link Mode#HARD} or {@link Mode#SHADOW} for a rule that is one of them), or
     *        {@code null} to keep its configured one
     * @param actor who makes the change (for the log and the entry), or {@code null} when not known
     * @return the rule as it decides from now on
     * @throws InvalidRateLimitConfigurationException when the rule cannot use the limits, as at start-up
     * @throws IllegalArgumentException when nothing is changed, or the change is not one a rule can take at run time
     *         (a mode into or out of SOFT, limits of a concurrency rule)
     * @throws RateLimitStoreException when Redis fails
     */
    public Rule changeRule(Rule rule, @Nullable List<Limit> limits, @Nullable Mode mode, String actor) {
        Rule changed = RuleChanges.changed(Objects.requireNonNull(rule, "rule"), limits, mode);
        String by = by(actor);
        try {
            answers.changeRule("set", rule.name(), LimitEntries.rule(limits, mode, by, clock.millis()), by);
        } catch (JedisException e) {
            throw failed(e);
        }
        AUDIT.log(
                Level.INFO,
                () -> "Rule '" + rule.name() + "' changed to limits "
                        + String.join(
                                ",",
                                changed.limits().stream().map(Limit::toString).toList()) + " mode "
                        + changed.mode() + " by " + who(actor));
        return changed;
    }

    /**
     * Takes a rule back to its configured limits and mode on every instance.
     *
     * @param rule the rule's name
     * @param actor who makes the change, or {@code null} when not known
     * @return whether the rule was changed
     * @throws RateLimitStoreException when Redis fails
     */
    public boolean restoreRule(String rule, String actor) {
        key(rule, "");
        boolean removed;
        try {
            removed = answers.changeRule("del", rule, "", by(actor));
        } catch (JedisException e) {
            throw failed(e);
        }
        if (removed) {
            AUDIT.log(
                    Level.INFO,
                    () -> "Rule " + LogText.quote(rule) + " back to its configured limits and mode by " + who(actor));
        }
        return removed;
    }

    /** @return the plans this store was built with, with their configured limits, by name */
    public Map<String, List<Limit>> plans() {
        return plans;
    }

    /**
     * Changes a plan's limits on every instance: each instance takes the change within the refresh interval (this one
     * at once), for keys assigned the plan (here or in the defaults) and calls naming it.
     *
     * @param plan one of {@link #plans()}
     * @param limits its limits from now on, 1 to {@value Rule#MAX_LIMITS}
     * @param actor who makes the change (for the log and the entry), or {@code null} when not known
     * @throws IllegalArgumentException when the plan is not known or no limit is given
     * @throws io.github.ratelimit.InvalidRateLimitConfigurationException when no rule could use the limits (two on
     *         one window), which every instance would read as garbage
     * @throws RateLimitStoreException when Redis fails
     */
    public void changePlan(String plan, List<Limit> limits, String actor) {
        knownPlan(plan);
        if (limits == null || limits.isEmpty() || limits.size() > Rule.MAX_LIMITS) {
            throw new IllegalArgumentException("limits of plan '" + plan + "' must be 1 to " + Rule.MAX_LIMITS
                    + ", e.g. 100/1m; delete the change to go back to the configured ones");
        }
        LimitEntries.usablePlan(plan, limits); // what no rule can use, every instance would read as garbage
        String by = by(actor);
        try {
            answers.changePlan("set", plan, LimitEntries.plan(limits, by, clock.millis()), by);
        } catch (JedisException e) {
            throw failed(e);
        }
        AUDIT.log(
                Level.INFO,
                () -> "Plan '" + plan + "' changed to limits "
                        + String.join(",", limits.stream().map(Limit::toString).toList()) + " by " + who(actor));
    }

    /**
     * Takes a plan back to its configured limits on every instance.
     *
     * @param plan one of {@link #plans()}
     * @param actor who makes the change, or {@code null} when not known
     * @return whether the plan was changed
     * @throws IllegalArgumentException when the plan is not known
     * @throws RateLimitStoreException when Redis fails
     */
    public boolean restorePlan(String plan, String actor) {
        knownPlan(plan);
        boolean removed;
        try {
            removed = answers.changePlan("del", plan, "", by(actor));
        } catch (JedisException e) {
            throw failed(e);
        }
        if (removed) {
            AUDIT.log(Level.INFO, () -> "Plan '" + plan + "' back to its configured limits by " + who(actor));
        }
        return removed;
    }

    private void knownPlan(String plan) {
        PlanNames.check(null, plan);
        if (!plans.containsKey(plan)) {
            throw new IllegalArgumentException(PlanNames.unknown(plan, plans.keySet()));
        }
    }

    /** @return the plan's stored change as this instance applies it, or {@code null} for none */
    LimitEntries.@Nullable RuleEntry planEntry(String plan) {
        return answers.planEntry(plan);
    }

    @Override
    public @Nullable List<Limit> changedPlan(String plan) {
        return answers.changedPlan(plan);
    }

    /** @return the rule's stored change as this instance applies it, or {@code null} for none */
    LimitEntries.@Nullable RuleEntry ruleEntry(String rule) {
        return answers.ruleEntry(rule);
    }

    @Override
    public @Nullable Rule changedRule(Rule rule) {
        return answers.changedRule(rule);
    }

    /**
     * Takes a key back to its rule's limits.
     *
     * @param rule the rule's name
     * @param key the key
     * @param actor who makes the change, or {@code null} when not known
     * @return whether the key had an entry
     * @throws RateLimitStoreException when Redis fails
     */
    public boolean remove(String rule, String key, String actor) {
        return removeField(rule, utf8(key(rule, key)), actor);
    }

    private boolean removeField(String rule, byte[] field, String actor) {
        boolean removed = change("del", rule, field, "", by(actor));
        if (removed) {
            AUDIT.log(
                    Level.INFO,
                    () -> "Rule " + LogText.quote(rule) + " key " + LogText.quote(LimitAdmin.shown(field))
                            + " back to the rule's limits by " + who(actor));
        }
        return removed;
    }

    /**
     * @param rule the rule's name
     * @param key the key
     * @return the key's entry, read from Redis now; an entry that cannot give the key limits has a
     *         {@linkplain Entry#problem() problem}
     * @throws RateLimitStoreException when Redis fails
     */
    public Optional<Entry> get(String rule, String key) {
        return reads.get(rule, utf8(key(rule, key)));
    }

    /**
     * One page of a rule's entries ({@code HSCAN}: an entry present for the whole listing appears at least once).
     *
     * @param rule the rule's name
     * @param cursor {@code null} for the first page, else the previous page's {@link Page#next}
     * @param count about how many entries per page, 1 to 1,000
     * @return the page; entries that cannot give their key limits have a {@linkplain Entry#problem() problem}
     * @throws IllegalArgumentException when the count is out of range or the cursor is not one (an unsigned 64-bit
     *         number, as Redis gives them)
     * @throws RateLimitStoreException when Redis fails
     */
    public Page list(String rule, String cursor, int count) {
        key(rule, "");
        return reads.list(rule, cursor, count);
    }

    /** @return the entry under the field exactly as stored, any bytes (a long key not hashed, written elsewhere) */
    Optional<Entry> getStored(String rule, byte[] field) {
        key(rule, "");
        return reads.get(rule, field);
    }

    /** @return whether the field exactly as stored, any bytes, had an entry, which is now removed */
    boolean removeStored(String rule, byte[] field, String actor) {
        key(rule, "");
        return removeField(rule, field, actor);
    }

    /**
     * @return how many keys of another type this instance replaced (a rule's hash or the stream of changes), since
     *         it was built; the metric {@code ratelimit.store.repairs}
     */
    public long repairs() {
        return repairs.get();
    }

    @Override
    public @Nullable List<Limit> limitsFor(Rule rule, String key) {
        List<Limit> own = answers.limitsFor(rule, key);
        return own != null || defaults == null ? own : defaults.limitsFor(rule, key);
    }

    @Override
    public void onChange(Changes changes) {
        answers.onChange(changes);
    }

    /** Reads the changes made elsewhere now, as the refresh thread does every interval (for tests). */
    void refresh() {
        answers.refresh();
    }

    /** @return refreshes run to their end, by the refresh thread or by {@link #refresh()} (for tests) */
    long refreshes() {
        return answers.refreshes();
    }

    private boolean change(String op, String rule, byte[] field, String value, String by) {
        try {
            return answers.change(op, rule, field, value, by);
        } catch (JedisException e) {
            throw failed(e);
        }
    }

    static RateLimitStoreException failed(JedisException e) {
        return new RateLimitStoreException("Redis command failed: " + e.getMessage(), e);
    }

    /** Checks the key as {@link #key(String, String)} does, and that the rule may count by it. */
    private static String key(Rule rule, String key) {
        String k = key(Objects.requireNonNull(rule, "rule").name(), key);
        LimitAdmin.checkCounted(rule, k);
        return k;
    }

    /** Checks the rule's name and the key; @return the key as the limiter stores it (hashed beyond 128 characters) */
    private static String key(String rule, String key) {
        if (rule == null || rule.isBlank()) {
            throw new IllegalArgumentException("rule name is missing");
        }
        if (key == null) {
            throw new IllegalArgumentException("key is missing for rule " + LogText.quote(rule));
        }
        KeyExpressions.checkNoLoneSurrogate(key, "rule " + LogText.quote(rule));
        return KeyExpressions.bounded(key);
    }

    private static String by(String actor) {
        return actor == null || actor.isBlank() ? "unknown" : LimitEntries.actor(actor);
    }

    private static String who(String actor) {
        return actor == null || actor.isBlank() ? "an unknown caller" : LogText.quote(actor);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        refresher.shutdownNow();
    }

    @Override
    public String toString() {
        return "RedisLimitProvider[prefix=" + prefix + ", plans=" + plans.keySet() + "]";
    }

    /** Builds a {@link RedisLimitProvider}. Not thread-safe. */
    public static final class Builder {

        private @Nullable UnifiedJedis client;
        private String keyPrefix = "ratelimit";
        private final Map<String, List<Limit>> plans = new LinkedHashMap<>();
        private Duration refreshInterval = Duration.ofSeconds(1);
        private long maximumCachedKeys = 100_000;
        private Clock clock = Clock.systemUTC();
        private @Nullable LimitProvider defaults;

        private Builder() {}

        /**
         * @param defaults answers for keys without an entry of their own in Redis (one from configuration or
         *        {@code LimitProvider.builder()}, for example); without it, such keys have their rule's limits
         * @return this builder
         */
        public Builder defaults(LimitProvider defaults) {
            this.defaults = Objects.requireNonNull(defaults, "defaults");
            return this;
        }

        /**
         * @param client the Redis client (the bucket store's, or another); this store does not close it
         * @return this builder
         */
        public Builder client(UnifiedJedis client) {
            this.client = Objects.requireNonNull(client, "client");
            return this;
        }

        /**
         * @param prefix the first part of every key (default {@code ratelimit}), without braces
         * @return this builder
         */
        public Builder keyPrefix(String prefix) {
            if (prefix == null || prefix.isEmpty() || prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
                throw new InvalidRateLimitConfigurationException("limit store key prefix '" + prefix + "' is empty "
                        + "or contains a brace. Use text without braces, e.g. 'ratelimit'.");
            }
            this.keyPrefix = prefix;
            return this;
        }

        /**
         * @param name a plan keys can be put on
         * @param limits its limits, 1 to {@value Rule#MAX_LIMITS}
         * @return this builder
         * @throws InvalidRateLimitConfigurationException when the name is not a plan's name (the one rule of
         *         configuration and {@link #assignPlan}), the limits are missing, or there are more limits than a rule
         *         may have
         */
        public Builder plan(String name, List<Limit> limits) {
            PlanNames.check("limit store plan", name);
            if (limits == null || limits.isEmpty()) {
                throw new InvalidRateLimitConfigurationException("limit store plan '" + name + "' needs at least one "
                        + "limit, e.g. plan(\"gold\", List.of(Limit.parse(\"1000/1m\"))).");
            }
            if (limits.size() > Rule.MAX_LIMITS) {
                throw new InvalidRateLimitConfigurationException(
                        "limit store plan '" + name + "'",
                        limits.toString(),
                        limits.size() + " limits, more than the " + Rule.MAX_LIMITS + " a rule may have, so no rule "
                                + "could use the plan",
                        "Keep the windows that matter, e.g. one per second, minute, hour and day.");
            }
            plans.put(name, List.copyOf(limits));
            return this;
        }

        /**
         * @param interval how often the changes made elsewhere are read (default 1 s): the bound on how long
         *        another instance keeps a key's old limits
         * @return this builder
         */
        public Builder refreshInterval(Duration interval) {
            if (interval == null || interval.compareTo(Duration.ofMillis(10)) < 0) {
                throw new InvalidRateLimitConfigurationException(
                        "limit store refresh interval " + interval + " is below 10ms. Use e.g. 1s.");
            }
            this.refreshInterval = interval;
            return this;
        }

        /**
         * @param maximum answers kept in this instance (default 100,000)
         * @return this builder
         */
        public Builder maximumCachedKeys(long maximum) {
            if (maximum < 1) {
                throw new InvalidRateLimitConfigurationException(
                        "limit store maximum cached keys " + maximum + " must be at least 1.");
            }
            this.maximumCachedKeys = maximum;
            return this;
        }

        /**
         * For tests: the clock that stamps entries.
         *
         * @param clock the clock
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * @return the store, whose refresh thread runs from now on
         * @throws InvalidRateLimitConfigurationException when no client is given
         */
        public RedisLimitProvider build() {
            if (client == null) {
                throw new InvalidRateLimitConfigurationException("limit store: no Redis client given. Pass the "
                        + "one the bucket store uses, or another, with client(...).");
            }
            return new RedisLimitProvider(this);
        }
    }
}
