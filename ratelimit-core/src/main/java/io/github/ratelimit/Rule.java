package io.github.ratelimit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A named rate limit: which key it counts by, its windows (enforced together, a call counted in all or none) or, for
 * a concurrency rule, its calls in flight, and what it does when a call is over the limit. Annotations, the servlet
 * rules file and Spring properties all build this type, so every entry point has the same semantics. Immutable,
 * thread-safe values; two rules with one name share their state, so a {@link RateLimiter} refuses two different ones.
 *
 * <pre>{@code
 * Rule rule = Rule.builder("search")
 *         .key("user|ip")
 *         .limits("5/1s", "100/1m")
 *         .build();
 * }</pre>
 */
public final class Rule {

    /** The longest rule name. */
    public static final int MAX_NAME_LENGTH = 200;

    /** The most calls a {@link Algorithm#SLIDING_WINDOW_LOG} rule's longest window may hold: one log entry each. */
    public static final long MAX_LOG_CALLS = 10_000;

    /** The most intervals ({@code maxDelay / period}, summed over windows) a {@link Algorithm#SLIDING_WINDOW_COUNTER}
     *  key holds delayed calls in, bounding a decision's work in Redis ({@code docs/RELIABILITY.md}). */
    public static final int MAX_COUNTER_DELAY_INTERVALS = 64;

    /** The most windows a rule may have, declared or per key: each is work per decision and a header item. */
    public static final int MAX_LIMITS = 8;

    /** The most calls in flight a concurrency rule may allow per key ({@link #concurrency()}). */
    public static final int MAX_CONCURRENCY = 10_000;

    /** The longest {@code maxDelay} of a {@link Mode#SOFT} rule. */
    public static final Duration MAX_DELAY_LIMIT = Duration.ofHours(1);

    /** The longest {@link #blockFor()}: a key refused by a rule stays refused for at most a day. */
    public static final Duration MAX_BLOCK_FOR = Duration.ofDays(1);

    /** The default {@link #maxWaiting()} of a {@link Mode#SOFT} rule. */
    public static final int DEFAULT_MAX_WAITING = 100;

    /**
     * A rule's values, after defaults: one record, so equality covers every value. Wide on purpose, and built by
     * position in one place only (the constructor below), from the builder's named fields.
     */
    private record Values(
            String name,
            String publicName,
            String source,
            String key,
            List<Limit> limits,
            Mode mode,
            @Nullable Duration maxDelay,
            int maxWaiting,
            long cost,
            StoreFailurePolicy onStoreFailure,
            MissingKeyPolicy onMissingKey,
            Algorithm algorithm,
            @Nullable LocalFirst localFirst,
            Counted count,
            @Nullable HttpStatuses countedStatuses,
            @Nullable String permits,
            int concurrency,
            @Nullable String charge,
            @Nullable Duration blockFor) {}

    private final Values v;

    private Rule(Builder b, Algorithm algorithm) {
        this.v = new Values(
                b.name,
                b.publicName != null ? b.publicName : b.name,
                b.source != null ? b.source : "rule '" + b.name + "'",
                b.key.trim(),
                List.copyOf(b.limits),
                b.mode,
                b.maxDelay,
                b.mode == Mode.SOFT ? (b.maxWaiting != null ? b.maxWaiting : DEFAULT_MAX_WAITING) : 0,
                b.cost,
                b.onStoreFailure,
                b.onMissingKey,
                algorithm,
                b.localFirst,
                b.count,
                b.countedStatuses,
                b.permits == null || b.permits.isBlank() ? null : b.permits.trim(),
                b.concurrency,
                b.charge == null || b.charge.isBlank() ? null : b.charge.trim(),
                b.blockFor);
    }

    /**
     * @param name the rule's id: unique within a limiter; names buckets, metrics and headers
     * @return a builder with the defaults: key {@code global}, {@link Mode#HARD}, cost 1,
     *         {@link StoreFailurePolicy#DEFAULT}, {@link MissingKeyPolicy#REJECT}, {@link Algorithm#TOKEN_BUCKET} (or
     *         {@link Algorithm#FIXED_WINDOW} for a rule with a calendar quota)
     */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** @return the rule's id: names its buckets, its metrics and its entry in the Actuator endpoint */
    public String name() {
        return v.name();
    }

