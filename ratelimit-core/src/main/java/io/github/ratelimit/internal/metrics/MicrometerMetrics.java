package io.github.ratelimit.internal.metrics;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Decision.Verdict;
import io.github.ratelimit.Guard;
import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.redis.RedisLimitProvider;
import io.github.ratelimit.store.BucketStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalDouble;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.ToDoubleFunction;

/**
 * Micrometer metrics of every decision: a {@link RateLimiter.Listener} to add to the limiter
 * ({@code RateLimiter.builder().listener(new MicrometerMetrics(registry))}). The Spring Boot starter registers it
 * with Boot's registry; the servlet filter with Micrometer's global registry. Micrometer is an optional dependency:
 * use this class only with {@code io.micrometer:micrometer-core} on the class path.
 *
 * <p>Tags are bounded: the rule (a fixed set), the outcome and what it rests on; never the key. Thread-safe.
 *
 * <ul>
 *   <li>{@code ratelimit.requests{rule, outcome, basis}}: counter; outcome {@code allowed}, {@code delayed},
 *       {@code shadow_rejected}, {@code rejected}; basis {@code bucket}, {@code fallback_bucket},
 *       {@code fail_open}, {@code fail_closed}, {@code contention}, {@code key_missing}, {@code waiters_full},
 *       {@code interrupted}, {@code exempt}, {@code blocked}.</li>
 *   <li>{@code ratelimit.settlements{rule, result}}: counter of the calls settled after they ran under a rule that
 *       charges what they used ({@code Guard.settle}); result {@code charged}, {@code clamped} (the debt bound held
 *       part back), {@code refunded}, {@code exact}, {@code unusable} (no usable number reported: the call kept its
 *       estimate), {@code lost} (the store failed: the call kept its estimate).</li>
 *   <li>{@code ratelimit.delay{rule}}: timer of the delays SOFT rules imposed.</li>
 *   <li>{@code ratelimit.near.limit{rule}}: counter of permitted calls that left their key with less than a share of
 *       a window's limit (default {@value #DEFAULT_NEAR_LIMIT_SHARE}; Envoy's {@code near_limit}): customers approaching
 *       their limits, seen before they are rejected.</li>
 *   <li>For the Redis store: {@code ratelimit.store.operations}, {@code .round.trips}, {@code .conflicts},
 *       {@code .failures}, {@code .short.circuited}, {@code .contended} (function counters),
 *       {@code ratelimit.store.late.answers} (operations answered later than the command timeout while the breaker
 *       was closed, asked once more), {@code ratelimit.store.refunds{result=late|lost|unconfirmed}} (function counters
 *       of the refunds, tokens or
 *       slots, that could not be made when their call ended because Redis failed then: made late, given up, or sent
 *       unanswered and not tried again),
 *       {@code ratelimit.store.latency} (timer of every operation, retries included, with the percentiles p50, p95
 *       and p99 and a percentile histogram) and {@code ratelimit.store.breaker.open}
 *       (gauge: 1 while the circuit breaker is open or probing, else 0).</li>
 * </ul>
 */
public final class MicrometerMetrics implements RateLimiter.Listener {

    /** The share of a window's limit below which a permitted call counts as near the limit, by default. */
    public static final double DEFAULT_NEAR_LIMIT_SHARE = 0.2;

    private final MeterRegistry registry;
    private final double nearLimitShare;
    /**
     * Each rule's {@code ratelimit.requests} counters, by outcome and basis ({@link #slot}): found with no object made
     * per decision.
     */
    private final Map<String, AtomicReferenceArray<Counter>> counters = new ConcurrentHashMap<>();

    private final Map<String, Timer> delays = new ConcurrentHashMap<>();
    private final Map<String, Counter> nearLimit = new ConcurrentHashMap<>();
    /** {@code ratelimit.settlements} counters, by rule and settlement. */
    private final Map<String, Counter> settlements = new ConcurrentHashMap<>();

    /**
     * Metrics that count near-limit calls at the default share, {@value #DEFAULT_NEAR_LIMIT_SHARE}.
     *
     * @param registry where the meters go (Spring Boot's registry, or Micrometer's {@code Metrics.globalRegistry})
     */
    public MicrometerMetrics(MeterRegistry registry) {
        this(registry, DEFAULT_NEAR_LIMIT_SHARE);
    }

