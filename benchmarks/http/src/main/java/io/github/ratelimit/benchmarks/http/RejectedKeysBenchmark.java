package io.github.ratelimit.benchmarks.http;

import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.spring.boot.actuate.RejectedKeys;
import io.github.ratelimit.store.LocalBucketStore;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * What the Actuator endpoint's most-rejected-keys summary costs under a flood of distinct rejected keys: rejections
 * per second of a million distinct keys (each already spent), with the summary as a listener and without it,
 * interleaved over rounds, on 1 and 2 threads. In this package because the summary is the starter's own.
 *
 * <pre>java -Xmx3g -jar benchmarks/http/target/http-benchmark.jar rejected-keys [rounds]</pre>
 */
public final class RejectedKeysBenchmark {

    private static final int KEYS = 1_000_000;

    private RejectedKeysBenchmark() {}

    /**
     * @param args the number of rounds (default 3)
     * @throws Exception when a thread fails
     */
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        RequestContext[] contexts = new RequestContext[KEYS];
        for (int i = 0; i < KEYS; i++) {
            contexts[i] = RequestContext.builder().header("X-Key", "key-" + i).build();
        }
        System.out.printf(Locale.ROOT, "%d distinct keys, each spent, then rejected once; rejections/s%n", KEYS);
        System.out.println("| threads | round | summary off | summary on | on ÷ off |");
        System.out.println("|---:|---:|---:|---:|---:|");
        for (int threads : new int[] {1, 2}) {
            List<Double> ratios = new ArrayList<>();
            for (int round = 1; round <= rounds; round++) {
                double off = run(contexts, threads, false);
                double on = run(contexts, threads, true);
                ratios.add(on / off);
                System.out.printf(
                        Locale.ROOT, "| %d | %d | %,.0f | %,.0f | %.2f |%n", threads, round, off, on, on / off);
            }
            double[] sorted =
                    ratios.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            System.out.printf(Locale.ROOT, "| %d | median | | | **%.2f** |%n", threads, sorted[sorted.length / 2]);
        }
    }

    private static double run(RequestContext[] contexts, int threads, boolean summary) throws Exception {
        RateLimiter.Builder builder = RateLimiter.builder()
                .store(LocalBucketStore.builder().maximumKeys(2L * KEYS).build());
        RejectedKeys rejected = new RejectedKeys(1000);
        if (summary) {
            builder.listener(rejected);
        }
        try (RateLimiter limiter = builder.build()) {
            Guard guard = limiter.guard(
                    Rule.builder("flood").key("header:X-Key").limits("1/1h").build());
            for (RequestContext c : contexts) {
                guard.acquire(c); // spends each key's one permit: the next call is a rejection
            }
            long start = System.nanoTime();
            Thread[] workers = new Thread[threads];
            long[] rejections = new long[threads];
            for (int t = 0; t < threads; t++) {
                int slot = t;
                workers[t] = new Thread(() -> {
                    for (int i = slot; i < contexts.length; i += threads) {
                        if (!guard.acquire(contexts[i]).permitted()) {
                            rejections[slot]++;
                        }
                    }
                });
                workers[t].start();
            }
            for (Thread w : workers) {
                w.join();
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            long total = Arrays.stream(rejections).sum();
            if (total != contexts.length) {
                throw new IllegalStateException("expected every call rejected, got " + total);
            }
            if (summary && rejected.top(1).isEmpty()) {
                throw new IllegalStateException("the summary saw nothing");
            }
            return total / seconds;
        }
    }
}
