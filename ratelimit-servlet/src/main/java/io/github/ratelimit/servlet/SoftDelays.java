package io.github.ratelimit.servlet;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * How {@link RateLimitFilter} waits out a {@code SOFT} delay: with async processing when the request allows it
 * (no container thread waits), else on the request's thread; either way a client that goes away meanwhile ends the
 * wait, when something tells: a {@link ClientConnections} probe checked by the {@link ConnectionWatcher}, or the
 * container's own {@code AsyncListener} events. Ending the wait cancels the guard's future, which returns the
 * tokens the request reserved and frees its place among the rule's waiters; the request then goes no further.
 * Thread-safe.
 */
final class SoftDelays {

    private static final System.Logger LOG = System.getLogger(RateLimitFilter.class.getName());

    private final ConnectionWatcher watcher;
    private volatile @Nullable ClientConnections connections;

    SoftDelays(Duration checkInterval) {
        this.watcher = new ConnectionWatcher(checkInterval);
    }

    void connections(ClientConnections connections) {
        this.connections = connections;
    }

    /**
     * Takes the connections the servlet context publishes ({@link RateLimitFilter#CLIENT_CONNECTIONS_ATTRIBUTE}),
     * unless some were set in code.
     *
     * @param published the attribute's value, or {@code null}
     * @throws InvalidRateLimitConfigurationException when it is neither a {@link ClientConnections} nor a function
     *     from a request to a probe
     */
    void connectionsIfNone(@Nullable Object published) {
        if (published == null || connections != null) {
            return;
        }
        if (published instanceof ClientConnections c) {
            connections = c;
        } else if (published instanceof Function<?, ?> probes) {
            @SuppressWarnings("unchecked") // checked on each use: a probe that is no BooleanSupplier checks nothing
            Function<HttpServletRequest, ?> f = (Function<HttpServletRequest, ?>) probes;
            connections = request -> f.apply(request) instanceof BooleanSupplier gone ? gone::getAsBoolean : null;
        } else {
            throw new InvalidRateLimitConfigurationException(
                    "servlet-context attribute " + RateLimitFilter.CLIENT_CONNECTIONS_ATTRIBUTE,
                    published.getClass().getName(),
                    "holds a " + published.getClass().getName() + ", but it must be a "
                            + ClientConnections.class.getName()
                            + " or a Function<HttpServletRequest, BooleanSupplier>",
                    "Declare the valve io.github.ratelimit.servlet.tomcat.TomcatClientConnections in context.xml "
                            + "(on Jetty, add io.github.ratelimit.servlet.jetty.JettyClientConnections to the "
                            + "context), which sets it, or remove the attribute.");
        }
    }

    /** @return the watcher, for tests */
    ConnectionWatcher watcher() {
        return watcher;
    }

    void close() {
        watcher.close();
    }