    /**
     * @param registry where the meters go (Spring Boot's registry, or Micrometer's {@code Metrics.globalRegistry})
     * @param nearLimitShare a permitted call that leaves its key less than this share of a window's limit counts in
     *        {@code ratelimit.near.limit}; above 0 and at most 1
     * @throws IllegalArgumentException when the share is out of range
     */
    public MicrometerMetrics(MeterRegistry registry, double nearLimitShare) {
        this.registry = Objects.requireNonNull(registry, "registry");
        if (!(nearLimitShare > 0 && nearLimitShare <= 1)) {
            throw new IllegalArgumentException(
                    "The near-limit share must be above 0 and at most 1, but was " + nearLimitShare);
        }
        this.nearLimitShare = nearLimitShare;
    }

    @Override
    public void onSettled(Verdict verdict, Guard.Settlement settlement, long tokens) {
        String result = settlement.name().toLowerCase(Locale.ROOT);
        settlements
                .computeIfAbsent(
                        verdict.rule() + '\u0000' + result,
                        k -> Counter.builder("ratelimit.settlements")
                                .description("Calls settled after they ran under a rule that charges what they used")
                                .tag("rule", verdict.rule())
                                .tag("result", result)
                                .register(registry))
                .increment();
    }

    @Override
    public void onDecision(Decision decision) {
        List<Verdict> verdicts = decision.verdicts();
        for (int i = 0; i < verdicts.size(); i++) {
            Verdict v = verdicts.get(i);
            requests(v).increment();
            if (v.outcome() == Outcome.DELAYED) {
                delays.computeIfAbsent(
                                v.rule(),
                                rule -> Timer.builder("ratelimit.delay")
                                        .description("Delays imposed by SOFT rules")
                                        .tag("rule", rule)
                                        .register(registry))
                        .record(Duration.ofNanos(v.waitNanos()));
            }
            if ((v.outcome() == Outcome.ALLOWED || v.outcome() == Outcome.DELAYED) && nearLimit(v)) {
                nearLimit
                        .computeIfAbsent(
                                v.rule(),
                                rule -> Counter.builder("ratelimit.near.limit")
                                        .description("Permitted calls that left their key with less than "
                                                + Math.round(nearLimitShare * 100) + " % of a window's limit")
                                        .tag("rule", rule)
                                        .register(registry))
                        .increment();
            }
        }
    }

    private static final int BASES = Decision.Basis.values().length;

    private static int slot(Outcome outcome, Decision.Basis basis) {
        return outcome.ordinal() * BASES + basis.ordinal();
    }

    /** @return the verdict's {@code ratelimit.requests} counter, registered on first use */
    private Counter requests(Verdict v) {
        AtomicReferenceArray<Counter> byRule = counters.get(v.rule());
        if (byRule == null) {
            byRule = counters.computeIfAbsent(
                    v.rule(), rule -> new AtomicReferenceArray<>(Outcome.values().length * BASES));
        }
        int slot = slot(v.outcome(), v.basis());
        Counter counter = byRule.get(slot);
        if (counter == null) {
            // Registering twice gives the same meter: a race only makes it twice.
            counter = Counter.builder("ratelimit.requests")
                    .description("Rate-limit decisions, per rule")
                    .tag("rule", v.rule())
                    .tag("outcome", v.outcome().name().toLowerCase(Locale.ROOT))
                    .tag("basis", v.basis().name().toLowerCase(Locale.ROOT))
                    .register(registry);
            byRule.set(slot, counter);
        }
        return counter;
    }

    /** Whether the verdict left its key with less than the share of one of its windows' limits. */
    private boolean nearLimit(Verdict v) {
        List<Decision.Window> windows = v.windows();
        for (int i = 0; i < windows.size(); i++) {
            Decision.Window w = windows.get(i);
            if (w.limit() > 0 && w.remaining() < nearLimitShare * w.limit()) {
                return true;
            }
        }
        return false;
    }

    /** The name of the Redis store's latency timer. */
    public static final String STORE_LATENCY = "ratelimit.store.latency";

    /**
     * @param registry where the {@value #STORE_LATENCY} timer is registered
     * @param percentile a percentile the timer publishes: 0.5, 0.95 or 0.99
     * @return its value in milliseconds over the timer's recent window, or empty when there is no such timer (no Redis
     *         store, or metrics off) or it recorded nothing yet (or the registry keeps no percentiles)
     */
    public static OptionalDouble storeLatencyMillis(MeterRegistry registry, double percentile) {
        Timer timer = registry.find(STORE_LATENCY).timer();
        if (timer == null || timer.count() == 0) {
            return OptionalDouble.empty();
        }
        for (ValueAtPercentile v : timer.takeSnapshot().percentileValues()) {
            if (v.percentile() == percentile) {
                return OptionalDouble.of(v.value(TimeUnit.MILLISECONDS));
            }
        }
        return OptionalDouble.empty();
    }

    private static final String REPAIRS = "ratelimit.store.repairs";
    private static final String REFUNDS = "ratelimit.store.refunds";
    private static final String REPAIRS_DESCRIPTION = "Keys whose stored state was garbage (another type, unreadable, "
            + "out of range, no expiry) and was replaced instead of obeyed";

