package io.github.ratelimit.benchmarks.redis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;

/**
 * Renders the results as Markdown: the settings and environment, the medians per subject and scenario, the
 * ratios, the goals of {@code docs/BENCHMARKS.md} this benchmark covers, memory per key, every repetition, and notes
 * on anything that makes a figure suspect.
 */
final class Report {

    private final Options options;
    private final Environment environment;
    private final String redis;
    private final List<Subject> subjects;
    private final List<Measurement> measurements;
    private final List<MemoryProbe.Result> memory;
    private final List<RedisBenchmarkBaseline.Result> baseline;
    private final String baselineDescription;
    private final List<String> notes = new ArrayList<>();
    private final StringBuilder out = new StringBuilder();

    /**
     * @param baselineDescription the redis-benchmark used, or why G4 was skipped (when {@code baseline} is empty)
     */
    Report(
            Options options,
            Environment environment,
            String redis,
            List<Subject> subjects,
            List<Measurement> measurements,
            List<MemoryProbe.Result> memory,
            List<RedisBenchmarkBaseline.Result> baseline,
            String baselineDescription,
            List<String> notes) {
        this.options = options;
        this.environment = environment;
        this.redis = redis;
        this.subjects = subjects;
        this.measurements = measurements;
        this.memory = memory;
        this.baseline = baseline;
        this.baselineDescription = baselineDescription;
        this.notes.addAll(notes);
    }

    String render() {
        header();
        summary();
        cpu();
        ratios();
        goals();
        memory();
        repetitions();
        notes();
        return out.toString();
    }

    private void header() {
        line("# Redis store benchmark");
        line("");
        line("Command (from `" + environment.workingDirectory() + "`):");
        line("");
        line("```");
        line(environment.command());
        line("```");
        line("");
        line("| | |");
        line("|---|---|");
        line("| Started | " + environment.started() + " |");
        line("| Commit | " + environment.commit() + " |");
        line("| Machine | " + environment.machine() + " |");
        line("| JVM | " + environment.java() + " |");
        line("| Redis | " + redis + " |");
        line("| G4 baseline | " + baselineDescription + " |");
        line("| Our store | default settings"
                + (options.ourCommandTimeoutMillis() > 0
                        ? " except a command timeout of " + options.ourCommandTimeoutMillis() + " ms"
                        : " (command timeout 50 ms, breaker after 250 ms of failures, " + "fail-open, batching)")
                + "; pool of " + Math.max(16, options.threads())
                + (subjects.stream().anyMatch(s -> s instanceof OurStoreSubject o && o.sliding())
                        ? "; batching applies to token-bucket rules only: a sliding rule's decision is one script"
                        : "")
                + " |");
        if (subjects.stream().anyMatch(s -> s instanceof StockBucket4jSubject)) {
            line(
                    "| Stock Bucket4j | bucket4j_jdk17-jedis 8.17.0 (8.18.0 and 8.19.0 of it are not on Maven Central; its "
                            + "sources are unchanged since) on bucket4j_jdk17-core 8.19.0; Jedis pool of "
                            + Math.max(16, options.threads()) + ", default 2 s socket timeout, unbounded retries |");
        }
        List<String> anchors = subjects.stream()
                .filter(s -> s instanceof JedisAnchorSubject)
                .map(s -> "`" + s.id() + "` " + s.label())
                .toList();
        if (!anchors.isEmpty()) {
            line("| G20 anchors | " + String.join("; ", anchors) + ": scripts and commands written for this benchmark, "
                    + "run through a pooled Jedis client (pool of " + Math.max(16, options.threads())
                    + ") from the same load threads, one window each, one round trip per decision |");
        }
        line("| Phases | " + fmt(options.warmupSeconds()) + " s warm-up (other keys) + " + fmt(options.measureSeconds())
                + " s measured, " + options.repetitions() + " repetitions, medians shown; subjects interleaved, their "
                + "order rotated every repetition |");
        line("| Keys | spread: " + options.keys() + " per phase, fresh each phase, each thread cycling through its own "
                + "slice; hot: one key |");
        line("| Limits | throughput: " + throughputLimits() + " (set so that nothing is rejected); memory: "
                + Workloads.describe(Workloads.MEMORY_LIMITS) + ", "
                + options.memoryCalls().stream().map(String::valueOf).collect(Collectors.joining(" / "))
                + " call(s) per key, calls to a key at least "
                + MemoryProbe.MIN_PASS_NANOS / 1_000_000 + " ms apart |");
        line("");
    }

