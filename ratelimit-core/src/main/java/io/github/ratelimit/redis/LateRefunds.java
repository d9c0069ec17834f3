package io.github.ratelimit.redis;

import io.github.ratelimit.support.RateLimitedLog;
import java.lang.System.Logger.Level;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * Gives back, off the request path, what a call's end could not give back at once because Redis failed at that very
 * moment: tokens (a refund: a rule that counts only some outcomes, a call another rule rejected, a SOFT wait cancelled)
 * and slots (a concurrency rule's lease).
 *
 * <p>Each is tried again {@value #FIRST_PAUSE_MILLIS} ms later, then twice as long each time up to
 * {@value #MAX_PAUSE_MILLIS} ms, through the store's calls off the request path (their own connections, with the longer
 * {@linkplain JedisBucketStore.Builder#backgroundTimeout background timeout}), until it is done or its horizon has
 * passed: {@link #HORIZON_NANOS} after the call ended, a lease's life, by when a slot not given back has run out
 * anyway. Then it is lost: counted and logged. At most {@value #CAPACITY} wait at a time; one more is lost at once,
 * so a long outage costs bounded memory. Only what may be tried again without counting twice comes here: what Redis
 * certainly did not see, what is the same done twice (a lease given back, a log entry forgotten), and a bucket's
 * refund whose first write is checked for first ({@link CasProxyManager#refundLate}).
 *
 * <p>One thread, {@code ratelimit-late-refunds}, started with the first, stopped by {@link #close()} (whatever waits
 * then is lost). Thread-safe.
 */
final class LateRefunds implements AutoCloseable {

    /** What gives one refund back: returns when it is done, throws when it failed and may be tried again. */
    @FunctionalInterface
    interface Attempt {
        void run();
    }

    /** How long after the call ended a refund is still tried: a lease's life. */
    static final long HORIZON_NANOS = RedisSlots.LEASE_NANOS;

    /** The most refunds waiting to be tried again. */
    static final int CAPACITY = 10_000;

    static final long FIRST_PAUSE_MILLIS = 50;
    static final long MAX_PAUSE_MILLIS = 1_000;

    private static final RateLimitedLog LOST_LOG = new RateLimitedLog(10_000_000_000L);

    /** Refunds given back late, after a failure. */
    final LongAdder late = new LongAdder();
    /** Refunds given up: their horizon passed, or too many waited. */
    final LongAdder lost = new LongAdder();
    /**
     * Refunds whose call reached Redis but was not answered in time, and which cannot be told apart from a refund
     * Redis never ran nor tried again without counting twice (a sliding counter's or a calendar quota's): Redis that is
     * slow rather than gone runs them, late.
     */
    final LongAdder unconfirmed = new LongAdder();

    private final AtomicInteger waiting = new AtomicInteger();
    private @Nullable ScheduledThreadPoolExecutor thread;
    private boolean closed;

    /**
     * Tries a refund again later.
     *
     * @param what what is given back, where, for the log when it is lost
     * @param attempt gives it back once
     */
    void offer(String what, Attempt attempt) {
        offer(what, attempt, () -> {});
    }

    /**
     * Tries a refund again later.
     *
     * @param what what is given back, where, for the log when it is lost
     * @param attempt gives it back once
     * @param ended run once the refund is done or lost
     */
    void offer(String what, Attempt attempt, Runnable ended) {
        if (waiting.incrementAndGet() > CAPACITY) {
            waiting.decrementAndGet();
            lose(what, "more than " + CAPACITY + " refunds already wait to be tried again", null);
            ended.run();
            return;
        }
        Retry retry = new Retry(what, attempt, ended, System.nanoTime() + HORIZON_NANOS);
        if (!schedule(retry, FIRST_PAUSE_MILLIS)) {
            retry.end();
            lose(what, "the store is closed", null);
        }
    }

    /** @return how many refunds wait to be tried again now */
    int waiting() {
        return waiting.get();
    }

    private synchronized boolean schedule(Retry retry, long millis) {
        if (closed) {
            return false;
        }
        if (thread == null) {
            thread = new ScheduledThreadPoolExecutor(1, task -> {
                Thread t = new Thread(task, "ratelimit-late-refunds");
                t.setDaemon(true);
                t.setContextClassLoader(LateRefunds.class.getClassLoader());
                return t;
            });
            thread.setRemoveOnCancelPolicy(true);
        }
        try {
            thread.schedule(retry, millis, TimeUnit.MILLISECONDS);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    private void lose(String what, String why, @Nullable Throwable last) {
        lost.increment();
        LOST_LOG.log(
                Level.WARNING,
                () -> "Could not give back " + what + ": " + why + "; it is lost (counted in "
                        + "ratelimit.store.refunds{result=lost})",
                last);
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (thread != null) {
            int left = thread.shutdownNow().size();
            if (left > 0) {
                lost.add(left);
                waiting.addAndGet(-left);
            }
        }
    }

    /** One refund tried again until done or past its horizon. */
    private final class Retry implements Runnable {
        private final String what;
        private final Attempt attempt;
        private final Runnable ended;
        private final long horizon;
        private long pause = FIRST_PAUSE_MILLIS;

        Retry(String what, Attempt attempt, Runnable ended, long horizon) {
            this.what = what;
            this.attempt = attempt;
            this.ended = ended;
            this.horizon = horizon;
        }

        void end() {
            waiting.decrementAndGet();
            ended.run();
        }

        @Override
        public void run() {
            try {
                attempt.run();
                end();
                late.increment();
                return;
            } catch (Error e) {
                end();
                lose(what, "giving it back failed", e);
                throw e;
            } catch (RuntimeException e) {
                pause = Math.min(pause * 2, MAX_PAUSE_MILLIS);
                if (System.nanoTime() + pause * 1_000_000L - horizon > 0) {
                    end();
                    lose(what, "Redis kept failing for " + HORIZON_NANOS / 1_000_000_000L + " s", e);
                    return;
                }
            }
            if (!schedule(this, pause)) {
                end();
                lose(what, "the store is closed", null);
            }
        }
    }
}
