package io.github.ratelimit;

import io.github.ratelimit.internal.MapLimitProvider;
import java.util.Collection;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Per-key limits that replace a rule's own: a plan per customer, an override for one user (the design's
 * "configuration store": {@code user:241531} → {@code 5/1s}).
 *
 * <p>A {@link RateLimiter} asks the provider when a key is first seen and again after its cache entry expires
 * ({@link RateLimiter.Builder#limitProvider(LimitProvider, java.time.Duration)}); a changed answer is applied
 * to the key's existing bucket, not only to new keys, by Bucket4j's additive configuration replacement: a
 * window whose capacity grows gains the difference (tokens already spent stay spent), and one whose capacity
 * shrinks keeps at most the new capacity. Implementations must be thread-safe; they may block briefly (a
 * database read), since answers are cached. An exception, or limits that cannot serve the rule (a capacity
 * below the rule's cost), is logged and the rule's own limits apply.
 */
@FunctionalInterface
public interface LimitProvider {

    /**
     * @param rule the rule deciding the call
     * @param key the resolved key, as the rule counts by it (for a {@code user} rule, the user name)
     * @return the limits for this rule and key, or {@code null} or an empty list for the rule's own
     */
    @Nullable
    List<Limit> limitsFor(Rule rule, String key);

    /**
     * Called once by each limiter built with this provider, with where to report changed answers: a provider whose
     * answers change at run time (a shared configuration store) reports them, and the limiter asks again at its next
     * call for that key instead of when its cached answer expires. A provider that never changes, or cannot tell,
     * does nothing (the default), and the limiter's cache time-to-live bounds how stale an answer gets.
     *
     * @param changes where to report; thread-safe, and cheap to call
     */
    default void onChange(Changes changes) {}

    /**
     * The rule's limits and mode as changed at run time by an operator, if they are: asked when a limiter registers
     * the rule and when the provider reports the rule changed ({@link Changes#ruleChanged}), never per call. Must not
     * block long (the limiter asks on a call's thread when a rule is first used). A change that cannot serve is
     * ignored with a warning (the rule as built decides).
     *
     * @param rule the rule as built
     * @return the rule with its changed limits or mode ({@link Rule#withLimits}), or {@code null} when it is not
     *         changed (the default)
     */
    default @Nullable Rule changedRule(Rule rule) {
        return null;
    }

    /**
     * A plan's limits as changed at run time by an operator, if they are: asked when a limiter registers a rule that
     * plans from the call apply to, and when the provider reports the plan changed ({@link Changes#planChanged}),
     * never per call. A provider whose answers name plans (a key assigned a plan) answers with the changed limits
     * itself; this tells the limiter the plans calls name ({@code ratelimit.plan-from}). Must not block long.
     *
     * @param plan the plan's name
     * @return its limits from now on, or {@code null} when it is not changed (the default): the limits it was
     *         configured with decide
     */
    default @Nullable List<Limit> changedPlan(String plan) {
        return null;
    }

    /** Where a {@link LimitProvider} reports changed answers to a limiter. */
    interface Changes {

        /**
         * A plan's limits may have changed ({@link LimitProvider#changedPlan}): the limiter asks again, and forgets
         * every key's answer (any key may be on the plan). The default takes it as every answer changing.
         *
         * @param plan the plan's name
         */
        default void planChanged(String plan) {
            allChanged();
        }

        /**
         * The rule's own limits or mode may have changed ({@link LimitProvider#changedRule}): the limiter asks again.
         * The default takes it as every answer changing.
         *
         * @param rule the rule's name
         */
        default void ruleChanged(String rule) {
            allChanged();
        }

        /**
         * The answer for one key of one rule may have changed.
         *
         * @param rule the rule's name
         * @param key the key, as {@link #limitsFor} receives it
         */
        void keyChanged(String rule, String key);

        /** Any answer may have changed (after the provider lost track, for example during an outage). */
        void allChanged();
    }

    /**
     * A provider from fixed maps: named plans, and keys assigned a plan or given limits of their own. Keys are
     * written {@code <key expression>:<key>}: {@code user:241531} applies when a rule keyed by {@code user} counts
     * user {@code 241531}, or one keyed by alternatives ({@code user|ip}) counts by its {@code user} alternative;
     * {@code header:X-Api-Key:k-42} when a rule keyed by {@code header:X-Api-Key} counts {@code k-42}. An entry
     * applies to <em>every</em> rule with that key expression (URL rules and annotations alike), unless it names the
     * rules it is for: then only to those. One key may have entries for different rules; an entry naming a rule wins
     * over one for every rule. The provider is immutable and thread-safe.
     *
     * <pre>{@code
     * LimitProvider limits = LimitProvider.builder()
     *         .plan("free", "10/1m")
     *         .plan("paid", "1000/1m", "20/1s")
     *         .assign("user:alice", "paid", Set.of("api"))       // rule 'api' only
     *         .limits("user:241531", "5/1s")                     // every rule keyed by user
     *         .build();
     * }</pre>
     *
     * @return a builder, which validates as values are added
     */
    static Builder builder() {
        return new Builder();
    }

    /** Builds a {@link LimitProvider} from fixed maps ({@link LimitProvider#builder()}). Not thread-safe. */
    final class Builder {

        private final MapLimitProvider.Builder maps = MapLimitProvider.builder();

        private Builder() {}

        /**
         * @param name the plan's name
         * @param limits its limits in text form
         * @return this builder
         * @throws InvalidRateLimitConfigurationException when the name is not a plan's name (1 to 64 printable ASCII
         *         characters without spaces, quotes, commas, braces or backslashes), a limit is invalid or none is given
         */
        public Builder plan(String name, String... limits) {
            maps.plan(name, limits);
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
            maps.assign(key, plan);
            return this;
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
            maps.assign(key, plan, rules);
            return this;
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
            maps.limits(key, limits);
            return this;
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
            maps.limits(key, rules, limits);
            return this;
        }

        /** @return the provider */
        public LimitProvider build() {
            return maps.build();
        }
    }
}
