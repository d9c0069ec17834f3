package io.github.ratelimit.benchmarks;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * G10: how long a SOFT-mode call actually waits, against the wait Bucket4j computed for it
 * ({@link Decision#delayNanos()}). Not a JMH benchmark: it measures waits of tens to hundreds of milliseconds.
 *
 * <p>A rule {@code 50/1s}, SOFT, {@code maxDelay 2s}, keyed {@code global}; {@code threads} threads each make
 * calls back to back until {@code calls} calls in all were made. After the first 50 the bucket is empty and every
 * call is delayed. For each delayed call the actual wait is the time {@code acquire} took (for
 * {@code acquireAsync}: from the call until its future completed); the report gives percentiles of
 * actual minus computed, in milliseconds. Both entry points are measured, each with a fresh limiter.
 *
 * <pre>
 * java -cp benchmarks.jar io.github.ratelimit.benchmarks.SoftWait [calls=300] [threads=4]
 * </pre>
 * Exits with status 1 when the p99 excess of either entry point is over 10 ms.
 */
public final class SoftWait {

    private static final double GOAL_P99_EXCESS_MS = 10.0;

    private SoftWait() {}

    public static void main(String[] args) throws Exception {
        int calls = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        System.out.printf(
                Locale.ROOT, "rule: 50/1s, SOFT, maxDelay 2s, key global; %d calls from %d threads%n", calls, threads);
        boolean ok = run("acquire", calls, threads, false);
        ok &= run("acquireAsync", calls, threads, true);
        System.out.println(ok ? "G10: meets" : "G10: MISSES");
        System.exit(ok ? 0 : 1);
    }

    private static boolean run(String label, int calls, int threads, boolean async) throws Exception {
        try (RateLimiter limiter = RateLimiter.builder().build()) {
            Guard guard = limiter.guard(Rule.builder("soft")
                    .key("global")
                    .limits("50/1s")
                    .mode(Mode.SOFT)
                    .maxDelay(Duration.ofSeconds(2))
                    .build());
            RequestContext context =
                    RequestContext.builder().remoteAddress("203.0.113.7").build();
            // Warm the code path on another rule's bucket, so the first measured calls are not interpreted.
            Guard warm = limiter.guard(
                    Rule.builder("warm").key("global").limits("1000000/1s").build());
            for (int i = 0; i < 20_000; i++) {
                warm.acquire(context);
            }

            AtomicLongArray computed = new AtomicLongArray(calls);
            AtomicLongArray actual = new AtomicLongArray(calls);
            int[] outcomes = new int[calls];
            AtomicInteger next = new AtomicInteger();
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> workers = new ArrayList<>();
            List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
            for (int t = 0; t < threads; t++) {
                Thread worker = new Thread(
                        () -> {
                            try {
                                start.await();
                                for (int i = next.getAndIncrement(); i < calls; i = next.getAndIncrement()) {
                                    long t0 = System.nanoTime();
                                    Decision d;
                                    long t1;
                                    if (async) {
                                        CompletableFuture<Decision> f = guard.acquireAsync(context);
                                        long[] done = new long[1];
                                        d = f.whenComplete((r, e) -> done[0] = System.nanoTime())
                                                .get();
                                        t1 = done[0];
                                    } else {
                                        d = guard.acquire(context);
                                        t1 = System.nanoTime();
                                    }
                                    outcomes[i] = d.outcome().ordinal();
                                    computed.set(i, d.delayNanos());
                                    actual.set(i, t1 - t0);
                                }
                            } catch (InterruptedException | ExecutionException e) {
                                failures.add(e);
                            }
                        },
                        "soft-" + t);
                workers.add(worker);
                worker.start();
            }
            long begin = System.nanoTime();
            start.countDown();
            for (Thread w : workers) {
                w.join();
            }
            double seconds = (System.nanoTime() - begin) / 1e9;
            if (!failures.isEmpty()) {
                throw new IllegalStateException("a call failed", failures.get(0));
            }

            int[] counts = new int[Outcome.values().length];
            List<Double> excess = new ArrayList<>();
            double maxComputedMs = 0;
            for (int i = 0; i < calls; i++) {
                counts[outcomes[i]]++;
                if (outcomes[i] == Outcome.DELAYED.ordinal()) {
                    excess.add((actual.get(i) - computed.get(i)) / 1e6);
                    maxComputedMs = Math.max(maxComputedMs, computed.get(i) / 1e6);
                }
            }
            double[] e =
                    excess.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            StringBuilder outcomeText = new StringBuilder();
            for (Outcome o : Outcome.values()) {
                if (counts[o.ordinal()] > 0) {
                    outcomeText
                            .append(outcomeText.length() == 0 ? "" : ", ")
                            .append(o)
                            .append(' ')
                            .append(counts[o.ordinal()]);
                }
            }
            System.out.printf(
                    Locale.ROOT,
                    "%n[%s] %.1f s; outcomes: %s; longest computed wait %.1f ms%n",
                    label,
                    seconds,
                    outcomeText,
                    maxComputedMs);
            if (e.length == 0) {
                System.out.println("  no delayed call: nothing to compare");
                return false;
            }
            double p99 = percentile(e, 0.99);
            System.out.printf(
                    Locale.ROOT,
                    "  actual - computed wait over %d delayed calls, ms: min %.3f  p50 %.3f  "
                            + "p90 %.3f  p99 %.3f  max %.3f  (G10 goal: p99 <= +%.0f ms)%n",
                    e.length,
                    e[0],
                    percentile(e, 0.50),
                    percentile(e, 0.90),
                    p99,
                    e[e.length - 1],
                    GOAL_P99_EXCESS_MS);
            System.out.println("  raw excess sample (ms, sorted, every 10th): " + sample(e));
            return p99 <= GOAL_P99_EXCESS_MS;
        }
    }

    /** Nearest-rank percentile of sorted values. */
    private static double percentile(double[] sorted, double p) {
        int rank = (int) Math.ceil(p * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    private static String sample(double[] sorted) {
        double[] s = new double[(sorted.length + 9) / 10];
        for (int i = 0; i < s.length; i++) {
            s[i] = Math.round(sorted[i * 10] * 1000) / 1000.0;
        }
        return Arrays.toString(s);
    }
}