    /** @return the throughput limits, per subject where they differ */
    private String throughputLimits() {
        Map<String, List<String>> bySet = new LinkedHashMap<>();
        for (Subject s : subjects) {
            bySet.computeIfAbsent(Workloads.describe(s.throughputLimits()), k -> new ArrayList<>())
                    .add(s.label());
        }
        if (bySet.size() == 1) {
            return bySet.keySet().iterator().next();
        }
        List<String> parts = new ArrayList<>();
        bySet.forEach((limits, labels) -> parts.add(String.join(", ", labels) + ": " + limits));
        return String.join("; ", parts);
    }

    private void summary() {
        line("## Throughput, latency and round trips (medians)");
        line("");
        line(
                "| Scenario | Subject | reps used | decisions/s | p50 µs | p99 µs | client CPU µs/decision "
                        + "| Redis CPU µs/decision | round trips/decision | replies/decision | commands inside scripts/decision "
                        + "| store's round trips/decision | retries/decision | first uses/decision | rejected | store failures |");
        line("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (Scenario scenario : Scenario.values()) {
            for (Subject subject : subjects) {
                List<Measurement> all = measurements.stream()
                        .filter(m -> m.subject().equals(subject.id()) && m.scenario() == scenario)
                        .toList();
                if (all.isEmpty()) {
                    continue;
                }
                List<Measurement> ms = of(subject.id(), scenario);
                line("| " + scenario.label(options) + " | " + subject.label() + " | " + ms.size() + "/" + all.size()
                        + (ms.stream().allMatch(Report::clean) ? "" : " ⚠")
                        + " | " + fmt0(median(ms, Measurement::perSecond))
                        + " | " + fmt0(median(ms, Measurement::p50Micros))
                        + " | " + fmt0(median(ms, Measurement::p99Micros))
                        + " | " + fmt1(median(ms, Measurement::clientCpuMicros))
                        + " | " + fmt1(median(ms, Measurement::redisCpuMicros))
                        + " | " + fmt2(median(ms, Measurement::roundTripsPerDecision))
                        + " | " + fmt2(median(ms, Measurement::repliesPerDecision))
                        + " | " + fmt2(median(ms, Measurement::scriptCommandsPerDecision))
                        + " | " + fmt2(median(ms, Measurement::storeRoundTripsPerDecision))
                        + " | " + fmt3(median(ms, Measurement::retriesPerDecision))
                        + " | " + fmt3(median(ms, Measurement::newKeysPerDecision))
                        + " | " + all.stream().mapToLong(Measurement::rejected).sum()
                        + " | "
                        + all.stream().mapToLong(Measurement::storeFailed).sum() + " |");
            }
        }
        line("");
        line("- *client CPU µs/decision*: this JVM's CPU time over the phase ÷ decisions (the subject's client work, "
                + "plus the load loop's small share). *Redis CPU µs/decision*: the server's `used_cpu_sys` + "
                + "`used_cpu_user` delta ÷ decisions. On a machine where client and Redis share few cores, these two "
                + "bound decisions/s more than latency does.");
        line("- *round trips/decision*: commands the clients sent, from `INFO commandstats` deltas over the measured "
                + "phase, ÷ decisions. Commandstats also counts the commands a Lua script runs inside an EVAL/EVALSHA, "
                + "so each subject's script-internal calls are left out: for the token bucket and stock Bucket4j its "
                + "scripts' GET/SET/PSETEX and the clock script's TIME are subtracted; the sliding scripts run no GET or "
                + "SET (but TIME in every decision), so for them it is EVALSHA + EVAL + GET + SET; the G20 anchors' clients send only EVALSHA, or (`envoy`) "
                + "one pipeline of INCRBY + PEXPIRE per decision, counted as one (see the subject classes).");
        line("- *replies/decision*: `total_writes_processed` delta ÷ decisions: the network round trips. Without "
                + "pipelining one reply is written per command sent, an independent cross-check of the round trips; with "
                + "our store's auto-pipelining (`ours`, `ours-log`, `ours-counter`) one write answers a whole pipeline, "
                + "so the figure is below the commands sent.");
        line("- *commands inside scripts/decision*: every command commandstats counted, less the round trips and the "
                + "snapshots' and connections' own (INFO, HELLO, CLIENT, PING, ...), ÷ decisions: what the scripts ran "
                + "(GET, SET, TIME, the sorted-set or hash commands, PEXPIRE).");
        line("- *store's round trips/decision*: the store's own `stats().roundTrips`; only our store keeps one.");
        for (Subject subject : subjects) {
            line("- *retries/decision*, " + subject.label() + ": " + subject.retriesSource() + ".");
        }
        line(
                "- *first uses/decision*: share of decisions that were a key's first use (every phase starts on fresh keys).");
        line("- *reps used*: the medians (here and below) use only clean repetitions: no decision rejected, none made "
                + "without Redis. ⚠: none was clean, so all were used and the row is not the store's figure.");
        line("- *rejected*, *store failures*: totals over all repetitions; both should be 0 (a store failure is a "
                + "decision made without Redis, e.g. fail-open after a timeout or while the circuit breaker is open, "
                + "or an exception).");
        line("");
    }

