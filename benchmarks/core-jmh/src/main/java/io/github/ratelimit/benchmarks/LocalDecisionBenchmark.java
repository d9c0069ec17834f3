package io.github.ratelimit.benchmarks;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.ConsumptionProbe;
import io.github.bucket4j.VerboseResult;
import io.github.bucket4j.local.LocalBucket;
import io.github.bucket4j.local.SynchronizationStrategy;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * G1: decisions per second through the core API (key, rule, decide) against bare Bucket4j local buckets, in one
 * JMH run.
 *
 * <ul>
 *   <li>{@code a_bareOneBucket}: {@code LocalBucket.tryConsume(1)} on one bucket with the rule's two bandwidths;
 *   <li>{@code b_bareKeyed}: the same, after looking the bucket up by key in a {@link ConcurrentHashMap} over
 *       {@value #KEYS} keys, so the baseline also pays for a key lookup;
 *   <li>{@code c_coreGlobal}: {@code guard.acquire(ctx)} under a rule keyed {@code global} (one bucket);
 *   <li>{@code d_coreIp}: {@code guard.acquire(ctx)} under a rule keyed {@code ip}, cycling over {@value #KEYS}
 *       pre-built contexts with distinct client addresses;
 *   <li>{@code e_bareVerboseOneBucket}: diagnostic, not part of a ratio: the Bucket4j call the core makes,
 *       {@code asVerbose().tryConsumeAndReturnRemaining(1)}, on one bare bucket.
 * </ul>
 *
 * G1 reads c/a and d/b; {@link LocalDecisionRatios} runs this class in interleaved rounds and prints them. The
 * limits are so high that no call is rejected (sanity-checked at tear-down), so every call takes the permit path.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 8, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 3,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Threads(1)
public class LocalDecisionBenchmark {

    /** Keys of the keyed variants; a power of two. */
    static final int KEYS = 1024;

    /** Two windows, as the rule's limits: 10^9 per second and 10^12 per hour, never reached here. */
    static final String[] LIMITS = {"1000000000/1s", "1000000000000/1h"};

    private LocalBucket oneBucket;
    private String[] keys;
    private ConcurrentHashMap<String, LocalBucket> keyedBuckets;

    private RateLimiter limiter;
    private Guard globalGuard;
    private Guard ipGuard;
    private RequestContext globalContext;
    private RequestContext[] ipContexts;

    /** Each thread's position in the key cycle; threads start at different keys. */
    @State(Scope.Thread)
    public static class Cursor {
        private static final AtomicInteger THREADS = new AtomicInteger();
        int next;

        @Setup
        public void setUp() {
            next = (THREADS.getAndIncrement() * (KEYS / 2 + 1)) & (KEYS - 1);
        }

        int advance() {
            int i = next;
            next = (i + 1) & (KEYS - 1);
            return i;
        }
    }

    @Setup
    public void setUp() {
        oneBucket = bareBucket();
        keys = new String[KEYS];
        keyedBuckets = new ConcurrentHashMap<>();
        ipContexts = new RequestContext[KEYS];
        for (int i = 0; i < KEYS; i++) {
            keys[i] = address(i);
            keyedBuckets.put(keys[i], bareBucket());
            ipContexts[i] = RequestContext.builder().remoteAddress(keys[i]).build();
        }

        limiter = RateLimiter.builder().build(); // the default: a LocalBucketStore, the system clock
        globalGuard = limiter.guard(
                Rule.builder("bench-global").key("global").limits(LIMITS).build());
        ipGuard =
                limiter.guard(Rule.builder("bench-ip").key("ip").limits(LIMITS).build());
        globalContext = RequestContext.builder().remoteAddress("203.0.113.7").build();

        // The baseline must have exactly the windows the core gives the rule's buckets: compare what a decision
        // reports (capacity, refill per period, period) with the bare bucket's bandwidths.
        var windows = globalGuard.acquire(globalContext).verdicts().get(0).windows();
        var bandwidths = oneBucket.getConfiguration().getBandwidths();
        for (int i = 0; i < bandwidths.length; i++) {
            var w = windows.get(i);
            var b = bandwidths[i];
            if (w.limit() != b.getCapacity()
                    || w.permits() != b.getRefillTokens()
                    || w.period().toNanos() != b.getRefillPeriodNanos()
                    || !w.name().equals(b.getId())) {
                throw new IllegalStateException(
                        "bare bucket " + oneBucket.getConfiguration() + " differs from the core's windows " + windows);
            }
        }
    }

    @TearDown
    public void checkNothingWasRejected() {
        // 10^9 tokens a second is far above any throughput here, so no call is refused; a refusal now would mean
        // the run measured the rejection path and must not be reported.
        if (!oneBucket.tryConsume(1)
                || !globalGuard.acquire(globalContext).permitted()
                || !ipGuard.acquire(ipContexts[0]).permitted()) {
            throw new IllegalStateException("a bucket ran dry: the benchmark limits are too low for this machine");
        }
        limiter.close();
    }

    /** (a) bare Bucket4j, one bucket. */
    @Benchmark
    public boolean a_bareOneBucket() {
        return oneBucket.tryConsume(1);
    }

    /** (b) bare Bucket4j, a bucket per key looked up in a map. */
    @Benchmark
    public boolean b_bareKeyed(Cursor cursor) {
        String key = keys[cursor.advance()];
        LocalBucket bucket = keyedBuckets.get(key);
        if (bucket == null) {
            bucket = keyedBuckets.computeIfAbsent(key, k -> bareBucket());
        }
        return bucket.tryConsume(1);
    }

    /** (c) the core API, rule keyed {@code global}. */
    @Benchmark
    public Decision c_coreGlobal() {
        return globalGuard.acquire(globalContext);
    }

    /** (d) the core API, rule keyed {@code ip}, {@value #KEYS} client addresses. */
    @Benchmark
    public Decision d_coreIp(Cursor cursor) {
        return ipGuard.acquire(ipContexts[cursor.advance()]);
    }

    /** (e) diagnostic: the verbose Bucket4j call the core makes, on one bare bucket. */
    @Benchmark
    public VerboseResult<ConsumptionProbe> e_bareVerboseOneBucket() {
        return oneBucket.asVerbose().tryConsumeAndReturnRemaining(1);
    }

    /**
     * A bucket with the same bandwidths as the rules' (greedy refill, one per window, identified by window) and the
     * same clock (milliseconds, Bucket4j's default and the local store's): what a Bucket4j user builds, lock-free,
     * Bucket4j's default. The local store holds the same Bucket4j state, under a lock of its own per key.
     */
    static LocalBucket bareBucket() {
        return Bucket.builder()
                .addLimit(Bandwidth.builder()
                        .capacity(1_000_000_000L)
                        .refillGreedy(1_000_000_000L, Duration.ofSeconds(1))
                        .id("1s")
                        .build())
                .addLimit(Bandwidth.builder()
                        .capacity(1_000_000_000_000L)
                        .refillGreedy(1_000_000_000_000L, Duration.ofHours(1))
                        .id("1h")
                        .build())
                .withMillisecondPrecision()
                .withSynchronizationStrategy(SynchronizationStrategy.LOCK_FREE)
                .build();
    }

    /** @return a distinct IPv4 literal for each i below 65,536: 10.0.x.y */
    static String address(int i) {
        return "10.0." + (i >>> 8) + "." + (i & 0xff);
    }
}
