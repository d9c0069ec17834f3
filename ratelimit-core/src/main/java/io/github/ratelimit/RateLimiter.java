package io.github.ratelimit;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.internal.DefaultRateLimiter;
import io.github.ratelimit.internal.ScheduledWaiter;
import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.key.KeyResolver;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.LocalBucketStore;
import io.github.ratelimit.store.RateLimitStoreException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * The rate-limiting engine: compiles {@link Rule}s into {@link Guard}s that decide calls with Bucket4j
 * buckets held in a {@link BucketStore}. One per application; the servlet filter and the Spring aspect both
 * decide through it.
 *
 * <pre>{@code
 * RateLimiter limiter = RateLimiter.builder().build();           // local buckets
 * Guard guard = limiter.guard(Rule.builder("api").key("ip").limits("5/1s", "100/1m").build());
 * Decision decision = guard.acquire(RequestContext.builder().remoteAddress("203.0.113.7").build());
 * }</pre>
 *
 * <p>Thread-safe. {@link #close()} closes the store.
 */
public interface RateLimiter extends AutoCloseable {

    /**
     * Compiles rules into a guard: resolves key expressions, builds bucket configurations, and registers each
     * rule by name. Compiling the same rule again is cheap and shares its buckets; a rule given twice is
     * evaluated (and charged) once.
     *
     * @param rules the rules that decide a call together
     * @return the guard
     * @throws InvalidRateLimitConfigurationException when a key expression is unknown, or a rule name is
     *         already registered for a different rule
     */
    Guard guard(Collection<Rule> rules);

    /**
     * @param rules the rules that decide a call together
     * @return the guard
     * @throws InvalidRateLimitConfigurationException as {@link #guard(Collection)}
     */
    default Guard guard(Rule... rules) {
        return guard(List.of(rules));
    }

    /**
     * @return every rule registered so far, by name order
     */
    List<Rule> rules();

    /**
     * Forgets what one key of one rule has counted, at once and in the shared store (every instance then sees a
     * full bucket): to unblock a customer after an incident. Calls already delayed by a SOFT rule keep their place.
     *
     * @param rule the rule's name
     * @param key the key as the rule counts by it (as decisions and the Actuator endpoint show it)
     * @throws IllegalArgumentException when the key has a lone UTF-16 surrogate, which no key the limiter counts by
     *         has (it would reach another key in Redis)
     * @throws RateLimitStoreException when the store cannot be reached
     */
    void reset(String rule, String key);

    /**
     * Gives a rule, in this limiter only, other limits or another mode than it was built with, from its next call on;
     * or takes it back to those it was built with. {@link #rules()} keeps listing the rules as built. Keys with limits
     * of their own ({@link LimitProvider}) keep them. A key's bucket takes the new limits at its next call, as it takes
     * changed per-key limits (Bucket4j's additive replacement). To change a rule on every instance, change it through
     * {@code LimitAdmin} with a {@code RedisLimitProvider}: each instance's limiter then asks the provider
     * ({@link LimitProvider#changedRule}). A change made here wins over the provider's until it is taken back.
     *
     * @param rule the rule's name; a rule not registered yet takes the change when it is
     * @param changed the rule as it decides from now on (same name and values, other limits or mode: see
     *        {@link Rule#withLimits}), or {@code null} for the rule as built
     * @throws IllegalArgumentException when the changed rule differs in anything but its limits and mode, or its mode
     *         changes into or out of {@link Mode#SOFT}
     * @throws UnsupportedOperationException when the limiter cannot (the default, for limiters written before this
     *         method)
     */
    default void changeRule(String rule, @Nullable Rule changed) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot change a rule at run time");
    }

    /**
     * The plans this limiter knows, with the limits it was built with: those calls may name
     * ({@link Builder#planFrom}) and those of its limit provider's keys, when the provider is one this library
     * builds. Empty for limiters written before this method.
     *
     * @return the plans' configured limits by name
     */
    default Map<String, List<Limit>> plans() {
        return Map.of();
    }

    /**
     * Gives a plan, in this limiter (and the limit provider of configured keys it was built with), other limits than
     * it was built with, wherever it is used: plans named by calls and keys assigned the plan; or takes it back to
     * those it was built with. Keys keep their buckets: a bucket takes the new limits at its next call (Bucket4j's
     * additive replacement). To change a plan on every instance, change it through {@code LimitAdmin} with a
     * {@code RedisLimitProvider}.
     *
     * @param plan one of {@link #plans()}
     * @param limits the plan's limits from now on, or {@code null} for those it was built with
     * @throws IllegalArgumentException when the plan is not known, or a rule calls may name it for cannot use the
     *         limits (an {@link InvalidRateLimitConfigurationException} with the message start-up gives)
     * @throws UnsupportedOperationException when the limiter cannot (the default, for limiters written before this
     *         method)
     */
    default void changePlan(String plan, @Nullable List<Limit> limits) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot change a plan at run time");
    }

    /**
     * Checks, without changing anything, that every rule of this limiter that may use the plan can use the limits:
     * the rules calls may name it for ({@link Builder#planFrom}), and those of the provider's keys assigned it, as
     * start-up checks them. Limiters written before this method know no plans and check nothing (the default).
     *
     * @param plan the plan's name
     * @param limits its limits from now on
     * @throws InvalidRateLimitConfigurationException naming the rule and why it cannot use them
     */
    default void checkPlan(String plan, List<Limit> limits) {}

    /**
     * Closes the store and stops the limiter's delay thread (delays still pending complete exceptionally).
     * Idempotent.
     */
    @Override
    void close();

    /**
     * @return a builder with the defaults: a {@link LocalBucketStore}, the system clock, fail-open on store
     *         failures, client addresses from the socket only
     */
    static Builder builder() {
        return new Builder();
    }

    /**
     * Builds a {@link RateLimiter}. Not thread-safe.
     */
    final class Builder {

        /** The default cap on calls waiting out a SOFT delay at once, all rules together. */
        public static final int DEFAULT_MAX_WAITING = 1000;

        private @Nullable BucketStore store;
        private TimeMeter timeMeter = TimeMeter.SYSTEM_MILLISECONDS;
        private @Nullable Waiter waiter;
        private final Map<String, KeyResolver> keyResolvers = new LinkedHashMap<>();
        private ClientIpResolver clientIpResolver = ClientIpResolver.direct();
        private KeyResolver.@Nullable Factory keyResolverFactory;
        private @Nullable LimitProvider limitProvider;
        private Duration limitProviderTtl = Duration.ofMinutes(1);
        private final List<Listener> listeners = new ArrayList<>();
        private @Nullable Observer observer;
        private StoreFailurePolicy defaultStoreFailurePolicy = StoreFailurePolicy.FAIL_OPEN;
        private double localFallbackShare = 1.0;
        private long localFallbackMaximumKeys = LocalBucketStore.DEFAULT_MAXIMUM_KEYS;
        private int maxWaiting = DEFAULT_MAX_WAITING;
        private boolean shadow;
        private final List<String> exempt = new ArrayList<>();
        private final Map<String, List<String>> ruleExempt = new LinkedHashMap<>();
        private @Nullable String planFrom;
        private Map<String, List<Limit>> plans = Map.of();
        private Set<String> planRules = Set.of();
        private boolean planHeaderTrusted;

        private Builder() {}

        /**
         * @param store where buckets live (default: a {@link LocalBucketStore} with this builder's clock)
         * @return this builder
         */
        public Builder store(BucketStore store) {
            this.store = Objects.requireNonNull(store, "store");
            return this;
        }

        /**
         * @param timeMeter the clock of local buckets (default: the system wall clock in milliseconds); tests
         *        pass a manual one
         * @return this builder
         */
        public Builder timeMeter(TimeMeter timeMeter) {
            this.timeMeter = Objects.requireNonNull(timeMeter, "timeMeter");
            return this;
        }

        /**
         * @param waiter how delayed calls wait (default: a {@link Waiter#system()} waiter the limiter creates, and
         *        stops when it closes); a waiter given here is not closed by the limiter
         * @return this builder
         */
        public Builder waiter(Waiter waiter) {
            this.waiter = Objects.requireNonNull(waiter, "waiter");
            return this;
        }

        /**
         * Registers a custom key resolver that key expressions can name.
         *
         * @param name the name rules use, e.g. {@code tenant}; not a built-in name
         * @param resolver the resolver
         * @return this builder
         * @throws InvalidRateLimitConfigurationException when the name is taken or malformed
         */
        public Builder keyResolver(String name, KeyResolver resolver) {
            Objects.requireNonNull(resolver, "resolver");
            String n = name == null ? "" : name.trim();
            if (n.isEmpty() || !n.matches("[A-Za-z0-9_.\\-]+")) {
                throw new InvalidRateLimitConfigurationException("key resolver name '" + name + "' is invalid. "
                        + "Use letters, digits, '_', '.' or '-', e.g. 'tenant'.");
            }
            String lower = n.toLowerCase(Locale.ROOT);
            if (lower.equals("global") || lower.equals("ip") || lower.equals("user") || lower.equals("header")) {
                throw new InvalidRateLimitConfigurationException(
                        "key resolver name '" + name + "' is a built-in " + "key. Choose another name, e.g. 'tenant'.");
            }
            if (keyResolvers.putIfAbsent(n, resolver) != null) {
                throw new InvalidRateLimitConfigurationException(
                        "key resolver '" + name + "' is registered twice. " + "Register each name once.");
            }
            return this;
        }

        /**
         * @param factory compiles key expressions of another language (e.g. SpEL) before the built-in grammar
         * @return this builder
         */
        public Builder keyResolverFactory(KeyResolver.Factory factory) {
            this.keyResolverFactory = Objects.requireNonNull(factory, "factory");
            return this;
        }

        /**
         * @param resolver how the {@code ip} key finds the client address (default: the socket peer only)
         * @return this builder
         */
        public Builder clientIpResolver(ClientIpResolver resolver) {
            this.clientIpResolver = Objects.requireNonNull(resolver, "resolver");
            return this;
        }

        /**
         * @param provider per-key limits replacing the rules' own
         * @param ttl how long an answer is cached before the provider is asked again, at least 1 ms
         * @return this builder
         */
        public Builder limitProvider(LimitProvider provider, Duration ttl) {
            Objects.requireNonNull(ttl, "ttl");
            if (ttl.compareTo(Duration.ofMillis(1)) < 0) {
                throw new InvalidRateLimitConfigurationException(
                        "limit provider cache ttl must be at least 1ms, but was " + ttl + ". Use e.g. 1m.");
            }
            this.limitProvider = Objects.requireNonNull(provider, "provider");
            this.limitProviderTtl = ttl;
            return this;
        }

        /**
         * @param listener receives every decision; several may be added
         * @return this builder
         */
        public Builder listener(Listener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /**
         * @param observer told as each decision starts and ends, for tracing ({@link Observer}; with Micrometer,
         *        {@code io.github.ratelimit.micrometer.MicrometerObservations.of(registry)}); replaces any earlier
         * @return this builder
         */
        public Builder observer(Observer observer) {
            this.observer = Objects.requireNonNull(observer, "observer");
            return this;
        }

        /**
         * @param policy what rules with {@link StoreFailurePolicy#DEFAULT} decide when the store fails (default
         *        {@link StoreFailurePolicy#FAIL_OPEN})
         * @return this builder
         */
        public Builder defaultStoreFailurePolicy(StoreFailurePolicy policy) {
            if (Objects.requireNonNull(policy, "policy") == StoreFailurePolicy.DEFAULT) {
                throw new InvalidRateLimitConfigurationException("the default store failure policy cannot be DEFAULT. "
                        + "Use FAIL_OPEN, FAIL_CLOSED or LOCAL_FALLBACK.");
            }
            this.defaultStoreFailurePolicy = policy;
            return this;
        }

        /**
         * @param share the part of each limit a {@link StoreFailurePolicy#LOCAL_FALLBACK} bucket holds, above 0
         *        and at most 1 (default 1); with N instances behind one store, 1/N keeps the total near the limit
         * @return this builder
         */
        public Builder localFallbackShare(double share) {
            if (!(share > 0 && share <= 1)) {
                throw new InvalidRateLimitConfigurationException("local fallback share must be above 0 and at most 1, "
                        + "but was " + share + ". With N instances, use 1/N, e.g. 0.25 for four.");
            }
            this.localFallbackShare = share;
            return this;
        }

        /**
         * @param maximumKeys the most buckets the local fallback keeps in memory
         * @return this builder
         */
        public Builder localFallbackMaximumKeys(long maximumKeys) {
            this.localFallbackMaximumKeys = maximumKeys;
            return this;
        }

        /**
         * @param shadow whether every rule only records what it would reject, whatever its mode (default false): a
         *        dry run for rolling a configuration out. Each rule then behaves as {@link Mode#SHADOW}: a call it
         *        would reject or delay goes on at once, its decision says {@link Decision.Outcome#SHADOW_REJECTED}
         *        (so metrics and listeners see it), and no rate-limit header claims a limit. Tokens are still taken as
         *        the rules allow, so what the metrics show is what the configuration would do.
         * @return this builder
         */
        public Builder shadow(boolean shadow) {
            this.shadow = shadow;
            return this;
        }

        /**
         * @param cidrs client addresses and ranges no rule limits ({@code 10.0.0.0/8}, {@code 192.0.2.7},
         *        {@code 2001:db8::/32}): a call whose client (as the {@link #clientIpResolver} finds it for the
         *        {@code ip} key, with its whole address) is in one is allowed by every rule without asking a store,
         *        each verdict saying {@link Basis#EXEMPT}. Added to those given before
         * @return this builder
         * @throws InvalidRateLimitConfigurationException when an entry is no address or range (checked in
         *         {@link #build()})
         */
        public Builder exempt(Collection<String> cidrs) {
            exempt.addAll(cidrs);
            return this;
        }

        /**
         * @param rule the name of the rule the entries are for
         * @param values key values the rule never limits, as the rule resolves its keys ({@code alice} for
         *        {@code user}); for a rule whose key reads the client address ({@code ip}, {@code user|ip}),
         *        addresses and ranges too, matched against the call's whole client address. Such calls are allowed
         *        by that rule without asking a store ({@link Basis#EXEMPT}). Added to those given before
         * @return this builder
         */
        public Builder exempt(String rule, Collection<String> values) {
            ruleExempt
                    .computeIfAbsent(Objects.requireNonNull(rule, "rule"), r -> new ArrayList<>())
                    .addAll(values);
            return this;
        }

        /**
         * Chooses a call's plan from the call itself, for keys with no limits of their own from the
         * {@link #limitProvider} (whose entries still win): a plan a trusted gateway names in a header, or a user's
         * granted authority ({@code authority:PLAN_} in the Spring Boot starter).
         *
         * @param expression where a call's plan name comes from, resolved like a key: {@code header:X-Plan} (believed
         *        only from a trusted proxy of the {@link #clientIpResolver}, see {@link #planHeaderTrusted}), a custom
         *        resolver's name, or an expression of the {@link #keyResolverFactory} (SpEL in Spring)
         * @param plans the plans by name; a call whose plan is none of them (or that names none) gets the rule's own
         *        limits
         * @param rules the names of the rules the plans are for; empty for every rule whose key counts by the user
         *        ({@code user}, {@code user|ip})
         * @return this builder
         * @throws InvalidRateLimitConfigurationException when a rule cannot use a plan's limits (raised when the rule
         *         is registered); when the expression reads a header while no proxy is trusted and the header is not
         *         declared trusted (raised by {@link #build()})
         */
        public Builder planFrom(String expression, Map<String, List<Limit>> plans, Collection<String> rules) {
            this.planFrom = Objects.requireNonNull(expression, "expression");
            this.plans = Map.copyOf(plans);
            this.planRules = Set.copyOf(rules);
            return this;
        }

        /**
         * Believes a plan named in a header ({@link #planFrom} {@code header:<Name>}) from every peer, not only from the
         * trusted proxies of the {@link #clientIpResolver}: for a deployment in which nothing reaches the application
         * without passing something that sets or removes the header (a gateway, a sidecar) whose addresses cannot be
         * listed as trusted proxies. Without it (the default) a plan header is believed only from a trusted proxy,
         * a call from any other peer gets the rule's own limits, and a limiter that reads its plan from a header but
         * trusts no proxy fails to build ({@code ratelimit.plan-header-trusted}).
         *
         * @param trusted whether the plan header is believed from every peer
         * @return this builder
         */
        public Builder planHeaderTrusted(boolean trusted) {
            this.planHeaderTrusted = trusted;
            return this;
        }

        /**
         * @param maxWaiting the most calls that may wait out a SOFT delay at once in this limiter, all rules
         *        together, at least 0 (default {@value #DEFAULT_MAX_WAITING}); each SOFT rule has a bound of its own
         *        as well ({@link Rule#maxWaiting()}). Beyond either, a call that would be delayed is rejected with
         *        {@link Basis#WAITERS_FULL}
         * @return this builder
         */
        public Builder maxWaiting(int maxWaiting) {
            if (maxWaiting < 0) {
                throw new InvalidRateLimitConfigurationException("maxWaiting must be 0 or more, but was " + maxWaiting
                        + ". Use the most requests that may wait at once, e.g. 100.");
            }
            this.maxWaiting = maxWaiting;
            return this;
        }

        /**
         * @return the limiter
         */
        public RateLimiter build() {
            BucketStore s = store != null
                    ? store
                    : LocalBucketStore.builder().timeMeter(timeMeter).build();
            LocalBucketStore fallback = LocalBucketStore.builder()
                    .timeMeter(timeMeter)
                    .maximumKeys(localFallbackMaximumKeys)
                    .build();
            boolean ownsWaiter = waiter == null;
            Waiter w = ownsWaiter ? Waiter.system() : waiter;
            return new DefaultRateLimiter(new DefaultRateLimiter.Settings(
                    new DefaultRateLimiter.Settings.Stores(s, fallback, defaultStoreFailurePolicy, localFallbackShare),
                    new DefaultRateLimiter.Settings.Timing(timeMeter, w, ownsWaiter),
                    new DefaultRateLimiter.Settings.Keys(
                            Map.copyOf(keyResolvers), clientIpResolver, keyResolverFactory),
                    new DefaultRateLimiter.Settings.PerKeyLimits(limitProvider, limitProviderTtl),
                    new DefaultRateLimiter.Settings.Plans(planFrom, plans, planRules, planHeaderTrusted),
                    new DefaultRateLimiter.Settings.Exemptions(List.copyOf(exempt), Map.copyOf(ruleExempt)),
                    List.copyOf(listeners),
                    observer,
                    maxWaiting,
                    shadow));
        }
    }

    /**
     * Receives every decision a {@link RateLimiter} makes: for metrics, logs and audit.
     *
     * <p>Called on the deciding thread, before a delayed call waits; implementations must be thread-safe and
     * fast, and must not block. An exception thrown here is logged and otherwise ignored: it never changes a
     * decision.
     */
    @FunctionalInterface
    public interface Listener {

        /**
         * @param decision the decision, with one verdict per evaluated rule
         */
        void onDecision(Decision decision);

        /**
         * Told when a permitted call is settled under a charging rule ({@link Guard#settle}), after it ran. Not a
         * decision: {@link #onDecision} heard of the call already. The default ignores it.
         *
         * @param verdict the rule's verdict on the call, as decided
         * @param settlement what settling did
         * @param tokens the tokens taken (for {@link Guard.Settlement#CHARGED} and {@link Guard.Settlement#CLAMPED})
         *        or given back ({@link Guard.Settlement#REFUNDED}); else 0
         */
        default void onSettled(Decision.Verdict verdict, Guard.Settlement settlement, long tokens) {}
    }

    /**
     * Told as each decision starts and as it ends, for tracing: the time between covers the store's round trips and
     * any {@link Mode#SOFT} wait, for a slot included. {@link Guard#acquire} and {@link Guard#acquireAsync} are
     * observed; {@link Guard#peek}, a guard with no rules, and the tokens settled after a call are not, nor is a call
     * of one rule that a bucket in this JVM allows at once: it takes a fraction of a microsecond, less than an
     * observation costs, and nothing in it is worth a span. Every decision that asks a remote store, waits, is refused,
     * or meets several rules is observed. Without an observer (the default) deciding costs nothing more.
     *
     * <p>{@link #start} is called on the deciding thread before the decision is made, so an implementation can read
     * that thread's context (the current trace span); {@link Stop#stop} exactly once, on whichever thread ends the
     * decision (a scheduler's thread after an asynchronous wait). Implementations must be thread-safe and fast and must
     * not block; an exception they throw is logged and otherwise ignored: it never changes a decision.
     */
    public interface Observer {

        /**
         * @param rules the deciding guard's rules, in evaluation order
         * @param context the call
         * @return what ends the observation, never {@code null}
         */
        Stop start(List<Rule> rules, RequestContext context);

        /** Ends one observation. */
        @FunctionalInterface
        interface Stop {

            /**
             * @param decision the decision, or {@code null} when deciding failed
             * @param failure why deciding failed (an exception the caller then receives), or {@code null}
             */
            void stop(@Nullable Decision decision, @Nullable Throwable failure);
        }
    }

    /**
     * How a {@link RateLimiter} lets time pass for delayed ({@link Mode#SOFT}) calls. The default parks the
     * calling thread, or completes a future from a scheduler thread the limiter owns ({@link #system()}); tests
     * substitute one that advances a manual clock instead of sleeping.
     */
    interface Waiter {

        /**
         * Blocks the calling thread.
         *
         * @param nanos how long, positive
         * @throws InterruptedException when the thread is interrupted meanwhile
         */
        void await(long nanos) throws InterruptedException;

        /**
         * @param nanos how long, positive
         * @return a future that completes after that long, without holding a thread meanwhile
         */
        CompletableFuture<Void> after(long nanos);

        /**
         * A new waiter that uses real time: {@link #await} parks the calling thread; {@link #after} completes futures
         * from a scheduler thread of the waiter's own (started on first use, with the library's class loader as its
         * context loader), never the JDK's shared delay thread, which would pin a web application's class loader after
         * an undeploy. A {@link RateLimiter} built without a waiter creates one and stops its thread when it closes; a
         * waiter created here and handed to a builder is the caller's to close, if it is {@link AutoCloseable}.
         *
         * @return a new real-time waiter
         */
        static Waiter system() {
            return new ScheduledWaiter();
        }
    }
}