    /** G20: the server's CPU and the commands it ran per decision, for every subject, beside the anchors. */
    private void cpu() {
        line("## Redis CPU and commands per decision (G20, medians)");
        line("");
        line("| Scenario | Subject | reps used | decisions/s | Redis CPU µs/decision | Redis CPU ÷ ours "
                + "| commands sent/decision | commands inside scripts/decision | all commands/decision "
                + "| round trips/decision | replies/decision | commands by name, per decision |");
        line("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
        for (Scenario scenario : Scenario.values()) {
            double oursCpu = median(of(Options.OURS, scenario), Measurement::redisCpuMicros);
            for (Subject subject : subjects) {
                List<Measurement> ms = of(subject.id(), scenario);
                if (ms.isEmpty()) {
                    continue;
                }
                long all = measurements.stream()
                        .filter(m -> m.subject().equals(subject.id()) && m.scenario() == scenario)
                        .count();
                double cpu = median(ms, Measurement::redisCpuMicros);
                line("| " + scenario.label(options) + " | " + subject.label() + " | " + ms.size() + "/" + all
                        + (ms.stream().allMatch(Report::clean) ? "" : " ⚠")
                        + " | " + fmt0(median(ms, Measurement::perSecond))
                        + " | " + fmt1(cpu)
                        + " | " + fmt2(ratio(cpu, oursCpu))
                        + " | " + fmt2(median(ms, Measurement::clientCommandsPerDecision))
                        + " | " + fmt2(median(ms, Measurement::scriptCommandsPerDecision))
                        + " | "
                        + fmt2(median(
                                ms,
                                m -> perDecision(
                                        m,
                                        m.commandCalls().values().stream()
                                                .mapToLong(Long::longValue)
                                                .sum())))
                        + " | " + fmt2(median(ms, Measurement::roundTripsPerDecision))
                        + " | " + fmt2(median(ms, Measurement::repliesPerDecision))
                        + " | " + commandMix(ms) + " |");
            }
        }
        line("");
        line("- *Redis CPU µs/decision*: the server's `used_cpu_sys` + `used_cpu_user` delta over the measured phase "
                + "(`INFO`) ÷ decisions; the medians use only repetitions in which Redis permitted every decision (see "
                + "*reps used*), so it is also the CPU per permitted decision. It includes the two `INFO` snapshots "
                + "and, for our store, its clock script (once every 10 s). *÷ ours*: ÷ `ours` (token bucket) in the "
                + "same scenario. On a shared machine absolute figures are noisy; compare within one run.");
        line("- *commands sent/decision*: commands the clients sent (EVALSHA; INCRBY and PEXPIRE for `envoy`), from "
                + "commandstats; *commands inside scripts/decision*: what the scripts ran (TIME, GET, SET, SETEX, "
                + "the sorted-set and hash commands, PEXPIRE); *all commands/decision*: both, every commandstats call "
                + "but the snapshots' and connections' housekeeping (INFO, HELLO, CLIENT, PING, SCRIPT, ...).");
        line("- *round trips/decision*: as above; `envoy` sends a decision's two commands as one pipeline, counted as "
                + "one round trip. *replies/decision* cross-checks it (our store's auto-pipelining answers several "
                + "decisions with one write, so its figure is lower).");
        List<String> anchors = subjects.stream()
                .filter(s -> s instanceof JedisAnchorSubject)
                .map(Subject::id)
                .toList();
        if (!anchors.isEmpty()) {
            line("- Windows: the anchors (" + String.join(", ", anchors) + ") decide one window, "
                    + Workloads.describe(Workloads.THROUGHPUT_LIMITS.subList(0, 1)) + "; our store's subjects decide "
                    + "all of their rule's windows at once (see *Limits* above).");
        }
        line("");
    }

    /** @return the calls of each command per decision (medians), e.g. {@code evalsha 1.00, get 1.00, time 1.00} */
    private static String commandMix(List<Measurement> ms) {
        Set<String> names = new TreeSet<>();
        ms.forEach(m -> names.addAll(m.commandCalls().keySet()));
        List<String> parts = new ArrayList<>();
        for (String name : names) {
            double v = median(ms, m -> perDecision(m, m.commandCalls().getOrDefault(name, 0L)));
            if (v >= 0.005) {
                parts.add(name + " " + fmt2(v));
            }
        }
        return parts.isEmpty() ? "–" : String.join(", ", parts);
    }

    private static double perDecision(Measurement m, long count) {
        return (double) count / Math.max(1, m.decisions());
    }

    private void ratios() {
        line("## Ratios (of medians)");
        line("");
        StringBuilder head = new StringBuilder("| |");
        StringBuilder rule = new StringBuilder("|---|");
        for (Subject s : subjects) {
            head.append(' ').append(s.label()).append(" |");
            rule.append("---:|");
        }
        line(head.toString());
        line(rule.toString());
        ratioRow(
                "hot key ÷ spread keys, " + options.threads() + " threads",
                s -> ratio(rate(s.id(), Scenario.THREADS_HOT), rate(s.id(), Scenario.THREADS_SPREAD)));
        ratioRow(
                options.threads() + " threads ÷ 1 thread, spread keys",
                s -> ratio(rate(s.id(), Scenario.THREADS_SPREAD), rate(s.id(), Scenario.ONE_THREAD_SPREAD)));
        for (Scenario scenario : Scenario.values()) {
            ratioRow(
                    "ours ÷ this subject, " + scenario.label(options),
                    s -> ratio(rate(Options.OURS, scenario), rate(s.id(), scenario)));
        }
        line("");
    }

    private void ratioRow(String label, ToDoubleFunction<Subject> value) {
        StringBuilder row = new StringBuilder("| " + label + " |");
        for (Subject s : subjects) {
            row.append(' ').append(fmt2(value.applyAsDouble(s))).append(" |");
        }
        line(row.toString());
    }

    private void goals() {
        line("## Goals (docs/BENCHMARKS.md)");
        line("");
        line("| Goal | Measure | Measured | Target | Met |");
        line("|---|---|---|---|---|");
        double oursSpread = rate(Options.OURS, Scenario.THREADS_SPREAD);
        double g4Base = baseline.isEmpty()
                ? Double.NaN
                : median(baseline.stream()
                        .mapToDouble(RedisBenchmarkBaseline.Result::perSecond)
                        .toArray());
        double g4 = ratio(oursSpread, g4Base);
        boolean g4Clean = baseline.stream().allMatch(r -> r.evalshaFailed() == 0);
        line("| G4 | ours, " + options.threads() + " threads, spread keys ÷ redis-benchmark EVALSHA token bucket, "
                + options.threads() + " clients | "
                + (Double.isNaN(g4)
                        ? "not measured"
                        : fmt2(g4) + " (" + fmt0(oursSpread) + " ÷ " + fmt0(g4Base) + " /s)"
                                + (g4Clean ? "" : ", baseline had failed EVALSHAs"))
                + " | ≥ 1.5 | " + met(g4, g4 >= 1.5) + " |");
        if (!baseline.isEmpty()) {
            double baseCpu = median(baseline.stream()
                    .mapToDouble(RedisBenchmarkBaseline.Result::redisCpuMicros)
                    .toArray());
            List<Measurement> ms = of(Options.OURS, Scenario.THREADS_SPREAD);
            notes.add("G4 context: Redis CPU per decision, ours " + fmt1(median(ms, Measurement::redisCpuMicros))
                    + " µs vs the baseline's " + fmt1(baseCpu) + " µs per EVALSHA; this JVM's CPU per decision, ours "
                    + fmt1(median(ms, Measurement::clientCpuMicros))
                    + " µs (redis-benchmark's own CPU is not measured).");
        }

        double rt1 = median(of(Options.OURS, Scenario.ONE_THREAD_SPREAD), Measurement::roundTripsPerDecision);
        double rtN = median(of(Options.OURS, Scenario.THREADS_SPREAD), Measurement::roundTripsPerDecision);
        double worst = Math.max(rt1, rtN);
        line("| G5 | ours, Redis round trips per decision (commandstats), spread keys, first uses included, 1 / "
                + options.threads() + " threads | " + fmt2(rt1) + " / " + fmt2(rtN) + " | ≤ 1.0 (at two decimals) | "
                + met(worst, Math.round(worst * 100) <= 100) + " |");

        double hot = ratio(rate(Options.OURS, Scenario.THREADS_HOT), rate(Options.OURS, Scenario.THREADS_SPREAD));
        double hotRetries = median(of(Options.OURS, Scenario.THREADS_HOT), Measurement::retriesPerDecision);
        double hotTrips = median(of(Options.OURS, Scenario.THREADS_HOT), Measurement::roundTripsPerDecision);
        line("| G6 | ours, hot key ÷ spread keys, " + options.threads() + " threads; retries and round trips per "
                + "decision on the hot key | " + fmt2(hot) + "; " + fmt3(hotRetries) + " retries, " + fmt2(hotTrips)
                + " round trips | ≥ 0.8 (retries shown, not judged) | " + met(hot, hot >= 0.8) + " |");

        MemoryProbe.Result ours = memory.stream()
                .filter(m -> m.subject().equals(Options.OURS))
                .min(Comparator.comparingInt(MemoryProbe.Result::callsPerKey))
                .orElse(null);
        if (ours == null) {
            line(
                    "| G11 | ours, Redis memory per key (2 limits), every key with a TTL | not measured | ≤ 330 B | not measured |");
        } else {
            double b = ours.bytesPerKey();
            line("| G11 | ours, Redis memory per key (2 limits), every key with a TTL | " + fmt0(b) + " B"
                    + (ours.callsPerKey() == 1 ? "" : " (" + ours.callsPerKey() + " calls per key)") + "; "
                    + ours.expiresCreated() + " of " + ours.keysCreated() + " new keys expire, PTTL > 0 on "
                    + ours.sampledWithTtl() + "/" + ours.sampled() + " sampled | ≤ 330 B, all | "
                    + met(b, b <= 330 && ours.everyKeyExpires()) + " |");
        }
        line("");
    }

    private void memory() {
        if (memory.isEmpty()) {
            return;
        }
        line("## Redis memory per key");
        line("");
        if (subjects.stream().anyMatch(s -> !s.memoryProbe())) {
            line("Not probed: "
                    + subjects.stream()
                            .filter(s -> !s.memoryProbe())
                            .map(Subject::id)
                            .collect(Collectors.joining(", "))
                    + " (G20 anchors: two keys per bucket, or one per window, so bytes per key would not compare).");
            line("");
        }
        line("`used_memory` delta over " + options.memoryKeys() + " fresh keys (limits "
                + Workloads.describe(Workloads.MEMORY_LIMITS)
                + "), each called the number of times shown (in passes over all keys, a pass starting at least "
                + MemoryProbe.MIN_PASS_NANOS / 1_000_000
                + " ms after the previous one), ÷ the keys created; each subject "
                + "and call count on a fresh Redis server of its own (unless --redis was given), keys laid out as the "
                + "example shows. Includes Redis's per-key overhead: dict entries, key and value allocations (jemalloc "
                + "size classes), the expiry entry, and the growth of the key and expiry tables (8 B per slot each, "
                + "doubling at powers of two: about 21 B/key at 100,000 keys, about 25 B/key at 10,000). MEMORY USAGE "
                + "leaves out the tables. *value*: the sampled keys' type and encoding, and the median over the sample "
                + "of its size (a string's bytes, a sorted set's entries, a hash's fields).");
        line("");
        line(
                "| Subject | calls per key | calls | rejected | keys created | with TTL | used_memory Δ | bytes/key "
                        + "| MEMORY USAGE (median of sample) | value | PTTL ms of sample (min – max) | seconds | example key |");
        line("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---|");
        for (MemoryProbe.Result m : memory) {
            line("| " + label(m.subject()) + " | " + m.callsPerKey() + " | " + m.keysWritten() + " | " + m.rejected()
                    + " | " + m.keysCreated() + " | " + m.expiresCreated()
                    + " | " + fmt0(m.usedMemoryDelta()) + " | " + fmt0(m.bytesPerKey()) + " | " + m.medianMemoryUsage()
                    + " | " + m.value() + " | " + m.minTtlMillis() + " – " + m.maxTtlMillis()
                    + " | " + fmt1(m.seconds()) + " | `" + m.exampleKey() + "` |");
            if (m.storeFailed() > 0) {
                notes.add("Memory probe, " + label(m.subject()) + ", " + m.callsPerKey() + " calls per key: "
                        + m.storeFailed() + " calls were decided without Redis, so fewer keys may have been created "
                        + "than written.");
            }
            if (m.expiredKeys() > 0) {
                notes.add("Memory probe, " + label(m.subject()) + ", " + m.callsPerKey() + " calls per key: Redis "
                        + "expired " + m.expiredKeys() + " keys while the probe made its calls, which makes the figure "
                        + "suspect.");
            }
            if (m.rejected() > 0) {
                notes.add("Memory probe, " + label(m.subject()) + ", " + m.callsPerKey() + " calls per key: "
                        + m.rejected() + " calls were rejected (a rejected call adds nothing to a sliding log).");
            }
            if (!m.everyKeyExpires()) {
                notes.add("Memory probe, " + label(m.subject()) + ", " + m.callsPerKey() + " calls per key: "
                        + m.expiresCreated() + " of " + m.keysCreated() + " new keys have a TTL, and "
                        + m.sampledWithTtl()
                        + " of " + m.sampled() + " sampled keys a positive PTTL (a key that expired before it was "
                        + "sampled, or one the probe looked up under the wrong name, shows as -2).");
            }
        }
        line("");
    }

    private void repetitions() {
        line("## Every repetition");
        line("");
        line("| Rep | Scenario | Subject | decisions | decisions/s | p50 µs | p99 µs | client CPU µs | Redis CPU µs "
                + "| round trips/decision | replies/decision | commands inside scripts/decision | retries/decision "
                + "| rejected | store failures |");
        line("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (Measurement m : measurements) {
            line("| " + m.round() + " | " + m.scenario().label(options) + " | " + label(m.subject()) + " | "
                    + m.decisions() + " | " + fmt0(m.perSecond()) + " | " + fmt0(m.p50Micros()) + " | "
                    + fmt0(m.p99Micros()) + " | " + fmt1(m.clientCpuMicros()) + " | " + fmt1(m.redisCpuMicros())
                    + " | " + fmt2(m.roundTripsPerDecision()) + " | "
                    + fmt2(m.repliesPerDecision()) + " | " + fmt2(m.scriptCommandsPerDecision()) + " | "
                    + fmt3(m.retriesPerDecision()) + " | " + m.rejected()
                    + " | " + m.storeFailed() + " |");
            if (m.store() != null && (m.store().failures() > 0 || m.store().shortCircuited() > 0)) {
                notes.add("Rep " + m.round() + ", " + m.scenario().label(options) + ", " + label(m.subject())
                        + ": the store counted " + m.store().failures() + " failed Redis operations (errors or "
                        + "timeouts) and " + m.store().shortCircuited() + " refused by its open circuit breaker; "
                        + m.storeFailed() + " of " + m.decisions() + " decisions were made without Redis.");
            }
            if (m.accountingProblem() != null) {
                notes.add("Rep " + m.round() + ", " + m.scenario().label(options) + ", " + label(m.subject())
                        + ": the round-trip accounting did not add up: " + m.accountingProblem() + ".");
            }
            if (m.firstError() != null) {
                notes.add("Rep " + m.round() + ", " + m.scenario().label(options) + ", " + label(m.subject())
                        + ": calls threw, first: `" + m.firstError() + "`");
            }
        }
        for (int i = 0; i < baseline.size(); i++) {
            RedisBenchmarkBaseline.Result r = baseline.get(i);
            line("| " + (i + 1) + " | G4 baseline, " + options.threads()
                    + " clients, spread keys | redis-benchmark EVALSHA "
                    + "token bucket | " + r.requests() + " | " + fmt0(r.perSecond()) + " | | | | "
                    + fmt1(r.redisCpuMicros()) + " | 1 (EVALSHA) | | | | | " + r.evalshaFailed() + " |");
            if (r.evalshaFailed() > 0 || r.evalshaCalls() < r.requests()) {
                notes.add("G4 baseline rep " + (i + 1) + ": the server counted " + r.evalshaCalls() + " EVALSHA calls ("
                        + r.evalshaFailed() + " failed) for " + r.requests()
                        + " requests; its requests/s are suspect.");
            }
        }
        line("");
    }

    private void notes() {
        for (Subject s : subjects) {
            for (Scenario scenario : Scenario.values()) {
                List<Measurement> ms = of(s.id(), scenario);
                double rt = median(ms, Measurement::roundTripsPerDecision);
                double replies = median(ms, Measurement::repliesPerDecision);
                if (!ms.isEmpty() && !s.pipelines() && Math.abs(rt - replies) > 0.05 * Math.max(rt, replies)) {
                    notes.add(s.label() + ", " + scenario.label(options) + ": round trips from commandstats ("
                            + fmt2(rt) + ") and replies written (" + fmt2(replies) + ") differ by more than 5%.");
                }
                long unclean = measurements.stream()
                        .filter(m -> m.subject().equals(s.id()) && m.scenario() == scenario && !clean(m))
                        .count();
                if (unclean > 0) {
                    notes.add(
                            s.label() + ", " + scenario.label(options) + ": " + unclean + " repetition(s) had rejected "
                                    + "or store-failed decisions and are left out of the medians"
                                    + (ms.stream().allMatch(Report::clean)
                                            ? "."
                                            : "; no repetition was clean, so the medians include them and are not the store's."));
                }
            }
        }
        if (options.repetitions() < 3) {
            notes.add("Fewer than 3 repetitions: the medians are not figures to quote.");
        }
        line("## Notes");
        line("");
        if (notes.isEmpty()) {
            line("None: no rejections, no store failures, no exceptions, and the two round-trip counts agree.");
        } else {
            notes.forEach(n -> line("- " + n));
        }
        line("");
    }

    // ---- helpers

    /** The clean repetitions of a subject and scenario, or all of them when none is clean. */
    private List<Measurement> of(String subject, Scenario scenario) {
        List<Measurement> all = measurements.stream()
                .filter(m -> m.subject().equals(subject) && m.scenario() == scenario)
                .toList();
        List<Measurement> clean = all.stream().filter(Report::clean).toList();
        return clean.isEmpty() ? all : clean;
    }

    private static boolean clean(Measurement m) {
        return m.rejected() == 0 && m.storeFailed() == 0;
    }

    private double rate(String subject, Scenario scenario) {
        return median(of(subject, scenario), Measurement::perSecond);
    }

    private String label(String id) {
        return subjects.stream()
                .filter(s -> s.id().equals(id))
                .map(Subject::label)
                .findFirst()
                .orElse(id);
    }

    private static double median(List<Measurement> ms, ToDoubleFunction<Measurement> f) {
        return median(ms.stream().mapToDouble(f).toArray());
    }

    static double median(double[] values) {
        double[] v =
                Arrays.stream(values).filter(d -> !Double.isNaN(d)).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        int mid = v.length / 2;
        return v.length % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
    }

    private static double ratio(double a, double b) {
        return Double.isNaN(a) || Double.isNaN(b) || b == 0 ? Double.NaN : a / b;
    }

    private static String met(double value, boolean ok) {
        return Double.isNaN(value) ? "not measured" : ok ? "yes" : "**no**";
    }

    private static String fmt(double v) {
        return v == Math.rint(v) ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%s", v);
    }

    private static String fmt0(double v) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%,.0f", v);
    }

    private static String fmt1(double v) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%.1f", v);
    }

    private static String fmt2(double v) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%.2f", v);
    }

    private static String fmt3(double v) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%.3f", v);
    }

    private void line(String text) {
        out.append(text).append('\n');
    }
}