    /**
     * Waits asynchronously: starts async processing and returns at once; when the wait is over, calls
     * {@code decided} on the limiter's timer thread, then dispatches the request again, or, when {@code decided}
     * returns an answer (a rejection: a wait for a slot can end without one), writes it on a container thread and
     * completes the request. The dispatch need not pass the filter again (a {@code web.xml} mapping for
     * {@code REQUEST} only does not): {@code onEnd}, added to the async context now, hears of the request's end.
     *
     * @param onEnd listens to the request's async processing, from its start here
     * @param decided records the decision (a failed timer, the limiter closing, lets the request through) and
     *        returns {@code null} to resume the request, or the answer to write instead
     */
    void awaitAsync(
            HttpServletRequest request,
            HttpServletResponse response,
            CompletableFuture<Decision> wait,
            AsyncListener onEnd,
            Function<Decision, Answer> decided) {
        ConnectionWatcher.Watch watch = watcher.watch(probe(request), wait);
        AsyncContext async = request.startAsync();
        // No container timeout: the limiter's timer always completes the future, after at most maxDelay.
        async.setTimeout(0);
        EndOnContainerEvents events = new EndOnContainerEvents(wait);
        async.addListener(events);
        async.addListener(onEnd);
        wait.whenComplete((decision, error) -> {
            watch.end();
            if (wait.isCancelled()) {
                if (!events.containerEnded) {
                    answerGone(response);
                    completeQuietly(async);
                }
                return;
            }
            Answer answer;
            try {
                answer = decided.apply(decision != null ? decision : Decision.unlimited());
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.ERROR, "Could not resume a rate-limited request", e);
                completeQuietly(async);
                return;
            }
            if (answer == null) {
                try {
                    async.dispatch();
                } catch (IllegalStateException e) {
                    // The container ended the request as its wait ended: onEnd settles what it holds.
                    LOG.log(System.Logger.Level.DEBUG, "A rate-limited request ended before it could resume", e);
                }
                return;
            }
            async.start(() -> {
                try {
                    answer.write();
                } catch (IOException | RuntimeException e) {
                    LOG.log(System.Logger.Level.DEBUG, "Could not answer a rate-limited request", e);
                } finally {
                    completeQuietly(async);
                }
            });
        });
    }

    /** The answer to a request instead of resuming it after its wait. */
    interface Answer {
        void write() throws IOException;
    }

    /**
     * Waits on the request's thread (at most the rule's maxDelay; the limiter caps how many wait).
     *
     * @return the decision, or {@code null} when the client went away meanwhile (the request is over)
     */
    @Nullable
    Decision awaitBlocking(
            HttpServletRequest request, HttpServletResponse response, CompletableFuture<Decision> wait, Guard guard)
            throws ServletException {
        ConnectionWatcher.Watch watch = watcher.watch(probe(request), wait);
        try {
            return wait.get(1, TimeUnit.HOURS);
        } catch (CancellationException e) {
            answerGone(response);
            return null;
        } catch (InterruptedException e) {
            giveUp(wait, guard);
            Thread.currentThread().interrupt();
            throw new ServletException("interrupted while a rate-limited request waited", e);
        } catch (ExecutionException | TimeoutException e) {
            giveUp(wait, guard);
            throw new ServletException("rate-limit delay failed", e);
        } finally {
            watch.end();
        }
    }

    /** Ends a wait this thread no longer follows; a decision that came meanwhile is settled as a call never run. */
    private static void giveUp(CompletableFuture<Decision> wait, Guard guard) {
        if (!wait.cancel(false)) {
            Decision decision = wait.getNow(null);
            if (decision != null && decision.permitted() && guard.settlesOnCompletion()) {
                guard.completed(decision, false, 0);
            }
        }
    }

    private ClientConnections.@Nullable Probe probe(HttpServletRequest request) {
        ClientConnections c = connections;
        if (c == null) {
            return null;
        }
        try {
            return c.watch(request);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "Cannot watch a waiting request's connection", e);
            return null;
        }
    }

    /**
     * The answer to a client that has gone, should it still read: 503 without a body (it never reaches the
     * application).
     */
    private static void answerGone(HttpServletResponse response) {
        try {
            if (!response.isCommitted()) {
                response.setStatus(HttpServletResponse.SC_SERVICE_UNAVAILABLE);
            }
        } catch (RuntimeException ignored) {
            // The response may already be recycled by a container that ended the request itself.
        }
    }

    private static void completeQuietly(AsyncContext async) {
        try {
            async.complete();
        } catch (IllegalStateException ignored) {
            // Completed already (the container ended the request).
        }
    }

    /**
     * Ends the wait when the container reports the request's end or an error (a container that notices the client
     * going). Tomcat 11 reports neither while a request waits; on the container's own thread, before it reuses the
     * request.
     */
    private static final class EndOnContainerEvents implements AsyncListener {
        private final CompletableFuture<Decision> wait;
        volatile boolean containerEnded;

        EndOnContainerEvents(CompletableFuture<Decision> wait) {
            this.wait = wait;
        }

        @Override
        public void onComplete(AsyncEvent event) {
            containerEnded = true;
            wait.cancel(false);
        }

        @Override
        public void onTimeout(AsyncEvent event) {
            wait.cancel(false);
        }

        @Override
        public void onError(AsyncEvent event) {
            wait.cancel(false);
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
            // A later startAsync (the application's own, after the delay) does not concern the wait.
        }
    }
}
