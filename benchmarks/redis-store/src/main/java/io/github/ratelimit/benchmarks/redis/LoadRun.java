package io.github.ratelimit.benchmarks.redis;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Drives a {@link Decider} from several threads, closed loop (each thread makes its next call when the last one
 * returns), until a deadline or a per-thread call budget, whichever comes first.
 *
 * <p>Keys: with at least as many keys as threads, each thread cycles through its own slice of the key space
 * (thread {@code t} of {@code T} owns keys {@code [t*K/T, (t+1)*K/T)}), so every key's first use happens once, in
 * order; with fewer keys than threads (the hot key), every thread cycles through all of them.
 */
final class LoadRun {

    /** How long to wait for a thread past the deadline before calling the run stuck. */
    private static final long STUCK_AFTER_NANOS = TimeUnit.SECONDS.toNanos(60);

    /** A bound on every loop besides its deadline. */
    private static final long MAX_CALLS_PER_THREAD = 1_000_000_000L;

    /**
     * @param decisions calls made
     * @param rejected calls the bucket rejected
     * @param storeFailed calls decided without the store, or that threw
     * @param elapsedNanos from the common start to the last thread's last call
     * @param distinctKeys keys used at least once (each had its first use in this run)
     * @param latency every call's latency
     * @param firstError the first exception thrown by a call, or {@code null}
     */
    record Result(
            long decisions,
            long rejected,
            long storeFailed,
            long elapsedNanos,
            long distinctKeys,
            LatencyHistogram latency,
            String firstError) {

        double perSecond() {
            return elapsedNanos == 0 ? 0 : decisions * 1e9 / elapsedNanos;
        }
    }

    private LoadRun() {}

    /**
     * @param decider the calls
     * @param threads concurrent callers
     * @param keyCount size of the key space the decider was prepared for
     * @param seconds how long to run at most
     * @param onePass whether each thread stops after one pass over its keys (each key used once) rather than
     *        cycling until the deadline
     * @return the counts and latencies
     */
    static Result run(Decider decider, int threads, int keyCount, double seconds, boolean onePass) {
        long durationNanos = (long) (seconds * 1e9);
        Worker[] workers = new Worker[threads];
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch go = new CountDownLatch(1);
        AtomicReference<String> firstError = new AtomicReference<>();
        long[] deadline = new long[1];
        for (int t = 0; t < threads; t++) {
            int from = keyCount >= threads ? (int) ((long) t * keyCount / threads) : 0;
            int to = keyCount >= threads ? (int) ((long) (t + 1) * keyCount / threads) : keyCount;
            long maxCalls = onePass ? to - from : MAX_CALLS_PER_THREAD;
            workers[t] = new Worker(decider, from, to, maxCalls, ready, go, deadline, firstError);
            Thread thread = new Thread(workers[t], "bench-load-" + t);
            thread.setDaemon(true);
            workers[t].thread = thread;
            thread.start();
        }
        awaitUninterruptibly(ready);
        long start = System.nanoTime();
        deadline[0] = start + durationNanos; // published to the workers by go.countDown()
        go.countDown();
        long end = start;
        LatencyHistogram latency = new LatencyHistogram();
        long decisions = 0;
        long rejected = 0;
        long failed = 0;
        long maxCalls = 0;
        long distinct = 0;
        for (Worker w : workers) {
            join(w.thread, start + durationNanos + STUCK_AFTER_NANOS);
            end = Math.max(end, w.endNanos);
            latency.add(w.latency);
            decisions += w.calls;
            rejected += w.rejected;
            failed += w.failed;
            maxCalls = Math.max(maxCalls, w.calls);
            distinct += Math.min(w.calls, w.to - w.from);
        }
        if (keyCount < threads) {
            distinct = Math.min(keyCount, maxCalls);
        }
        return new Result(decisions, rejected, failed, end - start, distinct, latency, firstError.get());
    }

    private static void join(Thread thread, long byNanos) {
        try {
            long wait = byNanos - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.timedJoin(thread, wait);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            throw new IllegalStateException(thread.getName() + " is still in a call 60 s after the deadline");
        }
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private static final class Worker implements Runnable {
        final Decider decider;
        final int from;
        final int to;
        final long maxCalls;
        final CountDownLatch ready;
        final CountDownLatch go;
        final long[] deadline;
        final AtomicReference<String> firstError;
        final LatencyHistogram latency = new LatencyHistogram();
        Thread thread;
        long calls;
        long rejected;
        long failed;
        long endNanos;

        Worker(
                Decider decider,
                int from,
                int to,
                long maxCalls,
                CountDownLatch ready,
                CountDownLatch go,
                long[] deadline,
                AtomicReference<String> firstError) {
            this.decider = decider;
            this.from = from;
            this.to = to;
            this.maxCalls = maxCalls;
            this.ready = ready;
            this.go = go;
            this.deadline = deadline;
            this.firstError = firstError;
        }

        @Override
        public void run() {
            ready.countDown();
            awaitUninterruptibly(go);
            long until = deadline[0];
            int key = from;
            long now = System.nanoTime();
            while (now < until && calls < maxCalls) {
                int outcome;
                try {
                    outcome = decider.decide(key);
                } catch (RuntimeException e) {
                    outcome = Decider.STORE_FAILED;
                    firstError.compareAndSet(null, e.toString());
                }
                long after = System.nanoTime();
                latency.record(after - now);
                now = after;
                calls++;
                if (outcome == Decider.REJECTED) {
                    rejected++;
                } else if (outcome == Decider.STORE_FAILED) {
                    failed++;
                }
                if (++key == to) {
                    key = from;
                }
            }
            endNanos = now;
        }
    }
}
