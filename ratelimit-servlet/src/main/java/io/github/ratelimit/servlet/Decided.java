package io.github.ratelimit.servlet;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.Charges;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * One {@link RateLimitFilter}'s decision on a request, whether the chain has run for it yet, and whether its tokens
 * have been settled (kept or returned, at most once). Thread-safe.
 */
final class Decided {

    final Guard guard;
    final Decision decision;
    /** Whether the handler's own rules count failures: a handler that throws is then a failed attempt. */
    private final boolean handlerCountsFailures;

    private final AtomicBoolean chained = new AtomicBoolean();
    private final AtomicBoolean settled = new AtomicBoolean();

    Decided(Guard guard, Decision decision, boolean handlerCountsFailures) {
        this.guard = guard;
        this.decision = decision;
        this.handlerCountsFailures = handlerCountsFailures;
    }

    boolean claimChain() {
        return chained.compareAndSet(false, true);
    }

    /** @return whether this is the first settlement: the tokens are returned (refund) or kept at most once */
    boolean settle() {
        return settled.compareAndSet(false, true);
    }

    /**
     * Settles rules that count only some requests: their tokens come back unless the request failed (rules counting
     * failures) or was answered with a counted status (rules counting statuses).
     */
    void completed(boolean failed, int status) {
        if (settle()) {
            guard.completed(decision, failed, status);
        }
    }

    /**
     * As {@link #completed}, first charging the rules that charge what a request used ({@link Guard#settle}) with the
     * response header they name.
     *
     * @param response the response, as the chain left it
     * @param threw whether the request's processing threw (or, asynchronously, ended in an error or a timeout)
     */
    void ended(ServletRequest request, ServletResponse response, boolean threw) {
        boolean failed = failed(request, response, threw);
        int status = status(response, threw);
        if (settle()) {
            try {
                if (guard.charges() && decision.permitted()) {
                    guard.settle(decision, rule -> used(rule, response, threw));
                }
            } finally {
                // Whatever the charge did, the request's slots and uncounted tokens come back.
                guard.completed(decision, failed, status);
            }
        }
    }

    /** @return the tokens a request used under a charging URL rule, read from the response header the rule names */
    private static long used(Rule rule, ServletResponse response, boolean threw) {
        if (threw) {
            Charges.unusable(rule, "the request's processing threw");
            return Charges.UNUSABLE;
        }
        String header = Charges.responseHeader(rule.charge());
        String value = header != null && response instanceof HttpServletResponse http ? http.getHeader(header) : null;
        return Charges.tokens(rule, value);
    }

    /** @return whether the request must be settled when it ends: rules count only some requests, or charge */
    boolean settlesOnEnd() {
        return guard.settlesOnCompletion() || guard.charges();
    }

    /**
     * Runs the chain for a permitted request, and settles the decision when the request ends (once its async
     * processing completes, if it starts any) for rules that settle then: those that count only some requests get
     * their tokens back unless it counts, and concurrency rules their slots.
     */
    void proceed(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        if (!settlesOnEnd()) {
            chain.doFilter(request, response);
            return;
        }
        boolean threw = true;
        try {
            chain.doFilter(request, response);
            threw = false;
        } finally {
            if (request.isAsyncStarted()) {
                request.getAsyncContext().addListener(settleWhenComplete(threw));
            } else {
                ended(request, response, threw);
            }
        }
    }

    /**
     * @param response the response, as the chain left it
     * @param threw whether the request's processing threw (the container then answers 500)
     * @return the status the request is answered with
     */
    static int status(ServletResponse response, boolean threw) {
        if (threw) {
            return HttpServletResponse.SC_INTERNAL_SERVER_ERROR;
        }
        return response instanceof HttpServletResponse http ? http.getStatus() : 0;
    }

    /**
     * @param threw whether the chain threw (or, asynchronously, the container reported an error)
     * @return a listener that settles this decision when the request's async processing completes
     */
    AsyncListener settleWhenComplete(boolean threw) {
        return new SettleWhenComplete(this, threw);
    }