    /**
     * @return the name clients see for the rule, in the rate-limit headers and response bodies: {@link #name()}
     *         unless {@link Builder#publicName} gave another (an unnamed {@code @RateLimit} rule shows a digest of
     *         its name, which names a class and a method). A limiter refuses two rules that show clients one name.
     */
    public String publicName() {
        return v.publicName();
    }

    /** @return where the rule was declared, for messages: {@code @RateLimit on OrderController#list()} */
    public String source() {
        return v.source();
    }

    /** @return the key expression, e.g. {@code user|ip} or {@code header:X-Api-Key} (see {@link RateLimit#key()}) */
    public String key() {
        return v.key();
    }

    /** @return the windows, 1 to {@value #MAX_LIMITS}, each with a distinct period; none for a concurrency rule */
    public List<Limit> limits() {
        return v.limits();
    }

    /** @return for a concurrency rule, the most calls per key in flight at once (1 to {@value #MAX_CONCURRENCY}), each
     *          holding a slot until it ends ({@link Guard#completed}, {@link Guard#refund}); 0 for a rule of windows */
    public int concurrency() {
        return v.concurrency();
    }

    /** @return what happens to a request over the limit */
    public Mode mode() {
        return v.mode();
    }

    /** @return the longest a {@link Mode#SOFT} rule delays a request; {@code null} for other modes */
    public @Nullable Duration maxDelay() {
        return v.maxDelay();
    }

    /** @return the most calls of this {@link Mode#SOFT} rule waiting at once (default {@value #DEFAULT_MAX_WAITING}),
     *          beyond which a call that would wait is rejected (one flooded rule takes no other's places); 0 if not SOFT */
    public int maxWaiting() {
        return v.maxWaiting();
    }

    /** @return tokens one request takes */
    public long cost() {
        return v.cost();
    }

    /** @return what the rule decides when the store fails */
    public StoreFailurePolicy onStoreFailure() {
        return v.onStoreFailure();
    }

    /** @return what the rule does when its key cannot be resolved */
    public MissingKeyPolicy onMissingKey() {
        return v.onMissingKey();
    }

    /** @return how the rule's buckets refill */
    public Algorithm algorithm() {
        return v.algorithm();
    }

    /** @return which calls the rule's tokens pay for: all it admits (the default), those that fail, or statuses */
    public Counted count() {
        return v.count();
    }

    /** @return the statuses whose responses keep their tokens, for {@link Counted#STATUSES}; else {@code null} */
    public @Nullable HttpStatuses countedStatuses() {
        return v.countedStatuses();
    }

    /** @return how many permits a call counts as under this rule ({@link Builder#permits}), or {@code null} */
    public @Nullable String permits() {
        return v.permits();
    }

    /**
     * @return where the tokens a call used come from, read once it has run ({@link Builder#charge}); {@code null} for a
     *         rule that does not charge
     */
    public @Nullable String charge() {
        return v.charge();
    }

    /**
     * @return how long a key stays refused by this rule once the rule refused one of its calls ({@link Builder#blockFor});
     *         {@code null} for not at all (the default)
     */
    public @Nullable Duration blockFor() {
        return v.blockFor();
    }

    /** @return whether and how the rule's buckets in a shared store are decided locally first; {@code null} for never */
    public @Nullable LocalFirst localFirst() {
        return v.localFirst();
    }

    /** @param newLimits the windows of the copy
     *  @return a copy of this rule with other limits, validated like the original (for per-key limits)
     *  @throws InvalidRateLimitConfigurationException when the limits cannot serve this rule (a capacity below its cost) */
    public Rule withLimits(List<Limit> newLimits) {
        Builder b = toBuilder();
        b.limits.clear();
        b.limits.addAll(newLimits);
        return b.build();
    }

    /** @return a builder holding this rule's values, for a modified copy */
    public Builder toBuilder() {
        Builder b = new Builder(v.name);
        b.publicName = v.publicName.equals(v.name) ? null : v.publicName;
        b.source = v.source;
        b.key = v.key;
        b.limits.addAll(v.limits);
        b.mode = v.mode;
        b.maxDelay = v.maxDelay;
        b.maxWaiting = v.mode == Mode.SOFT ? v.maxWaiting : null;
        b.cost = v.cost;
        b.onStoreFailure = v.onStoreFailure;
        b.onMissingKey = v.onMissingKey;
        b.algorithm = v.algorithm;
        b.localFirst = v.localFirst;
        b.count = v.count;
        b.countedStatuses = v.countedStatuses;
        b.permits = v.permits;
        b.concurrency = v.concurrency;
        b.charge = v.charge;
        b.blockFor = v.blockFor;
        return b;
    }

