package io.github.ratelimit.benchmarks.redis;

import io.github.ratelimit.Algorithm;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Measures our Redis store (with token bucket, fixed window, sliding window log and sliding window counter rules)
 * against stock Bucket4j over Jedis (with and without batching), a redis-benchmark Lua token bucket and the G20
 * anchors (scripts and commands of well-known limiters, over Jedis), in one run, and prints a Markdown report
 * (docs/BENCHMARKS.md). Progress goes to stderr, the report to stdout (and to {@code --out}).
 */
public final class RedisStoreBenchmark {

    private static final double BASELINE_FIRST_GUESS_PER_SECOND = 20_000;

    private final Options options;
    private final Environment environment;

    private RedisStoreBenchmark(Options options) {
        this.options = options;
        this.environment = Environment.capture(options.args());
    }

    /**
     * @param args see {@link Options#USAGE}
     */
    public static void main(String[] args) {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"); // Jedis: warnings to stderr
        Options options;
        try {
            options = Options.parse(args);
        } catch (Options.UsageException e) {
            if (e.getMessage() == null) {
                System.out.print(Options.USAGE);
                return;
            }
            System.err.println("error: " + e.getMessage());
            System.err.print(Options.USAGE);
            System.exit(2);
            return;
        }
        String report = new RedisStoreBenchmark(options).run();
        System.out.print(report);
        if (options.output() != null) {
            try {
                Files.writeString(options.output(), report, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException("writing " + options.output(), e);
            }
            progress("report written to " + options.output().toAbsolutePath());
        }
        System.exit(0); // the Redis clients' and the harness's threads must not keep the JVM alive
    }

    private String run() {
        String runId = Long.toString(System.currentTimeMillis(), 36);
        try (RedisTarget target =
                options.redisUrl() == null ? RedisTarget.start() : RedisTarget.connect(options.redisUrl())) {
            String redis = target.description();
            progress(redis);
            List<String> notes = new ArrayList<>();
            if (!target.ownServer()) {
                notes.add("Ran against an existing Redis (--redis): other clients of it would distort every figure.");
            }
            List<Subject> subjects = options.subjects().stream()
                    .map(id -> subject(id, target, "bench-" + runId + "-" + id))
                    .toList();
            List<MemoryProbe.Result> memory = measureMemory(target, subjects, runId);

            Optional<RedisBenchmarkBaseline> baseline = Optional.empty();
            String baselineDescription;
            if (!options.runs(Options.OURS)) {
                baselineDescription = "skipped: G4 compares with our store, which is not among --subjects";
            } else {
                baseline = RedisBenchmarkBaseline.find(target, options.threads(), options.keys());
                if (baseline.isPresent()) {
                    baseline.get().load();
                    baselineDescription = baseline.get().description() + ", EVALSHA of token-bucket.lua, "
                            + options.threads() + " clients, " + options.keys() + " random keys, no pipelining";
                } else {
                    baselineDescription = "skipped: redis-benchmark is not on the PATH (it comes with the Redis "
                            + "server packages, e.g. apt-get install redis-tools)";
                }
            }
            progress("G4 baseline: " + baselineDescription);

            PhaseRunner runner = new PhaseRunner(target, options);
            List<Measurement> measurements = new ArrayList<>();
            List<RedisBenchmarkBaseline.Result> baselineResults = new ArrayList<>();
            double baselineRate = BASELINE_FIRST_GUESS_PER_SECOND;
            for (int round = 1; round <= options.repetitions(); round++) {
                List<Subject> order = rotate(subjects, round - 1);
                for (Scenario scenario : Scenario.values()) {
                    for (Subject subject : order) {
                        Measurement m = runner.measure(subject, scenario, round);
                        measurements.add(m);
                        progress(String.format(
                                Locale.ROOT,
                                "rep %d/%d, %s, %s: %,.0f/s, %.2f round trips/decision%s",
                                round,
                                options.repetitions(),
                                scenario.label(options),
                                subject.label(),
                                m.perSecond(),
                                m.roundTripsPerDecision(),
                                m.storeFailed() + m.rejected() > 0
                                        ? ", " + m.rejected() + " rejected, " + m.storeFailed() + " store failures"
                                        : ""));
                    }
                    if (scenario == Scenario.THREADS_SPREAD && baseline.isPresent()) {
                        RedisBenchmarkBaseline.Result r = runBaseline(baseline.get(), round, baselineRate);
                        baselineRate = r.perSecond();
                        baselineResults.add(r);
                        progress(String.format(
                                Locale.ROOT,
                                "rep %d/%d, G4 baseline redis-benchmark: %,.0f/s",
                                round,
                                options.repetitions(),
                                r.perSecond()));
                    }
                }
            }
            return new Report(
                            options,
                            environment,
                            redis,
                            subjects,
                            measurements,
                            memory,
                            baselineResults,
                            baselineDescription,
                            notes)
                    .render();
        }
    }

    private RedisBenchmarkBaseline.Result runBaseline(
            RedisBenchmarkBaseline baseline, int round, double ratePerSecond) {
        long timeout = 60 + (long) (20 * (options.warmupSeconds() + options.measureSeconds()));
        if (options.warmupSeconds() > 0) {
            long warmup = Math.max(2_000, (long) (ratePerSecond * options.warmupSeconds()));
            ratePerSecond = baseline.run(warmup, "r" + round + "-warm", timeout).perSecond();
        }
        long requests = Math.max(5_000, (long) (ratePerSecond * options.measureSeconds()));
        return baseline.run(requests, "r" + round, timeout);
    }

    /**
     * Memory per key of each subject, each on a fresh server of its own when the benchmark owns Redis (so no
     * subject's keys or table growth mix with another's), with the store's default key prefix.
     */
    private List<MemoryProbe.Result> measureMemory(RedisTarget target, List<Subject> subjects, String runId) {
        List<MemoryProbe.Result> results = new ArrayList<>();
        if (options.memoryKeys() == 0) {
            return results;
        }
        for (int calls : options.memoryCalls()) {
            for (Subject subject : subjects) {
                if (!subject.memoryProbe()) {
                    continue;
                }
                progress("memory: " + subject.label() + ", " + options.memoryKeys() + " fresh keys, " + calls
                        + (calls == 1 ? " call" : " calls") + " each");
                MemoryProbe.Result r;
                if (target.ownServer()) {
                    try (RedisTarget fresh = RedisTarget.start()) {
                        r = new MemoryProbe(fresh, options).measure(subject(subject.id(), fresh, "ratelimit"), calls);
                    }
                } else {
                    String prefix = "ratelimit-" + runId + "-" + subject.id() + "-c" + calls;
                    r = new MemoryProbe(target, options).measure(subject(subject.id(), target, prefix), calls);
                }
                results.add(r);
                progress(String.format(
                        Locale.ROOT,
                        "memory: %s, %d calls/key: %.0f B/key, %s, %d rejected",
                        subject.label(),
                        calls,
                        r.bytesPerKey(),
                        r.value(),
                        r.rejected()));
            }
        }
        return results;
    }

    private Subject subject(String id, RedisTarget target, String keyPrefix) {
        int pool = Math.max(16, options.threads());
        return switch (id) {
            case Options.OURS -> ours(Algorithm.TOKEN_BUCKET, target, keyPrefix, pool);
            case Options.OURS_DIRECT ->
                new OurStoreSubject(Algorithm.TOKEN_BUCKET, false, target.url(), keyPrefix, pool, timeout());
            case Options.OURS_LOG -> ours(Algorithm.SLIDING_WINDOW_LOG, target, keyPrefix, pool);
            case Options.OURS_COUNTER -> ours(Algorithm.SLIDING_WINDOW_COUNTER, target, keyPrefix, pool);
            case Options.OURS_FIXED -> ours(Algorithm.FIXED_WINDOW, target, keyPrefix, pool);
            case Options.STOCK -> new StockBucket4jSubject(target, keyPrefix, pool, false);
            case Options.STOCK_BATCHING -> new StockBucket4jSubject(target, keyPrefix, pool, true);
            case Options.SCG -> new ScgTokenBucketSubject(target, keyPrefix, pool);
            case Options.GCRA -> new GcraSubject(target, keyPrefix, pool);
            case Options.ENVOY -> new EnvoyFixedWindowSubject(target, keyPrefix, pool);
            default -> throw new IllegalArgumentException("unknown subject " + id);
        };
    }

    private OurStoreSubject ours(Algorithm algorithm, RedisTarget target, String keyPrefix, int pool) {
        return new OurStoreSubject(algorithm, true, target.url(), keyPrefix, pool, timeout());
    }

    private Duration timeout() {
        return options.ourCommandTimeoutMillis() > 0 ? Duration.ofMillis(options.ourCommandTimeoutMillis()) : null;
    }

    private static <T> List<T> rotate(List<T> list, int by) {
        List<T> rotated = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) {
            rotated.add(list.get((i + by) % list.size()));
        }
        return rotated;
    }

    private static void progress(String message) {
        System.err.println("[bench] " + message);
    }
}
