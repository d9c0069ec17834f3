package io.github.ratelimit.internal;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Limit;
import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.Rule;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The {@link LimitProvider} from fixed maps that {@link LimitProvider#builder()} builds, and the settings of both
 * entry points ({@code ratelimit.plans.*}, {@code ratelimit.keys[i]}) build with messages that name the property at
 * fault ({@link Builder#source}, {@link Builder#entry}). Immutable and thread-safe.
 */
public final class MapLimitProvider implements LimitProvider {

    /**
     * One key's limits, for the named rules or (with none named) for every rule with the key's expression.
     *
     * @param rules the rules the limits are for; empty for every rule
     * @param limits the limits (the plan's as configured, for a key assigned a plan)
     * @param plan the plan the key is assigned, or {@code null} for limits of its own
     * @param source where the entry comes from, for messages
     */
    private record Entry(
            Set<String> rules, List<Limit> limits, @Nullable String plan, Source source) {}

    /**
     * Where values come from, for messages: one place for all of them ({@link Builder#source}), or an entry of
     * properties whose parts each have a property of their own ({@link Builder#entry}).
     *
     * @param where the place, or the entry's prefix
     * @param entry whether {@code where} is an entry's prefix
     */
    private record Source(String where, boolean entry) {

        /** @return where a part comes from: {@code key}, {@code plan}, {@code limits} or {@code rules} */
        String of(String part) {
            return entry ? where + "." + part : where;
        }

        /** @return where {@code other} is, without the part it shares with this one (the file both come from) */
        String relative(Source other) {
            int colon = where.lastIndexOf(": ");
            return colon >= 0 && other.where.startsWith(where.substring(0, colon + 2))
                    ? other.where.substring(colon + 2)
                    : other.where;
        }

        @Override
        public String toString() {
            return where;
        }
    }

    private final Map<String, List<Entry>> byKey;
    /**
     * The entries whose key is longer than a key the limiter counts by ({@value KeyExpressions#MAX_KEY_LENGTH}
     * characters), under {@code <key expression>:} and the hash the limiter counts such a key by: an entry written with
     * the key in full applies as one written with its hash. Every split of the entry's text at a colon is registered
     * (the key expression may hold colons itself: {@code header:X-Api-Key}); splits no rule's expression matches are
     * never asked for.
     */
    private final Map<String, List<Entry>> byHash;

    private final Map<String, List<Limit>> plans;

    /** The plans changed at run time in this instance ({@link #changePlan}), by name. */
    private final Map<String, List<Limit>> changedPlans = new ConcurrentHashMap<>();
    /**
     * Where plans changed at run time are read, when not here: a limit store that keeps them for every instance
     * ({@link #planChangesFrom}), or {@code null}.
     */
    private volatile @Nullable Function<String, @Nullable List<Limit>> planChanges;

    private final List<Changes> listeners = new CopyOnWriteArrayList<>();

    private MapLimitProvider(Map<String, List<Entry>> byKey, Map<String, List<Limit>> plans) {
        Map<String, List<Entry>> copy = new HashMap<>();
        Map<String, List<Entry>> hashed = new HashMap<>();
        byKey.forEach((k, v) -> {
            copy.put(k, List.copyOf(v));
            for (int colon = k.indexOf(':'); colon > 0; colon = k.indexOf(':', colon + 1)) {
                String value = k.substring(colon + 1);
                if (value.length() > KeyExpressions.MAX_KEY_LENGTH) {
                    hashed.putIfAbsent(k.substring(0, colon + 1) + KeyExpressions.bounded(value), List.copyOf(v));
                }
            }
        });
        this.byKey = Map.copyOf(copy);
        this.byHash = Map.copyOf(hashed);
        this.plans = Map.copyOf(plans);
    }

    /**
     * @return the named plans this provider was built with
     */
    public Map<String, List<Limit>> plans() {
        return plans;
    }

    /**
     * The one place a plan's limits are read, for keys assigned it here and for the limiters built with this provider:
     * the plan's limits as changed at run time, in the limit store that keeps them ({@link #planChangesFrom}), else in
     * this instance ({@link #changePlan}).
     *
     * @param plan a plan's name
     * @return its limits from now on, or {@code null} when they are not changed
     */
    @Override
    public @Nullable List<Limit> changedPlan(String plan) {
        Function<String, @Nullable List<Limit>> from = planChanges;
        return from != null ? from.apply(plan) : changedPlans.get(plan);
    }

    /**
     * Changes a plan's limits in this instance, for keys assigned it and for the limiters built with this provider, or
     * takes it back to its configured limits; tells those limiters.
     *
     * @param plan one of {@link #plans()}
     * @param limits its limits from now on, or {@code null} for its configured ones
     * @return whether the plan was changed before
     * @throws IllegalArgumentException when the plan is not known
     */
    public boolean changePlan(String plan, @Nullable List<Limit> limits) {
        if (!plans.containsKey(plan)) {
            throw new IllegalArgumentException(PlanNames.unknown(plan, plans.keySet()));
        }
        List<Limit> before = limits == null || limits.equals(plans.get(plan))
                ? changedPlans.remove(plan)
                : changedPlans.put(plan, List.copyOf(limits));
        planChanged(plan);
        return before != null;
    }

    /**
     * Reads plans changed at run time from a limit store from now on, which reports them with {@link #planChanged}.
     *
     * @param changes the plan's limits as changed, or {@code null} when they are not
     */
    public void planChangesFrom(Function<String, @Nullable List<Limit>> changes) {
        this.planChanges = Objects.requireNonNull(changes, "changes");
    }

    /**
     * Tells the limiters built with this provider that a plan's limits may have changed.
     *
     * @param plan the plan's name
     */
    public void planChanged(String plan) {
        for (Changes l : listeners) {
            l.planChanged(plan);
        }
    }

    @Override
    public void onChange(Changes changes) {
        listeners.add(Objects.requireNonNull(changes, "changes"));
    }

    /**
     * Checks that every rule a key is assigned the plan for can use the limits, as start-up checks a plan's limits.
     *
     * @param plan the plan's name
     * @param limits the plan's limits from now on
     * @param rules the rules known
     * @throws InvalidRateLimitConfigurationException naming the key, the rule and why
     */
    public void checkPlan(String plan, List<Limit> limits, Collection<Rule> rules) {
        byKey.forEach((key, entries) -> {
            for (Entry e : entries) {
                if (!plan.equals(e.plan())) {
                    continue;
                }
                for (Rule rule : rules) {
                    boolean counts = rule.concurrency() == 0
                            && (key.startsWith(rule.key() + ":") || alternativeOf(rule, key))
                            && (e.rules().isEmpty() || e.rules().contains(rule.name()));
                    if (counts) {
                        try {
                            rule.withLimits(limits);
                        } catch (InvalidRateLimitConfigurationException x) {
                            throw new InvalidRateLimitConfigurationException(
                                    e.source().of("plan"),
                                    plan,
                                    "key '" + key + "' is assigned plan '" + plan + "', whose limits " + limits
                                            + " rule '" + rule.name() + "' cannot use: " + x.getMessage(),
                                    "Give the plan limits every rule of its keys can use.");
                        }
                    }
                }
            }
        });
    }

    /**
     * @return a builder
     */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public List<Limit> limitsFor(Rule rule, String key) {
        String entryKey = rule.key() + ":" + key;
        List<Limit> exact = limitsOf(byKey.get(entryKey), rule);
        if (exact == null && key.startsWith(KeyExpressions.HASH_PREFIX)) {
            exact = limitsOf(byHash.get(entryKey), rule);
        }
        return exact != null ? exact : limitsOf(byAlternative(rule, key), rule);
    }

    /** The limits of the entry for the rule (one naming it wins over one for every rule), or {@code null}. */
    private List<Limit> limitsOf(List<Entry> entries, Rule rule) {
        if (entries == null) {
            return null;
        }
        Entry forAll = null;
        for (Entry e : entries) {
            if (e.rules().isEmpty()) {
                forAll = e;
            } else if (e.rules().contains(rule.name())) {
                return limitsOf(e, rule);
            }
        }
        return forAll == null ? null : limitsOf(forAll, rule);
    }

    /**
     * @return the entry's limits: for a key assigned a plan, the plan's as changed at run time, if it is and the rule
     *         can use them
     */
    private List<Limit> limitsOf(Entry e, Rule rule) {
        if (e.plan() == null) {
            return e.limits();
        }
        List<Limit> changed = changedPlan(e.plan());
        return changed != null && usable(rule, changed) ? changed : e.limits();
    }

    /** @return whether the rule can use the limits; when not, the plan's configured limits serve the key */
    private static boolean usable(Rule rule, List<Limit> limits) {
        try {
            rule.withLimits(limits);
            return true;
        } catch (InvalidRateLimitConfigurationException x) {
            return false;
        }
    }

    /**
     * A rule keyed by alternatives ({@code user|ip}) counts by the alternative that resolved, tagged
     * ({@code user=alice}): the entries of that alternative's own key ({@code user:alice}) apply.
     */
    private List<Entry> byAlternative(Rule rule, String key) {
        if (rule.key().indexOf('|') < 0) {
            return null;
        }
        int tag = key.indexOf('=');
        if (tag <= 0) {
            return null;
        }
        String alternative = key.substring(0, tag);
        for (String a : rule.key().split("\\|")) {
            if (a.trim().equals(alternative)) {
                return byKey.get(alternative + ":" + key.substring(tag + 1));
            }
        }
        return null;
    }

    /**
     * @return the number of keys with limits of their own
     */
    public int size() {
        return byKey.size();
    }

    /**
     * Checks, once every declared rule is known (at start-up), that each entry naming rules names rules that exist
     * and are keyed by the entry's key expression; otherwise the entry could never apply.
     *
     * @param rules every rule of the limiter
     * @throws InvalidRateLimitConfigurationException naming the entry and the rule
     */
    public void checkRules(Collection<Rule> rules) {
        Map<String, Rule> byName = new HashMap<>();
        rules.forEach(r -> byName.put(r.name(), r));
        byKey.forEach((key, entries) -> {
            for (Entry e : entries) {
                for (String name : new TreeSet<>(e.rules())) {
                    Rule rule = byName.get(name);
                    if (rule == null) {
                        throw new InvalidRateLimitConfigurationException(
                                e.source().of("rules"),
                                name,
                                "key '" + key + "' names rule '" + name
                                        + "', which does not exist, so the limits would never apply",
                                "Name one of the rules " + new TreeSet<>(byName.keySet()) + ".");
                    }
                    if (rule.concurrency() > 0) {
                        throw new InvalidRateLimitConfigurationException(
                                e.source().of("rules"),
                                name,
                                "key '" + key
                                        + "' names rule '" + name + "', a rule of calls in flight (concurrency "
                                        + rule.concurrency() + "), which has no windows for limits to replace",
                                "Name rules of windows only; a key's calls in flight follow the rule's concurrency.");
                    }
                    if (!key.startsWith(rule.key() + ":") && !alternativeOf(rule, key)) {
                        throw new InvalidRateLimitConfigurationException(
                                e.source().of("rules"),
                                name,
                                "key '" + key
                                        + "' names rule '" + name + "', which counts by '" + rule.key()
                                        + "', so the limits "
                                        + "would never apply",
                                "Write the key as '" + rule.key() + ":<value>', or name a rule "
                                        + "that counts by the key's expression.");
                    }
                }
            }
        });
    }

    /**
     * The keys of entries for every rule that no rule given here counts by (a typo in the key expression, such as
     * {@code usr:bob}), for a warning: a rule compiled later, in code, may still count by them.
     *
     * @param rules the rules declared so far
     * @return each such key with where it is written, e.g. {@code ratelimit.keys[0].key: usr:bob}
     */
    public List<String> keysNoRuleCounts(Collection<Rule> rules) {
        List<String> unused = new ArrayList<>();
        byKey.forEach((key, entries) -> {
            // A concurrency rule has no windows: limits for its keys apply to nothing.
            if (rules.stream()
                    .noneMatch(r -> r.concurrency() == 0 && (key.startsWith(r.key() + ":") || alternativeOf(r, key)))) {
                unused.add(entries.get(0).source().of("key") + ": " + key);
            }
        });
        unused.sort(null);
        return unused;
    }

    private static boolean alternativeOf(Rule rule, String key) {
        for (String a : rule.key().split("\\|")) {
            if (key.startsWith(a.trim() + ":")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Builds a {@link MapLimitProvider}; validates as values are added. Not thread-safe.
     */
    public static final class Builder {

        private final Map<String, List<Limit>> plans = new HashMap<>();
        private final Map<String, List<Entry>> byKey = new HashMap<>();
        private Source source = new Source("LimitProvider.builder()", false);

        private Builder() {}

        /**
         * @param source where the values come from, the prefix of messages (e.g. {@code ratelimit.keys})
         * @return this builder
         */
        public Builder source(String source) {
            this.source = new Source(Objects.requireNonNull(source, "source"), false);
            return this;
        }

        /**
         * Says that the values added next are one entry of properties, each part under a property of its own, so
         * a message names the property at fault: {@code <prefix>.key} for the key, {@code <prefix>.plan} or
         * {@code <prefix>.limits} for its limits, {@code <prefix>.rules} for the rules it names.
         *
         * @param prefix the entry's prefix, e.g. {@code ratelimit.keys[0]}
         * @return this builder
         */
        public Builder entry(String prefix) {
            this.source = new Source(Objects.requireNonNull(prefix, "prefix"), true);
            return this;
        }

        /**
         * @param name the plan's name
         * @param limits its limits in text form
         * @return this builder
         * @throws InvalidRateLimitConfigurationException when the name is not a plan's name (1 to 64 printable ASCII
         *         characters without spaces, quotes, commas, braces or backslashes), a limit is invalid or none is given
         */
        public Builder plan(String name, String... limits) {
            PlanNames.check(source.toString(), name);
            plans.put(name, parse(source + ": plan '" + name + "'", limits));
            return this;
        }

        /**
         * Assigns a plan to a key, for every rule with the key's expression.
         *
         * @param key {@code <key expression>:<key>}, e.g. {@code user:alice}
         * @param plan a plan added before with {@link #plan}
         * @return this builder
         * @throws InvalidRateLimitConfigurationException when the plan is unknown, or the key has limits already
         */
        public Builder assign(String key, String plan) {
            return assign(key, plan, Set.of());
        }

        /**
         * Assigns a plan to a key, for the named rules only.
         *
         * @param key {@code <key expression>:<key>}, e.g. {@code user:alice}
         * @param plan a plan added before with {@link #plan}
         * @param rules the names of the rules it is for; empty for every rule with the key's expression
         * @return this builder
         * @throws InvalidRateLimitConfigurationException when the plan is unknown, or the key has limits for one of
         *         the rules already
         */
        public Builder assign(String key, String plan, Collection<String> rules) {
            checkKey(key);
            List<Limit> limits = plans.get(plan);
            if (limits == null) {
                throw new InvalidRateLimitConfigurationException(
                        source.of("plan"),
                        plan,
                        "key '" + key + "' is " + "assigned a plan that is not defined: "
                                + PlanNames.unknown(plan, plans.keySet()),
                        "Define the plan first.");
            }
            return add(key, rules, limits, plan);
        }

        /**
         * Gives a key limits of its own, for every rule with the key's expression.
         *
         * @param key {@code <key expression>:<key>}, e.g. {@code user:241531}
         * @param limits the key's own limits in text form
         * @return this builder
         * @throws InvalidRateLimitConfigurationException when a limit is invalid or none is given, or the key has
         *         limits already
         */
        public Builder limits(String key, String... limits) {
            return limits(key, Set.of(), limits);
        }

        /**
         * Gives a key limits of its own, for the named rules only.
         *
         * @param key {@code <key expression>:<key>}, e.g. {@code user:241531}
         * @param rules the names of the rules they are for; empty for every rule with the key's expression
         * @param limits the key's own limits in text form
         * @return this builder
         * @throws InvalidRateLimitConfigurationException when a limit is invalid or none is given, or the key has
         *         limits for one of the rules already
         */
        public Builder limits(String key, Collection<String> rules, String... limits) {
            checkKey(key);
            return add(key, rules, parse(source.of("limits") + ": key '" + key + "'", limits), null);
        }

        private Builder add(String key, Collection<String> rules, List<Limit> limits, @Nullable String plan) {
            Set<String> names = new LinkedHashSet<>();
            for (String r : Objects.requireNonNull(rules, "rules")) {
                String name = r == null ? "" : r.trim();
                if (name.isEmpty()) {
                    throw new InvalidRateLimitConfigurationException(
                            source.of("rules"),
                            String.valueOf(r),
                            "key '" + key + "' names a blank rule",
                            "Name each rule, e.g. 'api'.");
                }
                names.add(name);
            }
            List<Entry> entries = byKey.computeIfAbsent(key, k -> new ArrayList<>());
            for (Entry e : entries) {
                Set<String> overlap = new TreeSet<>(e.rules());
                overlap.retainAll(names);
                if (e.rules().isEmpty() && names.isEmpty() || !overlap.isEmpty()) {
                    throw new InvalidRateLimitConfigurationException(
                            source.toString(),
                            key,
                            "key '" + key
                                    + "' has limits "
                                    + (overlap.isEmpty() ? "for every rule" : "for rule(s) " + overlap)
                                    + " already, from " + source.relative(e.source()),
                            "Give each key one entry per rule.");
                }
            }
            entries.add(new Entry(Set.copyOf(names), limits, plan, source));
            return this;
        }

        /**
         * @return the provider
         */
        public MapLimitProvider build() {
            return new MapLimitProvider(byKey, plans);
        }

        private void checkKey(String key) {
            if (key == null || key.indexOf(':') <= 0 || key.endsWith(":")) {
                throw new InvalidRateLimitConfigurationException(source.of("key") + ": key '" + key
                        + "' is not of the form '<key expression>:<key>'. Write it like 'user:241531' or "
                        + "'header:X-Api-Key:k-42'.");
            }
        }

        private static List<Limit> parse(String where, String... texts) {
            if (texts == null || texts.length == 0) {
                throw new InvalidRateLimitConfigurationException(
                        where + ": no limit is given. Give at least one, " + "e.g. '5/1s'.");
            }
            List<Limit> limits = new ArrayList<>(texts.length);
            for (int i = 0; i < texts.length; i++) {
                try {
                    limits.add(Limit.parse(texts[i]));
                } catch (InvalidRateLimitConfigurationException e) {
                    throw new InvalidRateLimitConfigurationException(where + ": limits[" + i + "]: " + e.getMessage());
                }
            }
            return List.copyOf(limits);
        }
    }
}