    @Override
    public boolean equals(Object o) {
        return o == this || o instanceof Rule other && v.equals(other.v);
    }

    @Override
    public int hashCode() {
        return v.hashCode();
    }

    @Override
    public String toString() {
        return RuleChecks.describe(this);
    }

    /**
     * Builds a {@link Rule}, validating every value in {@link #build()}. Not thread-safe.
     */
    public static final class Builder {

        private final String name;
        private @Nullable String publicName;
        private @Nullable String source;
        private String key = "global";
        private final List<Limit> limits = new ArrayList<>();
        private Mode mode = Mode.HARD;
        private @Nullable Duration maxDelay;
        private @Nullable Integer maxWaiting;
        private long cost = 1;
        private StoreFailurePolicy onStoreFailure = StoreFailurePolicy.DEFAULT;
        private MissingKeyPolicy onMissingKey = MissingKeyPolicy.REJECT;
        /** The algorithm given, or {@code null} for the default, which depends on the limits. */
        private @Nullable Algorithm algorithm;

        private @Nullable LocalFirst localFirst;
        private Counted count = Counted.ALL;
        private @Nullable HttpStatuses countedStatuses;
        private @Nullable String permits;
        private int concurrency;
        private @Nullable String charge;
        private @Nullable Duration blockFor;

        private Builder(String name) {
            this.name = name;
        }

        /**
         * @param source where the rule is declared, used as the prefix of every configuration message, e.g.
         *        {@code @RateLimit on OrderController#list()} or {@code ratelimit.rules[2]}
         * @return this builder
         */
        public Builder source(String source) {
            this.source = source;
            return this;
        }

        /**
         * @param publicName the name clients see for the rule, in the rate-limit headers and response bodies, under
         *        the constraints of a rule name; {@code null} (the default) for the rule's name
         * @return this builder
         */
        public Builder publicName(@Nullable String publicName) {
            this.publicName = publicName;
            return this;
        }

        /** @param key the key expression; see {@link RateLimit#key()}
         *  @return this builder */
        public Builder key(String key) {
            this.key = key;
            return this;
        }

        /** @param limit a window to add
         *  @return this builder */
        public Builder limit(Limit limit) {
            this.limits.add(Objects.requireNonNull(limit, "limit"));
            return this;
        }

        /**
         * @param limits windows to add, in text form ({@code 5/1s}, {@code 100/1m burst=150})
         * @return this builder
         * @throws InvalidRateLimitConfigurationException naming the source and the bad text
         */
        public Builder limits(String... limits) {
            for (int i = 0; i < limits.length; i++) {
                try {
                    this.limits.add(Limit.parse(limits[i]));
                } catch (InvalidRateLimitConfigurationException e) {
                    throw e.within(where() + ": limits[" + i + "]");
                }
            }
            return this;
        }

        /** @param limits windows to add
         *  @return this builder */
        public Builder limits(List<Limit> limits) {
            limits.forEach(this::limit);
            return this;
        }

