package io.github.ratelimit.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * G1 in one command: runs {@link LocalDecisionBenchmark} in interleaved rounds (every round runs each benchmark
 * once, in one fork, so baseline and subject alternate through the run) and prints per round and as the median
 * of the rounds: (c) core global ÷ (a) bare one bucket, and (d) core ip ÷ (b) bare keyed.
 *
 * <pre>
 * java -cp benchmarks.jar io.github.ratelimit.benchmarks.LocalDecisionRatios [--rounds 3] [--threads 1,2] [JMH options]
 * </pre>
 *
 * JMH options (such as {@code -wi 2 -i 3 -w 1s -r 1s -prof gc}) pass through; {@code -f} defaults to 1 per round.
 */
public final class LocalDecisionRatios {

    private static final String A = "a_bareOneBucket";
    private static final String B = "b_bareKeyed";
    private static final String C = "c_coreGlobal";
    private static final String D = "d_coreIp";
    private static final String E = "e_bareVerboseOneBucket";
    private static final List<String> ORDER = List.of(A, B, C, D, E);
    private static final double GOAL = 0.5;

    private LocalDecisionRatios() {}

    public static void main(String[] args) throws RunnerException, CommandLineOptionException {
        int rounds = 3;
        int[] threadCounts = {1};
        List<String> jmhArgs = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--threads" ->
                    threadCounts = Arrays.stream(args[++i].split(","))
                            .mapToInt(s -> Integer.parseInt(s.trim()))
                            .toArray();
                default -> jmhArgs.add(args[i]);
            }
        }
        CommandLineOptions cmd = new CommandLineOptions(jmhArgs.toArray(String[]::new));

        // thread count -> round -> benchmark -> [ops/s, B/op or NaN]
        Map<Integer, List<Map<String, double[]>>> all = new LinkedHashMap<>();
        for (int round = 1; round <= rounds; round++) {
            for (int threads : threadCounts) {
                OptionsBuilder builder = new OptionsBuilder();
                builder.parent(cmd).threads(threads);
                if (cmd.getIncludes().isEmpty()) {
                    builder.include(LocalDecisionBenchmark.class.getName() + "\\.");
                }
                if (!cmd.getForkCount().hasValue()) {
                    builder.forks(1);
                }
                System.out.printf(Locale.ROOT, "%n### G1 round %d of %d, %d thread(s)%n", round, rounds, threads);
                Collection<RunResult> results = new Runner(builder.build()).run();
                Map<String, double[]> scores = new LinkedHashMap<>();
                for (RunResult r : results) {
                    String benchmark = r.getParams().getBenchmark();
                    String method = benchmark.substring(benchmark.lastIndexOf('.') + 1);
                    Result<?> alloc = r.getSecondaryResults().get("gc.alloc.rate.norm");
                    scores.put(method, new double[] {
                        r.getPrimaryResult().getScore(), alloc == null ? Double.NaN : alloc.getScore()
                    });
                }
                all.computeIfAbsent(threads, t -> new ArrayList<>()).add(scores);
            }
        }
        print(all);
    }

    private static void print(Map<Integer, List<Map<String, double[]>>> all) {
        System.out.println();
        System.out.println("=== G1: local decisions/s, core API / bare Bucket4j (same run, rounds interleaved) ===");
        for (Map.Entry<Integer, List<Map<String, double[]>>> entry : all.entrySet()) {
            List<Map<String, double[]>> rounds = entry.getValue();
            System.out.printf(Locale.ROOT, "%nthreads=%d%n", entry.getKey());
            StringBuilder header = new StringBuilder(String.format(Locale.ROOT, "%-7s", "round"));
            for (String name : ORDER) {
                header.append(String.format(Locale.ROOT, " %24s", name));
            }
            header.append(String.format(Locale.ROOT, " %8s %8s", "c/a", "d/b"));
            System.out.println(header);
            List<Double> ca = new ArrayList<>();
            List<Double> db = new ArrayList<>();
            for (int i = 0; i < rounds.size(); i++) {
                Map<String, double[]> s = rounds.get(i);
                StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%-7d", i + 1));
                for (String name : ORDER) {
                    double[] v = s.get(name);
                    line.append(String.format(
                            Locale.ROOT, " %24s", v == null ? "-" : String.format(Locale.ROOT, "%,.0f ops/s", v[0])));
                }
                double rca = ratio(s, C, A);
                double rdb = ratio(s, D, B);
                if (!Double.isNaN(rca)) {
                    ca.add(rca);
                }
                if (!Double.isNaN(rdb)) {
                    db.add(rdb);
                }
                line.append(String.format(Locale.ROOT, " %8.3f %8.3f", rca, rdb));
                System.out.println(line);
            }
            Map<String, double[]> last = rounds.get(rounds.size() - 1);
            if (last.values().stream().anyMatch(v -> !Double.isNaN(v[1]))) {
                StringBuilder alloc = new StringBuilder(String.format(Locale.ROOT, "%-7s", "B/op"));
                for (String name : ORDER) {
                    double[] v = last.get(name);
                    alloc.append(String.format(
                            Locale.ROOT,
                            " %24s",
                            v == null || Double.isNaN(v[1]) ? "-" : String.format(Locale.ROOT, "%.1f", v[1])));
                }
                System.out.println(alloc + "   (gc.alloc.rate.norm, last round)");
            }
            double mca = median(ca);
            double mdb = median(db);
            System.out.printf(
                    Locale.ROOT,
                    "median of %d round(s): c/a = %.3f %s, d/b = %.3f %s (G1 goal >= %.1f)%n",
                    rounds.size(),
                    mca,
                    verdict(mca),
                    mdb,
                    verdict(mdb),
                    GOAL);
        }
    }

    private static double ratio(Map<String, double[]> s, String num, String den) {
        double[] n = s.get(num);
        double[] d = s.get(den);
        return n == null || d == null ? Double.NaN : n[0] / d[0];
    }

    private static String verdict(double ratio) {
        return Double.isNaN(ratio) ? "" : ratio >= GOAL ? "[meets]" : "[misses]";
    }

    private static double median(List<Double> values) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }
}
