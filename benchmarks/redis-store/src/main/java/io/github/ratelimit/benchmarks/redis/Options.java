package io.github.ratelimit.benchmarks.redis;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Command-line settings. Flags are {@code --name value} or {@code --name=value}.
 *
 * @param measureSeconds length of each measured phase
 * @param warmupSeconds length of the warm-up before each measured phase (on other keys)
 * @param repetitions rounds; every round runs every subject and scenario once, interleaved
 * @param threads threads of the concurrent scenarios (and clients of redis-benchmark)
 * @param keys distinct keys of the spread-key scenarios, per phase
 * @param memoryKeys fresh keys written by the memory probe (0 skips it)
 * @param memoryCalls calls per key of the memory probe, one probe per entry (each on fresh keys)
 * @param redisUrl an existing Redis to use instead of starting one, or {@code null}
 * @param ourCommandTimeoutMillis our store's command timeout, or 0 for the store's default
 * @param subjects which subjects to run
 * @param output a file to write the Markdown report to as well, or {@code null}
 * @param args the arguments as given, for the report
 */
record Options(
        double measureSeconds,
        double warmupSeconds,
        int repetitions,
        int threads,
        int keys,
        int memoryKeys,
        List<Integer> memoryCalls,
        String redisUrl,
        int ourCommandTimeoutMillis,
        Set<String> subjects,
        Path output,
        List<String> args) {

    static final String OURS = "ours";
    static final String OURS_DIRECT = "ours-direct";
    static final String OURS_LOG = "ours-log";
    static final String OURS_COUNTER = "ours-counter";
    static final String OURS_FIXED = "ours-fixed";
    static final String STOCK = "stock";
    static final String STOCK_BATCHING = "stock-batching";
    static final String SCG = "scg";
    static final String GCRA = "gcra";
    static final String ENVOY = "envoy";
    /** Every subject, in the order the report lists them. */
    static final List<String> ALL_SUBJECTS =
            List.of(OURS, OURS_DIRECT, OURS_LOG, OURS_COUNTER, OURS_FIXED, STOCK, STOCK_BATCHING, SCG, GCRA, ENVOY);
    /** The subjects run without {@code --subjects}. */
    static final List<String> DEFAULT_SUBJECTS =
            List.of(OURS, OURS_DIRECT, OURS_LOG, OURS_COUNTER, STOCK, STOCK_BATCHING);

    static final String USAGE = """
            Usage: java -jar redis-store-benchmark.jar [options]

              --seconds N       measured seconds per phase (default 5)
              --warmup N        warm-up seconds before each measured phase, on other keys (default 3)
              --reps N          repetitions (rounds), median reported; at least 3 for figures you quote (default 3)
              --threads N       threads of the concurrent scenarios and redis-benchmark clients (default 8)
              --keys N          distinct keys of the spread-key scenarios, fresh in every phase (default 10000)
              --memory-keys N   fresh keys written to measure Redis memory per key; 0 skips (default 100000)
              --memory-calls L  comma-separated calls per key of the memory probe, one probe each, on fresh keys;
                                calls to one key are at least 0.5 s apart (default 1)
              --redis URL       use this Redis (redis://host:port[/db]) instead of starting one; its other data is
                                left alone, but it must be otherwise idle for the figures to mean anything
              --our-timeout MS  our store's command timeout in ms (default: the store's default, 50 ms)
              --subjects LIST   comma-separated, of ours,ours-direct,ours-log,ours-counter,ours-fixed,stock,
                                stock-batching,scg,gcra,envoy (default ours,ours-direct,ours-log,ours-counter,
                                stock,stock-batching); ours is our store with a token bucket rule, ours-direct the
                                same with auto-pipelining off, ours-log, ours-counter and ours-fixed the same store
                                with a SLIDING_WINDOW_LOG, SLIDING_WINDOW_COUNTER and FIXED_WINDOW rule; scg, gcra
                                and envoy are the G20 anchors over Jedis: a Spring-Cloud-Gateway-style token bucket
                                script (2 keys), a GCRA script (1 key), Envoy's INCRBY + PEXPIRE fixed window
              --out FILE        also write the Markdown report to FILE
              --help            this text
            """;

    static Options parse(String[] argv) {
        double seconds = 5;
        double warmup = 3;
        int reps = 3;
        int threads = 8;
        int keys = 10_000;
        int memoryKeys = 100_000;
        List<Integer> memoryCalls = List.of(1);
        String redis = null;
        int ourTimeout = 0;
        Set<String> subjects = new LinkedHashSet<>(DEFAULT_SUBJECTS);
        Path output = null;
        List<String> args = List.of(argv);
        List<String> queue = new ArrayList<>();
        for (String arg : argv) {
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                queue.add(arg.substring(0, eq));
                queue.add(arg.substring(eq + 1));
            } else {
                queue.add(arg);
            }
        }
        for (int i = 0; i < queue.size(); i++) {
            String flag = queue.get(i);
            if (flag.equals("--help") || flag.equals("-h")) {
                throw new UsageException(null);
            }
            if (i + 1 >= queue.size()) {
                throw new UsageException("missing value after " + flag);
            }
            String value = queue.get(++i);
            switch (flag) {
                case "--seconds" -> seconds = positiveDouble(flag, value);
                case "--warmup" -> warmup = nonNegativeDouble(flag, value);
                case "--reps" -> reps = atLeast(flag, value, 1);
                case "--threads" -> threads = atLeast(flag, value, 2);
                case "--keys" -> keys = atLeast(flag, value, 1);
                case "--memory-keys" -> memoryKeys = atLeast(flag, value, 0);
                case "--memory-calls" -> memoryCalls = callCounts(flag, value);
                case "--redis" -> redis = value;
                case "--our-timeout" -> ourTimeout = atLeast(flag, value, 1);
                case "--subjects" -> subjects = subjects(value);
                case "--out" -> output = Path.of(value);
                default -> throw new UsageException("unknown option " + flag);
            }
        }
        if (keys < threads) {
            throw new UsageException("--keys (" + keys + ") must be at least --threads (" + threads + ")");
        }
        Set<String> ordered = new LinkedHashSet<>(ALL_SUBJECTS);
        ordered.retainAll(subjects);
        return new Options(
                seconds,
                warmup,
                reps,
                threads,
                keys,
                memoryKeys,
                memoryCalls,
                redis,
                ourTimeout,
                Collections.unmodifiableSet(ordered),
                output,
                args);
    }

    boolean runs(String subject) {
        return subjects.contains(subject);
    }

    private static Set<String> subjects(String value) {
        Set<String> result = new LinkedHashSet<>();
        for (String part : value.split(",")) {
            String s = part.trim().toLowerCase(Locale.ROOT);
            if (!ALL_SUBJECTS.contains(s)) {
                throw new UsageException("unknown subject '" + part + "'; use " + String.join(",", ALL_SUBJECTS));
            }
            result.add(s);
        }
        if (result.isEmpty()) {
            throw new UsageException("--subjects is empty");
        }
        return result;
    }

    private static List<Integer> callCounts(String flag, String value) {
        Set<Integer> counts = new LinkedHashSet<>();
        for (String part : value.split(",")) {
            counts.add(atLeast(flag, part.trim(), 1));
        }
        return List.copyOf(counts);
    }

    private static double positiveDouble(String flag, String value) {
        double d = number(flag, value);
        if (!(d > 0)) {
            throw new UsageException(flag + " must be above 0, but was " + value);
        }
        return d;
    }

    private static double nonNegativeDouble(String flag, String value) {
        double d = number(flag, value);
        if (!(d >= 0)) {
            throw new UsageException(flag + " must be 0 or more, but was " + value);
        }
        return d;
    }

    private static double number(String flag, String value) {
        try {
            return Double.parseDouble(value);
        } catch (NumberFormatException e) {
            throw new UsageException(flag + " needs a number, but was " + value);
        }
    }

    private static int atLeast(String flag, String value, int min) {
        int n;
        try {
            n = Integer.parseInt(value.replace("_", ""));
        } catch (NumberFormatException e) {
            throw new UsageException(flag + " needs a whole number, but was " + value);
        }
        if (n < min) {
            throw new UsageException(flag + " must be at least " + min + ", but was " + value);
        }
        return n;
    }

    /** A bad command line; {@code null} message means: print the usage only. */
    static final class UsageException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }
}