        /** @param mode what happens to a request over the limit
         *  @return this builder */
        public Builder mode(Mode mode) {
            this.mode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /** @param maxDelay the longest a {@link Mode#SOFT} request waits; required for, and only for, SOFT
         *  @return this builder */
        public Builder maxDelay(@Nullable Duration maxDelay) {
            this.maxDelay = maxDelay;
            return this;
        }

        /**
         * @param maxWaiting the most calls of this {@link Mode#SOFT} rule that may wait at once, at least 0
         *        (default {@value Rule#DEFAULT_MAX_WAITING}); only for SOFT rules. The limiter's own
         *        {@link RateLimiter.Builder#maxWaiting(int)} caps all rules together.
         * @return this builder
         */
        public Builder maxWaiting(int maxWaiting) {
            this.maxWaiting = maxWaiting;
            return this;
        }

        /** @param cost tokens one request takes, at least 1 and at most the smallest capacity
         *  @return this builder */
        public Builder cost(long cost) {
            this.cost = cost;
            return this;
        }

        /** @param policy what the rule decides when the store fails
         *  @return this builder */
        public Builder onStoreFailure(StoreFailurePolicy policy) {
            this.onStoreFailure = Objects.requireNonNull(policy, "onStoreFailure");
            return this;
        }

        /** @param policy what the rule does when its key cannot be resolved
         *  @return this builder */
        public Builder onMissingKey(MissingKeyPolicy policy) {
            this.onMissingKey = Objects.requireNonNull(policy, "onMissingKey");
            return this;
        }

        /** @param algorithm how the rule counts calls within its windows; without it, {@link Algorithm#TOKEN_BUCKET},
         *         or {@link Algorithm#FIXED_WINDOW} when a limit is a calendar quota ({@code 1000/1mo}), which only a
         *         fixed window counts (another algorithm given with one fails in {@link #build()})
         *  @return this builder */
        public Builder algorithm(Algorithm algorithm) {
            this.algorithm = Objects.requireNonNull(algorithm, "algorithm");
            return this;
        }

        /**
         * @param localFirst decide in this JVM first, synchronizing with a shared store now and then; {@code null}
         *        (the default) for a round trip per decision. See {@link LocalFirst} for the over-admission bound.
         * @return this builder
         */
        public Builder localFirst(@Nullable LocalFirst localFirst) {
            this.localFirst = localFirst;
            return this;
        }

        /** @param count which calls the rule's tokens pay for: {@link Counted#ALL} (the default) or only
         *         {@link Counted#FAILURES}; for {@link Counted#STATUSES}, {@link #count(HttpStatuses)}
         *  @return this builder */
        public Builder count(Counted count) {
            this.count = Objects.requireNonNull(count, "count");
            this.countedStatuses = null;
            return this;
        }

        /** @param statuses the statuses whose responses keep their tokens ({@link Counted#STATUSES})
         *  @return this builder */
        public Builder count(HttpStatuses statuses) {
            this.countedStatuses = Objects.requireNonNull(statuses, "statuses");
            this.count = Counted.STATUSES;
            return this;
        }

        /** @param permits how many permits a call counts as under this rule, resolved from the call like a key
         *         ({@link RateLimit#permits()}); {@code null} (the default) for the call's own
         *  @return this builder */
        public Builder permits(@Nullable String permits) {
            this.permits = permits;
            return this;
        }

        /** @param concurrency the most calls per key in flight at once, making this a concurrency rule with no
         *         windows ({@link Rule#concurrency()}); 0 (the default) for a rule of windows
         *  @return this builder */
        public Builder concurrency(int concurrency) {
            this.concurrency = concurrency;
            return this;
        }

        /**
         * Makes this a rule that charges each call what it used, once it has run (tokens of a language model, bytes
         * served): the call is admitted while its key has tokens left and takes its estimate (its permits, as any
         * call), then {@link Guard#settle} takes what it reports, or gives back what it did not use. What it takes
         * beyond the tokens left is debt: a bucket's windows go below zero, a sliding counter's or a calendar quota's
         * counts past the limit, and the key's next calls wait or are refused until the windows allow them again (a
         * sliding counter's debt weighs as long as the interval it is counted in, two periods at most; a calendar
         * quota's lasts until the window ends). A window owes at most a day of refill, or its capacity if more
         * ({@link Guard#settle}). Token-bucket, fixed-window (calendar quotas included) and sliding-window-counter
         * rules, counting every call, with no concurrency or local-first.
         *
         * @param charge where the faces read the tokens used: SpEL over {@code #result} and the arguments on
         *        {@code @RateLimit} ({@link RateLimit#charge()}), {@code response-header:<Name>} on URL rules; from plain
         *        Java, any text naming where your code reads it (the limiter does not read it: {@link Guard#settle}
         *        is given the number); {@code null} (the default) for a rule that does not charge
         * @return this builder
         */
        public Builder charge(@Nullable String charge) {
            this.charge = charge;
            return this;
        }

        /**
         * Blocks a key the rule refuses: once the rule refuses a call of a key (its windows cannot pay for it; for a
         * {@link Mode#SOFT} rule, its wait would pass {@code maxDelay} or no waiting place is free), every call of that
         * key is refused by the rule for {@code blockFor}, whatever its windows hold meanwhile (they keep refilling);
         * {@code Retry-After} says the block's remaining time. A call refused during the block does not make it longer.
         * A {@link Mode#SHADOW} rule records the block as shadow rejections and refuses nothing. The block is kept by
         * the store with the key's state; resetting the key lifts it. Not for a concurrency rule.
         *
         * @param blockFor how long, above 0 and at most {@link Rule#MAX_BLOCK_FOR}; {@code null} (the default) for no
         *        block
         * @return this builder
         */
        public Builder blockFor(@Nullable Duration blockFor) {
            this.blockFor = blockFor;
            return this;
        }

        private String where() {
            return source != null ? source : "rule '" + name + "'";
        }

        /** @return the rule
         *  @throws InvalidRateLimitConfigurationException naming the source, the bad value, the constraint, the fix */
        public Rule build() {
            String p = permits == null || permits.isBlank() ? null : permits.trim();
            // A calendar quota is a fixed window: a rule with one and no algorithm of its own is one.
            Algorithm algorithm = this.algorithm != null
                    ? this.algorithm
                    : limits.stream().anyMatch(l -> l.calendar() != null)
                            ? Algorithm.FIXED_WINDOW
                            : Algorithm.TOKEN_BUCKET;
            if (concurrency != 0) {
                RuleChecks.checkConcurrency(where(), concurrency, limits, cost, algorithm, localFirst, count, p);
            }
            RuleChecks.check(new RuleChecks.Draft(
                    where(),
                    name,
                    publicName,
                    key,
                    limits,
                    mode,
                    maxDelay,
                    maxWaiting,
                    cost,
                    algorithm,
                    localFirst,
                    concurrency));
            RuleChecks.checkCounting(where(), count, countedStatuses, p, algorithm);
            if (charge != null && !charge.isBlank()) {
                RuleChecks.checkCharge(where(), charge.trim(), algorithm, count, concurrency, localFirst);
            }
            RuleChecks.checkBlockFor(where(), blockFor, concurrency);
            return new Rule(this, algorithm);
        }
    }

