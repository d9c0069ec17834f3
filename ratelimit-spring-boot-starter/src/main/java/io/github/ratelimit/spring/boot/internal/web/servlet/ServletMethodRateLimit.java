package io.github.ratelimit.spring.boot.internal.web.servlet;

import io.github.ratelimit.CallTooLargeException;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimitHeaders;
import io.github.ratelimit.internal.config.RateLimitSettings;
import io.github.ratelimit.servlet.RateLimitFilter;
import io.github.ratelimit.spring.boot.internal.method.HandlerId;
import io.github.ratelimit.spring.boot.internal.method.MethodDecider;
import io.github.ratelimit.spring.boot.internal.method.RateLimitMethodInterceptor;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.Set;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.core.Ordered;

/**
 * Decides {@code @RateLimit} calls made while a servlet request is served (Spring MVC): the part of the advisor
 * that reads the request and writes the response. Loaded only where the servlet API is on the class path, so a
 * WebFlux application, which has none, never links it.
 *
 * <p>The rules of the request's handler method are usually decided by the rate-limit filter already, with the URL
 * rules, in one decision ({@link MvcHandlerRules}): the call then goes ahead without a second decision. A handler
 * whose keys read the method's arguments is decided here, at the call; its items join the response's rate-limit
 * headers, and a rejection returns the tokens the filter took, so the rejected request costs the URL rules nothing.
 * Any other method (a service throttling an outbound call while the request is served) decides on its own, and
 * its items stay out of the response's headers unless {@code ratelimit.method-headers=true}; when it rejects,
 * the response gets {@code Retry-After} and a body that does not name the rule.
 */
public final class ServletMethodRateLimit implements MethodDecider, Ordered {

    /** First: a call inside a servlet request is decided here, whatever it returns (Spring MVC subscribes at once). */
    public static final int ORDER = 0;

    /**
     * The request attribute holding a rejection by a rule of a method other than the request's handler, which the
     * response must not describe (its rule names a class and a method): the web layer answers it with a neutral
     * body.
     */
    static final String UNDISCLOSED_ATTRIBUTE = ServletMethodRateLimit.class.getName() + ".undisclosed";

    private final Supplier<RateLimitSettings> settings;
    private final WebAccess web;
    private final Supplier<String> principal;
    /** Ends calls whose methods return publishers when those end, or {@code null} without Reactor. */
    private final RateLimitMethodInterceptor.Ends ends;

    public ServletMethodRateLimit(
            Supplier<RateLimitSettings> settings,
            WebAccess web,
            Supplier<String> principal,
            RateLimitMethodInterceptor.Ends ends) {
        this.settings = settings;
        this.web = web;
        this.principal = principal;
        this.ends = ends;
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    /** Takes every call made while the calling thread serves a servlet request. */
    @Override
    public boolean decides(MethodInvocation invocation, Guard guard, HandlerId handler) {
        return web.currentRequest() != null;
    }

    @Override
    public Object invoke(MethodInvocation invocation, Guard guard, HandlerId handlerId) throws Throwable {
        HttpServletRequest request = web.currentRequest();
        if (request != null && handlerId.equals(request.getAttribute(MvcHandlerRules.DECIDED_ATTRIBUTE))) {
            return proceedDecidedByFilter(invocation, guard, request);
        }
        RateLimitSettings s = settings.get();
        boolean handler = request != null && handlerId.equals(web.currentHandler(request));
        Decision decision;
        try {
            decision =
                    guard.acquire(new ServletCallContext(invocation, request, principal, s.trustContainerForwarding()));
        } catch (CallTooLargeException e) {
            // A call no window could hold (413): the URL rules that let the request through get their tokens back.
            if (handler && isOwnDispatch(request)) {
                RateLimitFilter.refund(request);
            }
            throw e;
        }
        HttpServletResponse response = web.currentResponse();
        boolean disclosed = handler || s.methodHeaders();
        if (!decision.permitted() && handler && isOwnDispatch(request)) {
            // The request is rejected: the URL rules that let it through get their tokens back, before the headers
            // report them. (Not after a forward: the handler that forwarded ran, and its request was worth its
            // tokens.)
            RateLimitFilter.refund(request);
        }
        if (response != null && !response.isCommitted()) {
            if (disclosed) {
                // The filter decided this request under URL rules already: report both.
                Object earlier = request.getAttribute(RateLimitFilter.DECISION_ATTRIBUTE);
                Decision shown = earlier instanceof Decision d ? d.combine(decision) : decision;
                RateLimitHeaders.write(shown, s.headers(), response::setHeader);
            } else if (!decision.permitted()) {
                // An internal limit turned the request away: when to come back, and nothing about the limit.
                RateLimitHeaders.write(decision, Set.of(), response::setHeader);
            }
        }
        if (!decision.permitted()) {
            if (!disclosed && request != null) {
                request.setAttribute(UNDISCLOSED_ATTRIBUTE, decision);
            }
            throw new RateLimitExceededException(decision);
        }
        if (handler
                && guard.settlesOnCompletion()
                && MvcAsyncEnds.isAsync(invocation.getMethod().getReturnType())) {
            // Spring MVC finishes this handler's response later: the call ends then.
            return MvcAsyncEnds.proceed(invocation, request, guard, decision);
        }
        return RateLimitMethodInterceptor.proceed(invocation, guard, decision, ends);
    }

    /** @return whether the request is on its own dispatch, not a forward, include or error page */
    private static boolean isOwnDispatch(HttpServletRequest request) {
        return request.getDispatcherType() != DispatcherType.FORWARD
                && request.getDispatcherType() != DispatcherType.INCLUDE
                && request.getDispatcherType() != DispatcherType.ERROR;
    }

    /** A handler the filter decided: the call goes ahead; a call that throws is a failed attempt for the filter. */
    private static Object proceedDecidedByFilter(MethodInvocation invocation, Guard guard, HttpServletRequest request)
            throws Throwable {
        if (!guard.settlesOnCompletion()) {
            return invocation.proceed();
        }
        try {
            return invocation.proceed();
        } catch (Throwable t) {
            request.setAttribute(RateLimitFilter.FAILED_ATTEMPT_ATTRIBUTE, Boolean.TRUE);
            throw t;
        }
    }
}
