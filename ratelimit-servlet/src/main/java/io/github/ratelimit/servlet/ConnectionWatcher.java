package io.github.ratelimit.servlet;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * Checks the connections of the requests that wait out a {@code SOFT} delay, and cancels the wait of a request whose
 * client has gone (cancelling returns the tokens it reserved).
 *
 * <p>Its cost is bounded: one thread of its own at most, none per request. While requests wait, one task runs
 * every interval on that thread and asks each waiting request's {@link ClientConnections.Probe} once; with none
 * waiting, nothing runs, and the thread ends after a few idle seconds. The waiters are as many as the limiter's
 * {@code max-waiting} caps allow, so a check is at most that many non-blocking reads (and, for the clients found
 * gone, the refunds their cancelled waits make). A request whose wait ends within one interval is never checked.
 * The thread is this watcher's, never the JDK's shared scheduler or common pool: {@link #close()} (the filter's
 * {@code destroy}) stops it, so an undeployed application leaves no thread holding its class loader.
 *
 * <p>A probe is never asked after its wait has ended: the check and the end of a wait hold the same lock, so the
 * request goes on (and the container may reuse its objects) only once a check under way has finished.
 * Thread-safe.
 */
final class ConnectionWatcher {

    private static final System.Logger LOG = System.getLogger(RateLimitFilter.class.getName());

    private final long intervalNanos;
    private final ScheduledThreadPoolExecutor timer;
    private final Set<Watch> waiting = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private volatile boolean closed;

    ConnectionWatcher(Duration interval) {
        this.intervalNanos = interval.toNanos();
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "ratelimit-connection-check");
            t.setDaemon(true);
            return t;
        });
        timer.setKeepAliveTime(5, TimeUnit.SECONDS);
        timer.allowCoreThreadTimeOut(true);
        timer.setRemoveOnCancelPolicy(true);
    }

    /**
     * Watches a waiting request. Call {@link Watch#end()} when the wait ends, whichever way, before the request
     * goes on.
     *
     * @param probe the request's connection, or {@code null} when it cannot be checked
     * @param wait the wait, cancelled when the client has gone
     * @return the watch, to end
     */
    Watch watch(ClientConnections.@Nullable Probe probe, Future<?> wait) {
        if (probe == null || closed) {
            return Watch.NONE;
        }
        Watch watch = new Watch(this, probe, wait, System.nanoTime());
        waiting.add(watch);
        schedule();
        return watch;
    }

    /** Stops checking; waits that are still on run to their end. */
    void close() {
        closed = true;
        waiting.clear();
        timer.shutdownNow();
    }

    /** @return the number of requests being watched (for tests) */
    int watched() {
        return waiting.size();
    }

    private void schedule() {
        if (!closed && !waiting.isEmpty() && scheduled.compareAndSet(false, true)) {
            try {
                timer.schedule(this::check, intervalNanos, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                scheduled.set(false); // closed meanwhile: waits that are still on run to their end
            }
        }
    }

    private void check() {
        // Cleared before the scan: a request that starts to wait meanwhile schedules the next check itself.
        scheduled.set(false);
        long now = System.nanoTime();
        try {
            for (Watch watch : waiting) {
                if (watch.clientGone(now, intervalNanos)) {
                    watch.wait.cancel(false);
                }
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "Checking waiting requests' connections failed", e);
        } finally {
            schedule();
        }
    }

    /** One waiting request. */
    static final class Watch {

        @SuppressWarnings("NullAway") // never in waiting, so never checked; end() returns at once
        static final Watch NONE = new Watch(null, null, null, 0);

        private final ConnectionWatcher watcher;
        private final ClientConnections.Probe probe;
        private final Future<?> wait;
        private final long since;
        private boolean ended;

        private Watch(ConnectionWatcher watcher, ClientConnections.Probe probe, Future<?> wait, long since) {
            this.watcher = watcher;
            this.probe = probe;
            this.wait = wait;
            this.since = since;
        }

        /** Ends the watch; once this returns, the probe is not asked again. Idempotent. */
        void end() {
            if (watcher == null) {
                return;
            }
            synchronized (this) {
                ended = true;
            }
            watcher.waiting.remove(this);
        }

        /** @return whether the client has gone; the watch has then ended, and its wait is to be cancelled */
        private boolean clientGone(long now, long minimumAge) {
            boolean gone;
            synchronized (this) {
                if (ended || now - since < minimumAge) {
                    return false;
                }
                try {
                    gone = probe.clientGone();
                } catch (RuntimeException e) {
                    LOG.log(
                            System.Logger.Level.DEBUG,
                            "Checking a waiting request's connection failed; it is no " + "longer checked",
                            e);
                    gone = false;
                    ended = true;
                }
                ended |= gone;
            }
            if (gone || !isWatched()) {
                watcher.waiting.remove(this);
            }
            return gone;
        }

        private synchronized boolean isWatched() {
            return !ended;
        }
    }
}