    /**
     * A failed attempt is a 401 response, a request marked with {@link RateLimitFilter#FAILED_ATTEMPT_ATTRIBUTE}
     * (Spring Security's failure events; the Spring Boot starter's advisor for a handler method that throws), or a
     * handler whose own rules count failures that throws. Nothing else: a 404 from a scanner, a 403, a server error
     * elsewhere is no wrong password, so it costs URL rules that count failures (limits on logins) nothing.
     *
     * @param threw whether the request's processing threw
     * @return whether the request was a failed attempt
     */
    boolean failed(ServletRequest request, ServletResponse response, boolean threw) {
        return (threw && handlerCountsFailures)
                || (response instanceof HttpServletResponse http
                        && http.getStatus() == HttpServletResponse.SC_UNAUTHORIZED)
                || Boolean.TRUE.equals(request.getAttribute(RateLimitFilter.FAILED_ATTEMPT_ATTRIBUTE));
    }

    /** The decisions the filters took on one request, for {@link RateLimitFilter#refund}. */
    static final class Decisions {
        private final List<Decided> all = new CopyOnWriteArrayList<>();

        void add(Decided decided) {
            all.add(decided);
        }

        /** @return the filters' decisions combined as they stand after the refund, or {@code null} for none */
        @Nullable
        Decision refund() {
            Decision shown = null;
            for (Decided d : all) {
                Decision now = d.settle() ? d.guard.refund(d.decision) : d.decision;
                shown = shown == null ? now : shown.combine(now);
            }
            return shown;
        }
    }

    /**
     * Settles the decision that ends a {@code SOFT} wait (known once the wait is over, {@code null} before) when the
     * request completes: the async dispatch that resumes the request passes the filter only when the filter is mapped
     * to {@code ASYNC} dispatches too, and a slot held until the request's end must come back either way. Added when
     * the wait starts async processing; settles at most once with the filter's own settlement.
     */
    static final class AfterWait implements AsyncListener {
        private final Guard guard;
        private volatile @Nullable Decided decided;
        private volatile boolean ended;
        private volatile boolean threw;

        AfterWait(Guard guard) {
            this.guard = guard;
        }

        /**
         * Records the decision that ends the wait ({@code record}); when recording fails, or the request has ended
         * already (the container ended it as the wait ended), settles it here as a call that never ran: nothing else
         * would, and a slot it holds would stay taken.
         *
         * @return the decision as recorded
         */
        Decided decided(Decision decision, Function<Decision, Decided> record) {
            Decided d;
            try {
                d = record.apply(decision);
            } catch (RuntimeException | Error e) {
                if (decision.permitted() && guard.settlesOnCompletion()) {
                    guard.completed(decision, false, 0);
                }
                throw e;
            }
            decided = d;
            if (ended && d.decision.permitted() && guard.settlesOnCompletion()) {
                d.completed(false, 0);
            }
            return d;
        }

        @Override
        public void onComplete(AsyncEvent event) {
            ended = true;
            Decided d = decided;
            if (d != null && d.decision.permitted() && d.settlesOnEnd()) {
                d.ended(event.getSuppliedRequest(), event.getSuppliedResponse(), threw);
            }
        }

        @Override
        public void onTimeout(AsyncEvent event) {
            threw = decided != null;
        }

        @Override
        public void onError(AsyncEvent event) {
            threw = decided != null;
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
            // The application's own async processing, after the wait: hear of its end too.
            event.getAsyncContext().addListener(this);
        }
    }

    /** Settles a failure-counting decision when an asynchronous request completes. */
    private static final class SettleWhenComplete implements AsyncListener {
        private final Decided decided;
        private volatile boolean threw;

        SettleWhenComplete(Decided decided, boolean threw) {
            this.decided = decided;
            this.threw = threw;
        }

        @Override
        public void onComplete(AsyncEvent event) {
            decided.ended(event.getSuppliedRequest(), event.getSuppliedResponse(), threw);
        }

        @Override
        public void onTimeout(AsyncEvent event) {
            threw = true;
        }

        @Override
        public void onError(AsyncEvent event) {
            threw = true;
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
            event.getAsyncContext().addListener(this);
        }
    }
}