    /**
     * Registers the meters of per-key limits kept in Redis ({@code ratelimit.store.repairs{state=limits}}); does
     * nothing for another provider, or {@code null}.
     *
     * @param provider the limiter's limit provider, or {@code null}
     */
    public void bindLimitStore(LimitProvider provider) {
        if (provider instanceof RedisLimitProvider limits) {
            io.micrometer.core.instrument.FunctionCounter.builder(REPAIRS, limits, RedisLimitProvider::repairs)
                    .tag("state", "limits")
                    .description(REPAIRS_DESCRIPTION)
                    .register(registry);
        }
    }

    /**
     * Registers the store's own meters; does nothing for a store that has none (the local store).
     *
     * @param store the limiter's store
     */
    public void bindStore(BucketStore store) {
        if (!(store instanceof JedisBucketStore redis)) {
            return;
        }
        MeterRegistry registry = this.registry;
        counter(
                registry,
                redis,
                "ratelimit.store.operations",
                "Bucket operations sent to Redis",
                s -> s.stats().decisions());
        counter(
                registry,
                redis,
                "ratelimit.store.round.trips",
                "Scripts run on Redis",
                s -> s.stats().roundTrips());
        counter(
                registry,
                redis,
                "ratelimit.store.pipelines",
                "Pipelines of several threads' scripts sent, one round trip each",
                s -> s.stats().pipelines());
        counter(
                registry,
                redis,
                "ratelimit.store.conflicts",
                "Attempts that met a newer bucket state",
                s -> s.stats().conflicts());
        counter(
                registry,
                redis,
                "ratelimit.store.failures",
                "Operations that failed in Redis or on the network",
                s -> s.stats().failures());
        counter(
                registry,
                redis,
                "ratelimit.store.short.circuited",
                "Operations refused by the open circuit breaker",
                s -> s.stats().shortCircuited());
        io.micrometer.core.instrument.FunctionCounter.builder(
                        REPAIRS, redis, s -> s.stats().repairs())
                .tag("state", "buckets")
                .description(REPAIRS_DESCRIPTION)
                .register(registry);
        counter(
                registry,
                redis,
                "ratelimit.store.contended",
                "Operations given up because the bucket kept changing "
                        + "under concurrent writers (each rejected its call)",
                s -> s.stats().contended());
        counter(
                registry,
                redis,
                "ratelimit.store.late.answers",
                "Operations Redis answered later than the command "
                        + "timeout while the breaker was closed, asked once more before the failure policy",
                s -> s.stats().lateAnswers());
        refunds(
                registry,
                redis,
                "late",
                "given back late, off the request path, after Redis failed when the call ended",
                s -> s.stats().lateRefunds());
        refunds(
                registry,
                redis,
                "lost",
                "given up: Redis kept failing for 15 s after the call ended, or too many waited",
                s -> s.stats().lostRefunds());
        refunds(
                registry,
                redis,
                "unconfirmed",
                "sent to Redis unanswered and not tried again (a sliding counter's or "
                        + "a calendar quota's, which Redis may have run)",
                s -> s.stats().unconfirmedRefunds());
        // Every operation recorded, so operators read p50/p95/p99 (and Prometheus a histogram to aggregate instances).
        Timer latency = Timer.builder(STORE_LATENCY)
                .description("Time Redis operations took, retries included")
                .publishPercentiles(0.5, 0.95, 0.99)
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(100_000))
                .maximumExpectedValue(Duration.ofSeconds(10))
                .register(registry);
        redis.latencyObserver(nanos -> latency.record(nanos, TimeUnit.NANOSECONDS));
        Gauge.builder(
                        "ratelimit.store.breaker.open",
                        redis,
                        s -> s.breakerState() == JedisBucketStore.BreakerState.CLOSED ? 0 : 1)
                .description("1 while the Redis circuit breaker is open or probing")
                .register(registry);
    }

    private static void refunds(
            MeterRegistry registry,
            JedisBucketStore store,
            String result,
            String description,
            ToDoubleFunction<JedisBucketStore> value) {
        FunctionCounter.builder(REFUNDS, store, value)
                .tag("result", result)
                .description("Refunds (tokens, slots) that could not be made when the call ended: " + description)
                .baseUnit("refunds")
                .register(registry);
    }

    private static void counter(
            MeterRegistry registry,
            JedisBucketStore store,
            String name,
            String description,
            ToDoubleFunction<JedisBucketStore> value) {
        FunctionCounter.builder(name, store, value)
                .description(description)
                .baseUnit("operations")
                .register(registry);
    }
}
