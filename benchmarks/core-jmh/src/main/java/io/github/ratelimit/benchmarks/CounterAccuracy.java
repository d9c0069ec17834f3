package io.github.ratelimit.benchmarks;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Limit;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.store.LocalBucketStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * How many calls each algorithm admits within a rolling window, on one bursty arrival trace: the sliding window
 * counter's over-admission against the exact sliding log, with the fixed window and the token bucket beside them.
 * Not a JMH benchmark: it measures admissions, not time, on a manual clock (no call waits).
 *
 * <p>The trace is generated from a seed: the client alternates between active spells (exponential, mean
 * {@value #ACTIVE_MEAN_S} s) and idle ones (exponential, mean {@value #IDLE_MEAN_S} s); while active, bursts start
 * at exponential gaps (mean {@value #BURST_GAP_MEAN_S} s), each of 1–10 calls (half of them), 10–50 (35 %) or
 * 50–200 (15 %), the calls of a burst at exponential gaps (mean {@value #CALL_GAP_MEAN_MS} ms). Every algorithm
 * sees the same arrivals, each through its own {@link RateLimiter} with a {@link LocalBucketStore}, both on a
 * manual wall clock set to each arrival's time, one {@code global} key, {@link Mode#HARD}. Only the public API.
 *
 * <p>For each limit of the rule, from the times of the admitted calls: the most admitted within any rolling window
 * of the limit's period (any {@code (t - period, t]}, the window the sliding log enforces), that ÷ the limit, and
 * the over-admission, {@code max(0, most ÷ limit - 1)}; also the admitted calls that found the limit's count
 * already reached within the period before them (each one an admission beyond the exact limit).
 *
 * <pre>
 * java -cp benchmarks/core-jmh/target/benchmarks.jar io.github.ratelimit.benchmarks.CounterAccuracy [seed=20261123] [minutes=120] [bursts=20]
 * </pre>
 * {@code bursts} is how many of the trace's bursts to print ({@code all} for every one). It also checks the sliding
 * algorithms' admissions against the documented arithmetic written again here ({@link #reference}), so an
 * over-admission can be told from a bug. Exits with status 1 when the sliding log admitted more than its limit
 * within any window (it must not).
 */
public final class CounterAccuracy {

    static final double ACTIVE_MEAN_S = 120;
    static final double IDLE_MEAN_S = 45;
    static final double BURST_GAP_MEAN_S = 6;
    static final double CALL_GAP_MEAN_MS = 20;

    /** The rules the trace goes through, each with every algorithm. */
    private static final List<List<String>> RULES = List.of(List.of("100/1m"), List.of("5/1s", "100/1m"));

    private static final List<Algorithm> ALGORITHMS = List.of(
            Algorithm.SLIDING_WINDOW_LOG,
            Algorithm.SLIDING_WINDOW_COUNTER,
            Algorithm.FIXED_WINDOW,
            Algorithm.TOKEN_BUCKET);

    /** A whole minute, hour and day, so the fixed windows start with the trace. */
    private static final Instant START = Instant.parse("2026-11-23T00:00:00Z");

    private CounterAccuracy() {}

    /** A wall clock that shows what it was last set to. One thread. */
    static final class ManualClock implements TimeMeter {
        private long nanos;

        ManualClock(Instant start) {
            this.nanos = start.getEpochSecond() * 1_000_000_000L + start.getNano();
        }

        @Override
        public long currentTimeNanos() {
            return nanos;
        }

        @Override
        public boolean isWallClockBased() {
            return true;
        }

        void set(long epochNanos) {
            if (epochNanos < nanos) {
                throw new IllegalArgumentException("time must not go back");
            }
            nanos = epochNanos;
        }
    }

    /** A burst of the trace: when it starts (ns after the trace's start) and its calls. */
    record Burst(long startNanos, int calls, long spanNanos) {}

    public static void main(String[] args) {
        long seed = args.length > 0 ? Long.parseLong(args[0]) : 20261123L;
        int minutes = args.length > 1 ? Integer.parseInt(args[1]) : 120;
        int showBursts = args.length > 2 ? (args[2].equals("all") ? Integer.MAX_VALUE : Integer.parseInt(args[2])) : 20;

        List<Burst> bursts = new ArrayList<>();
        long[] arrivals = trace(seed, minutes * 60_000_000_000L, bursts);
        printTrace(seed, minutes, arrivals, bursts, showBursts);

        boolean logExact = true;
        List<String> checks = new ArrayList<>();
        for (List<String> rule : RULES) {
            List<Limit> limits = rule.stream().map(Limit::parse).toList();
            System.out.printf(Locale.ROOT, "%n## Rule %s%n%n", String.join(" + ", rule));
            StringBuilder head = new StringBuilder("| Algorithm | admitted | admitted ÷ log's |");
            StringBuilder line = new StringBuilder("|---|---:|---:|");
            for (Limit limit : limits) {
                String w = limit.toString();
                head.append(" most in any ")
                        .append(
                                limit.period().toMillis() >= 60_000
                                        ? limit.period().toMinutes() + " min"
                                        : limit.period().toMillis() + " ms")
                        .append(" (limit ")
                        .append(limit.permits())
                        .append(") | ÷ limit | over-admission ")
                        .append(w)
                        .append(" | admissions beyond ")
                        .append(w)
                        .append(" |");
                line.append("---:|---:|---:|---:|");
            }
            System.out.println(head);
            System.out.println(line);
            long logAdmitted = -1;
            for (Algorithm algorithm : ALGORITHMS) {
                long[] admitted = run(algorithm, rule, arrivals);
                if (algorithm.isSliding()) {
                    long[] expected = reference(algorithm, limits, arrivals);
                    checks.add(String.format(
                            Locale.ROOT,
                            "%s, %s: the limiter admitted %s the calls the reference "
                                    + "arithmetic admits (%,d vs %,d)",
                            algorithm,
                            String.join(" + ", rule),
                            Arrays.equals(admitted, expected) ? "exactly" : "NOT exactly",
                            admitted.length,
                            expected.length));
                }
                if (algorithm == Algorithm.SLIDING_WINDOW_LOG) {
                    logAdmitted = admitted.length;
                }
                StringBuilder row = new StringBuilder();
                row.append("| ")
                        .append(algorithm)
                        .append(" | ")
                        .append(String.format(Locale.ROOT, "%,d", admitted.length))
                        .append(" | ")
                        .append(String.format(Locale.ROOT, "%.3f", (double) admitted.length / logAdmitted))
                        .append(" |");
                for (Limit limit : limits) {
                    long period = limit.period().toNanos();
                    int most = mostInWindow(admitted, period);
                    long beyond = admissionsBeyond(admitted, period, limit.permits());
                    double ratio = (double) most / limit.permits();
                    row.append(String.format(
                            Locale.ROOT,
                            " %d | %.3f | %.1f %% | %,d |",
                            most,
                            ratio,
                            Math.max(0, ratio - 1) * 100,
                            beyond));
                    if (algorithm == Algorithm.SLIDING_WINDOW_LOG && most > limit.permits()) {
                        logExact = false;
                    }
                }
                System.out.println(row);
            }
        }
        System.out.println();
        checks.forEach(System.out::println);
        System.out.println(
                logExact
                        ? "SLIDING_WINDOW_LOG: never more than the limit within any window (exact)"
                        : "SLIDING_WINDOW_LOG: ADMITTED MORE THAN THE LIMIT within some window: a bug");
        System.exit(logExact ? 0 : 1);
    }

    /**
     * @return the arrival times, ns after the trace's start, ascending; {@code bursts} gets each burst
     */
    static long[] trace(long seed, long lengthNanos, List<Burst> bursts) {
        SplittableRandom random = new SplittableRandom(seed);
        long[] times = new long[1024];
        int n = 0;
        long t = 0;
        while (t < lengthNanos) {
            long activeEnd = t + exponentialNanos(random, ACTIVE_MEAN_S * 1e9);
            t += exponentialNanos(random, BURST_GAP_MEAN_S * 1e9);
            while (t < activeEnd && t < lengthNanos) {
                double kind = random.nextDouble();
                int size = kind < 0.50
                        ? random.nextInt(1, 11)
                        : kind < 0.85 ? random.nextInt(10, 51) : random.nextInt(50, 201);
                long at = t;
                for (int i = 0; i < size; i++) {
                    if (i > 0) {
                        at += Math.max(1, exponentialNanos(random, CALL_GAP_MEAN_MS * 1e6));
                    }
                    if (n == times.length) {
                        times = Arrays.copyOf(times, n * 2);
                    }
                    times[n++] = at;
                }
                bursts.add(new Burst(t, size, at - t));
                // The next burst starts after this one ended.
                t = at + exponentialNanos(random, BURST_GAP_MEAN_S * 1e9);
            }
            t = Math.max(t, activeEnd) + exponentialNanos(random, IDLE_MEAN_S * 1e9);
        }
        return Arrays.copyOf(times, n);
    }

    private static long exponentialNanos(SplittableRandom random, double meanNanos) {
        return (long) (-Math.log(1 - random.nextDouble()) * meanNanos);
    }

    /**
     * @return the times of the calls the algorithm admitted, ns after the trace's start
     */
    static long[] run(Algorithm algorithm, List<String> limits, long[] arrivals) {
        ManualClock clock = new ManualClock(START);
        long origin = clock.currentTimeNanos();
        LocalBucketStore store = LocalBucketStore.builder().timeMeter(clock).build();
        try (RateLimiter limiter =
                RateLimiter.builder().store(store).timeMeter(clock).build()) {
            Guard guard = limiter.guard(Rule.builder("accuracy")
                    .key("global")
                    .limits(limits.toArray(String[]::new))
                    .algorithm(algorithm)
                    .mode(Mode.HARD)
                    .build());
            RequestContext context = RequestContext.builder().build();
            long[] admitted = new long[arrivals.length];
            int n = 0;
            for (long at : arrivals) {
                clock.set(origin + at);
                Decision d = guard.acquire(context);
                if (d.permitted()) {
                    if (d.delayNanos() != 0) {
                        throw new IllegalStateException("a HARD rule delayed a call: " + d);
                    }
                    admitted[n++] = at;
                }
            }
            return Arrays.copyOf(admitted, n);
        }
    }

    /**
     * The documented arithmetic, written again here independently of the library, to tell the algorithm's own
     * over-admission from a bug: the log admits a call when every window's admitted calls within
     * {@code (t - period, t]}, plus it, are at most the limit; the counter when, for every window, the count of the
     * current clock-aligned interval plus the previous interval's count weighted by the share of it the sliding
     * window still covers, plus the call, is at most the limit.
     *
     * @return the times of the calls the algorithm should admit
     */
    static long[] reference(Algorithm algorithm, List<Limit> limits, long[] arrivals) {
        long origin = START.getEpochSecond() * 1_000_000_000L;
        long[] admitted = new long[arrivals.length];
        int n = 0;
        List<Map<Long, Long>> counts = new ArrayList<>();
        for (int i = 0; i < limits.size(); i++) {
            counts.add(new HashMap<>());
        }
        for (long at : arrivals) {
            long t = origin + at;
            boolean fits = true;
            for (int i = 0; i < limits.size() && fits; i++) {
                long period = limits.get(i).period().toNanos();
                long permits = limits.get(i).permits();
                if (algorithm == Algorithm.SLIDING_WINDOW_LOG) {
                    long inWindow = 0;
                    for (int j = n - 1; j >= 0 && admitted[j] > at - period; j--) {
                        inWindow++;
                    }
                    fits = inWindow + 1 <= permits;
                } else {
                    long k = Math.floorDiv(t, period);
                    double covered = 1.0 - (double) (t - k * period) / period;
                    double load =
                            counts.get(i).getOrDefault(k, 0L) + counts.get(i).getOrDefault(k - 1, 0L) * covered;
                    fits = load + 1 <= permits + 1e-9;
                }
            }
            if (fits) {
                admitted[n++] = at;
                for (int i = 0; i < limits.size(); i++) {
                    counts.get(i).merge(Math.floorDiv(t, limits.get(i).period().toNanos()), 1L, Long::sum);
                }
            }
        }
        return Arrays.copyOf(admitted, n);
    }

    /** @return the most times within any {@code (t - period, t]} (times ascending) */
    static int mostInWindow(long[] times, long period) {
        int most = 0;
        int left = 0;
        for (int right = 0; right < times.length; right++) {
            while (times[left] <= times[right] - period) {
                left++;
            }
            most = Math.max(most, right - left + 1);
        }
        return most;
    }

    /** @return the times that find {@code limit} or more times within the period before them (up to and with themselves: above the limit) */
    static long admissionsBeyond(long[] times, long period, long limit) {
        long beyond = 0;
        int left = 0;
        for (int right = 0; right < times.length; right++) {
            while (times[left] <= times[right] - period) {
                left++;
            }
            if (right - left + 1 > limit) {
                beyond++;
            }
        }
        return beyond;
    }

    private static void printTrace(long seed, int minutes, long[] arrivals, List<Burst> bursts, int show) {
        System.out.println("# Sliding window counter accuracy");
        System.out.println();
        System.out.printf(
                Locale.ROOT,
                "Trace: seed %d, %d simulated minutes from %s; active spells exp(mean %.0f s), "
                        + "idle spells exp(mean %.0f s); bursts every exp(mean %.0f s) while active, of U[1,10] calls "
                        + "(50 %%), U[10,50] (35 %%) or U[50,200] (15 %%), calls exp(mean %.0f ms) apart.%n",
                seed,
                minutes,
                START,
                ACTIVE_MEAN_S,
                IDLE_MEAN_S,
                BURST_GAP_MEAN_S,
                CALL_GAP_MEAN_MS);
        long last = arrivals.length == 0 ? 0 : arrivals[arrivals.length - 1];
        int biggest = bursts.stream().mapToInt(Burst::calls).max().orElse(0);
        long checksum = 0;
        for (long a : arrivals) {
            checksum = checksum * 31 + a;
        }
        System.out.printf(
                Locale.ROOT,
                "%,d calls in %,d bursts (largest %d calls), last call at %.1f s, %.1f calls/min "
                        + "on average; checksum of arrival times %016x%n",
                arrivals.length,
                bursts.size(),
                biggest,
                last / 1e9,
                arrivals.length / (last / 60e9),
                checksum);
        int shown = Math.min(show, bursts.size());
        if (shown > 0) {
            StringBuilder sb = new StringBuilder(
                    "Bursts (start s: calls over span ms)" + (shown < bursts.size() ? ", first " + shown : "") + ":");
            for (int i = 0; i < shown; i++) {
                Burst b = bursts.get(i);
                sb.append(i % 6 == 0 ? "\n  " : "; ")
                        .append(String.format(
                                Locale.ROOT,
                                "%.3f: %d over %.0f",
                                b.startNanos() / 1e9,
                                b.calls(),
                                b.spanNanos() / 1e6));
            }
            System.out.println(sb);
        }
    }
}