    /**
     * Lets a rule's buckets in a shared store (Redis) be decided in this JVM most of the time, for hot, coarse limits
     * (one global bucket of 10,000 calls a second) where a round trip per call costs more than exactness is worth:
     * each instance decides from its copy of the bucket (Bucket4j's delaying optimization) until it has taken
     * {@code maxUnsyncedTokens} tokens or {@code maxUnsyncedTime} has passed, then settles with the store.
     *
     * <p><b>Bound:</b> with N instances, the tokens admitted in any interval of length t are at most
     * {@code capacity + rate × t + N × maxUnsyncedTokens}; the excess is charged back at the next synchronization, so
     * the long-run rate stays the limit's. Ignored by stores in this JVM; token-bucket and fixed-window rules only.
     *
     * @param maxUnsyncedTokens tokens an instance may take before it synchronizes, at least 1
     * @param maxUnsyncedTime the longest an instance goes without synchronizing, 1 ms to 1 min
     */
    public record LocalFirst(long maxUnsyncedTokens, Duration maxUnsyncedTime) {

        /** @param maxUnsyncedTokens tokens an instance may take before it synchronizes
         *  @param maxUnsyncedTime the longest an instance goes without synchronizing
         *  @throws InvalidRateLimitConfigurationException when a value is out of range */
        public LocalFirst {
            RuleChecks.checkLocalFirst(maxUnsyncedTokens, maxUnsyncedTime);
        }
    }

    /** Which calls a rule's tokens pay for. */
    public enum Counted {

        /** Every call the rule admits takes its tokens (the default). */
        ALL,

        /**
         * Only calls that fail keep their tokens (failed logins, wrong API keys): a call needs a token to go ahead and
         * gets it back unless it fails ({@link Guard#completed}: a 401 or a recorded authentication failure to the
         * filters, a throw to the method advisor).
         */
        FAILURES,

        /**
         * Only calls answered with one of the rule's {@link #countedStatuses() statuses} keep their tokens ({@code 404}:
         * enumeration), as the filters report them ({@link Guard#completed(Decision, boolean, int)}; a throw is a 500).
         */
        STATUSES
    }
}
