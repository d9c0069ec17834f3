package io.github.ratelimit.redis;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Decision.Verdict;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * One JVM process of {@link MultiProcessAccuracyTest}: threads deciding calls of one hot key through one Redis, with
 * the default (fail-open) failure policy, from a start time shared with the other processes until an end time.
 * Prints one {@code RESULT} line of counts and latency percentiles.
 *
 * <p>Arguments: Redis URI, key prefix, threads, start (epoch ms), end (epoch ms), the rule's limit (e.g.
 * {@code 100/1s}), the store's command timeout in ms.
 */
public final class HotKeyWorker {

    private HotKeyWorker() {}

    public static void main(String[] args) throws Exception {
        String uri = args[0];
        String prefix = args[1];
        int threads = Integer.parseInt(args[2]);
        long startAt = Long.parseLong(args[3]);
        long endAt = Long.parseLong(args[4]);
        String limit = args[5];
        java.time.Duration commandTimeout = java.time.Duration.ofMillis(Long.parseLong(args[6]));
        io.github.ratelimit.Algorithm algorithm = args.length > 7
                ? io.github.ratelimit.Algorithm.valueOf(args[7])
                : io.github.ratelimit.Algorithm.TOKEN_BUCKET;
        Map<Basis, LongAdder> bases = new EnumMap<>(Basis.class);
        for (Basis b : Basis.values()) {
            bases.put(b, new LongAdder());
        }
        LongAdder admitted = new LongAdder();
        java.util.Queue<String> admissions = new java.util.concurrent.ConcurrentLinkedQueue<>();
        LongAdder admittedByPolicy = new LongAdder();
        AtomicLong first = new AtomicLong(Long.MAX_VALUE);
        AtomicLong last = new AtomicLong();
        List<long[]> latencies = new ArrayList<>();
        try (JedisBucketStore store = JedisBucketStore.builder()
                        .url(uri)
                        .keyPrefix(prefix)
                        .commandTimeout(commandTimeout)
                        .build();
                RateLimiter limiter = RateLimiter.builder().store(store).build()) {
            java.util.logging.Logger.getLogger("").setLevel(java.util.logging.Level.WARNING);
            Guard guard = limiter.guard(
                    Rule.builder("hot").limits(limit).algorithm(algorithm).build());
            // Connections and the script ready before the start, on a bucket of its own.
            limiter.guard(Rule.builder("warm-up")
                            .limits("1000/1s")
                            .algorithm(algorithm)
                            .build())
                    .acquire(RequestContext.empty());
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                long[] samples = new long[1 << 20];
                latencies.add(samples);
                int slot = t;
                Thread worker = new Thread(
                        () -> {
                            while (System.currentTimeMillis() < startAt) {
                                Thread.onSpinWait();
                            }
                            first.accumulateAndGet(System.currentTimeMillis(), Math::min);
                            int n = 0;
                            while (System.currentTimeMillis() < endAt) {
                                long t0 = System.nanoTime();
                                long sentMicros = epochMicros();
                                Decision d = guard.acquire(RequestContext.empty());
                                long took = System.nanoTime() - t0;
                                if (n < samples.length) {
                                    samples[n++] = took;
                                }
                                for (Verdict v : d.verdicts()) {
                                    bases.get(v.basis()).increment();
                                }
                                if (d.outcome() == Outcome.ALLOWED) {
                                    admitted.increment();
                                    // The store counted the call between these two instants.
                                    admissions.add(sentMicros + ":" + epochMicros());
                                    if (d.verdicts().get(0).basis() != Basis.BUCKET) {
                                        admittedByPolicy.increment();
                                    }
                                }
                            }
                            last.accumulateAndGet(System.currentTimeMillis(), Math::max);
                            latencies.set(slot, Arrays.copyOf(samples, n));
                        },
                        "hot-key-" + t);
                workers.add(worker);
                worker.start();
            }
            for (Thread worker : workers) {
                worker.join();
            }
            long[] all =
                    latencies.stream().flatMapToLong(Arrays::stream).sorted().toArray();
            JedisBucketStore.Stats stats = store.stats();
            StringBuilder out = new StringBuilder("RESULT");
            out.append(" admitted=")
                    .append(admitted.sum())
                    .append(" decisions=")
                    .append(all.length)
                    .append(" admittedByPolicy=")
                    .append(admittedByPolicy.sum())
                    .append(" first=")
                    .append(first.get())
                    .append(" last=")
                    .append(last.get())
                    .append(" operations=")
                    .append(stats.decisions())
                    .append(" roundTrips=")
                    .append(stats.roundTrips())
                    .append(" conflicts=")
                    .append(stats.conflicts())
                    .append(" contended=")
                    .append(stats.contended())
                    .append(" failures=")
                    .append(stats.failures())
                    .append(" p50us=")
                    .append(percentile(all, 0.50) / 1_000)
                    .append(" p99us=")
                    .append(percentile(all, 0.99) / 1_000);
            bases.forEach((b, c) -> out.append(" basis.").append(b).append('=').append(c.sum()));
            System.out.println(out);
            System.out.println("ADMISSIONS " + String.join(",", admissions));
        }
    }

    private static long epochMicros() {
        java.time.Instant now = java.time.Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    private static long percentile(long[] sorted, double q) {
        return sorted.length == 0 ? 0 : sorted[Math.min(sorted.length - 1, (int) Math.ceil(q * sorted.length) - 1)];
    }
}
