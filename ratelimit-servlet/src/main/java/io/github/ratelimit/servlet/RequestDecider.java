package io.github.ratelimit.servlet;

import io.github.ratelimit.CallTooLargeException;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimitHeaders;
import io.github.ratelimit.RateLimitHeaders.HeaderStyle;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.internal.web.UrlGuards;
import io.github.ratelimit.internal.web.UrlRule;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The request path of a {@link RateLimitFilter}: what it does with each request once it is configured. Finds the URL
 * rules and handler's rules that apply, takes one decision for them, writes the headers, and lets the request on,
 * rejects it, or has it wait out a {@code SOFT} delay. Where the configuration comes from (a rules file, code) is the
 * filter's business, not this one's. Thread-safe.
 */
final class RequestDecider {

    private static final AtomicInteger INSTANCES = new AtomicInteger();

    /** Every decision the rate-limit filters took on a request, for {@link #refund}. */
    private static final String DECISIONS_ATTRIBUTE = RateLimitFilter.class.getName() + ".decisions";

    private final Set<HeaderStyle> headerStyles;
    private final RejectionHandler rejectionHandler;
    private final boolean trustContainerForwarding;
    /** Where the rules of a request's handler come from: the servlets' annotations, a framework's handlers. */
    private final List<HandlerRules> handlerRules;
    /** Waits out SOFT delays, ending the wait of a request whose client has gone. */
    private final SoftDelays delays;
    /** The guards of the URL rules and handlers' rules, per combination. */
    private final UrlGuards<Guard> guards;

    private volatile boolean warnedAboutRemoteIp;
    /** Marks the requests this instance decided, so another instance (the other phase) still decides. */
    private final String decidedAttribute = RateLimitFilter.class.getName() + ".decided." + INSTANCES.incrementAndGet();

    /**
     * Compiles every URL rule now, so an unknown key or a name clash fails deployment rather than a request.
     *
     * @param handlerRules the sources of handlers' rules; read on each request, so sources added later count
     * @throws io.github.ratelimit.InvalidRateLimitConfigurationException when a rule is invalid for the limiter
     */
    RequestDecider(
            RateLimiter limiter,
            List<UrlRule> urlRules,
            Set<HeaderStyle> headerStyles,
            RejectionHandler rejectionHandler,
            boolean trustContainerForwarding,
            List<HandlerRules> handlerRules,
            SoftDelays delays) {
        this.headerStyles = headerStyles.isEmpty() ? EnumSet.noneOf(HeaderStyle.class) : EnumSet.copyOf(headerStyles);
        this.rejectionHandler = Objects.requireNonNull(rejectionHandler, "rejectionHandler");
        this.trustContainerForwarding = trustContainerForwarding;
        this.handlerRules = handlerRules;
        this.delays = delays;
        this.guards = new UrlGuards<>(limiter, List.copyOf(urlRules), guard -> guard);
    }

    void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        if (!(req instanceof HttpServletRequest request) || !(res instanceof HttpServletResponse response)) {
            chain.doFilter(req, res);
            return;
        }
        if (request.getAttribute(decidedAttribute) instanceof Decided decided) {
            // Decided by this filter already: the async re-dispatch after its delay, or a forward, an error page.
            if (decided.claimChain()) {
                proceedOrReject(request, response, chain, decided);
            } else {
                chain.doFilter(req, res);
            }
            return;
        }
        Matched matched = Matched.of(request, handlerRules, guards);
        if (matched == null) {
            chain.doFilter(req, res);
            return;
        }
        Guard guard = matched.guard();
        if (!trustContainerForwarding && !warnedAboutRemoteIp && HttpRequestContext.containerRewroteAddress(request)) {
            warnedAboutRemoteIp = true;
            HttpRequestContext.warnContainerRewritesAddresses();
        }
        CompletableFuture<Decision> future;
        try {
            future = guard.acquireAsync(new HttpRequestContext(matched.view(), trustContainerForwarding));
        } catch (CallTooLargeException e) { // no window could ever hold the request: 413, nothing taken here
            refund(request); // nor by the other phase's filter
            ProblemDetailsRejectionHandler.tooLarge(request, response, e);
            return;
        }
        if (future.isDone()) {
            Decided decided = record(request, response, matched, future.join());
            decided.claimChain();
            proceedOrReject(request, response, chain, decided);
            return;
        }
        if (request.isAsyncSupported() && request.getDispatcherType() == DispatcherType.REQUEST) {
            // The async dispatch that resumes the request may not pass this filter (web.xml maps it to REQUEST
            // only): a rejection is answered here, and the decision settled when the request ends, whichever does.
            Decided.AfterWait afterWait = new Decided.AfterWait(guard);
            delays.awaitAsync(request, response, future, afterWait, decision -> {
                Decided decided = afterWait.decided(decision, d -> record(request, response, matched, d));
                if (decision.outcome() != Outcome.REJECTED) {
                    return null;
                }
                decided.claimChain();
                return () -> rejectionHandler.reject(request, response, decision);
            });
            return;
        }
        // No async support: this thread waits.
        Decision decision = delays.awaitBlocking(request, response, future, guard);
        if (decision == null) {
            return; // the client went away while it waited: its tokens are back, and nobody reads an answer
        }
        Decided decided = record(request, response, matched, decision);
        decided.claimChain();
        proceedOrReject(request, response, chain, decided);
    }

    /** Records this filter's decision on the request (and in the combined decision attribute), and the headers. */
    private Decided record(
            HttpServletRequest request, HttpServletResponse response, Matched matched, Decision decision) {
        Decided decided = new Decided(matched.guard(), decision, matched.handlerCountsFailures());
        request.setAttribute(decidedAttribute, decided);
        if (decision.permitted() && !decision.verdicts().isEmpty()) {
            Decided.Decisions all = request.getAttribute(DECISIONS_ATTRIBUTE) instanceof Decided.Decisions d
                    ? d
                    : new Decided.Decisions();
            all.add(decided);
            request.setAttribute(DECISIONS_ATTRIBUTE, all);
        }
        Decision shown = request.getAttribute(RateLimitFilter.DECISION_ATTRIBUTE) instanceof Decision earlier
                ? earlier.combine(decision)
                : decision;
        request.setAttribute(RateLimitFilter.DECISION_ATTRIBUTE, shown);
        RateLimitHeaders.write(shown, headerStyles, response::setHeader);
        return decided;
    }

    private void proceedOrReject(
            HttpServletRequest request, HttpServletResponse response, FilterChain chain, Decided decided)
            throws IOException, ServletException {
        Decision decision = decided.decision;
        if (decision.outcome() == Outcome.REJECTED) {
            rejectionHandler.reject(request, response, decision);
            return;
        }
        decided.proceed(request, response, chain);
    }

    /** Returns the tokens the rate-limit filters took for a request: {@link RateLimitFilter#refund}. */
    static void refund(ServletRequest request) {
        if (request.getAttribute(DECISIONS_ATTRIBUTE) instanceof Decided.Decisions decisions) {
            Decision shown = decisions.refund();
            if (shown != null) {
                request.setAttribute(RateLimitFilter.DECISION_ATTRIBUTE, shown);
            }
        }
    }
}
