package io.github.ratelimit.spring.boot;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimitAnnotations;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimitHeaders;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.config.RateLimitSettings;
import io.github.ratelimit.servlet.RateLimitFilter;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.util.ClassUtils;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Decides calls of {@code @RateLimit} methods (and methods of {@code @RateLimit} types) through the core engine:
 * the same rules, keys and decisions as the servlet filter. A rejection throws {@link RateLimitExceededException}
 * (a web layer turns it into the filter's 429). A SOFT delay waits on the calling thread, within the limiter's cap
 * on waiting calls.
 *
 * <h2>In a web request</h2>
 * The rules of the request's handler method are usually decided by the rate-limit filter already, with the URL
 * rules, in one decision ({@link MvcHandlerRules}): the call then goes ahead without a second decision. A handler
 * whose keys read the method's arguments is decided here, at the call; its items join the response's rate-limit
 * headers, and a rejection returns the tokens the filter took, so the rejected request costs the URL rules nothing.
 * Any other method (a service throttling an outbound call while the request is served) decides on its own, and
 * its items stay out of the response's headers unless {@code ratelimit.method-headers=true}; when it rejects,
 * the response gets {@code Retry-After} and a body that does not name the rule.
 *
 * <p>Guards are compiled once per method, at start-up by {@link RateLimitAnnotationValidator} (so a bad
 * annotation stops the application), and otherwise on the first call.
 */
final class RateLimitMethodInterceptor implements MethodInterceptor {

    private record Key(Class<?> type, Method method) {
    }

    /** A method's guard, and the method as a handler method would name it. */
    private record Entry(Guard guard, HandlerId handler) {
    }

    private static final Optional<Entry> NONE = Optional.empty();

    /**
     * The request attribute holding a rejection by a rule of a method other than the request's handler, which the
     * response must not describe (its rule names a class and a method): the web layer answers it with a neutral
     * body.
     */
    static final String UNDISCLOSED_ATTRIBUTE = RateLimitMethodInterceptor.class.getName() + ".undisclosed";

    private final RateLimiter limiter;
    private final Supplier<RateLimitSettings> settingsSource;
    private final WebAccess web;
    private final Supplier<String> principal;
    private final Map<Key, Optional<Entry>> guards = new ConcurrentHashMap<>();
    private volatile RateLimitSettings settings;

    /**
     * @param settings looked up on first use, so the infrastructure bean does not create them early
     */
    RateLimitMethodInterceptor(RateLimiter limiter, Supplier<RateLimitSettings> settings, WebAccess web,
                               Supplier<String> principal) {
        this.limiter = limiter;
        this.settingsSource = settings;
        this.web = web;
        this.principal = principal;
    }

    private RateLimitSettings settings() {
        RateLimitSettings s = settings;
        if (s == null) {
            s = settingsSource.get();
            settings = s;
        }
        return s;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Class<?> type = invocation.getThis() != null ? AopUtils.getTargetClass(invocation.getThis())
                : invocation.getMethod().getDeclaringClass();
        Optional<Entry> found = entryFor(type, invocation.getMethod());
        if (found.isEmpty()) {
            return invocation.proceed();
        }
        Entry entry = found.get();
        Guard guard = entry.guard();
        HttpServletRequest request = web.currentRequest();
        if (request != null && entry.handler().equals(request.getAttribute(MvcHandlerRules.DECIDED_ATTRIBUTE))) {
            return proceedDecidedByFilter(invocation, guard, request);
        }
        boolean handler = request != null && entry.handler().equals(web.currentHandler(request));
        Decision decision = guard.acquire(new InvocationRequestContext(invocation, request, principal,
                settings().trustContainerForwarding()));
        HttpServletResponse response = web.currentResponse();
        boolean disclosed = handler || settings().methodHeaders();
        if (response != null && !response.isCommitted()) {
            if (disclosed) {
                // The filter decided this request under URL rules already: report both.
                Object earlier = request.getAttribute(RateLimitFilter.DECISION_ATTRIBUTE);
                Decision shown = earlier instanceof Decision d ? d.combine(decision) : decision;
                RateLimitHeaders.write(shown, settings().headers(), response::setHeader);
            } else if (!decision.permitted()) {
                // An internal limit turned the request away: when to come back, and nothing about the limit.
                RateLimitHeaders.write(decision, Set.of(), response::setHeader);
            }
        }
        if (!decision.permitted()) {
            if (handler && request.getDispatcherType() != DispatcherType.FORWARD
                    && request.getDispatcherType() != DispatcherType.INCLUDE
                    && request.getDispatcherType() != DispatcherType.ERROR) {
                // The request is rejected: the URL rules that let it through get their tokens back. (Not after a
                // forward: the handler that forwarded ran, and its request was worth its tokens.)
                RateLimitFilter.refund(request);
            }
            if (!disclosed && request != null) {
                request.setAttribute(UNDISCLOSED_ATTRIBUTE, decision);
            }
            throw new RateLimitExceededException(decision);
        }
        if (!guard.countsFailures()) {
            return invocation.proceed();
        }
        // Rules that count only failures: a call that returns gets its tokens back; one that throws keeps them.
        boolean failed = true;
        try {
            Object result = invocation.proceed();
            failed = false;
            return result;
        } finally {
            guard.completed(decision, failed);
        }
    }

    /** A handler the filter decided: the call goes ahead; a call that throws is a failed attempt for the filter. */
    private static Object proceedDecidedByFilter(MethodInvocation invocation, Guard guard, HttpServletRequest request)
            throws Throwable {
        if (!guard.countsFailures()) {
            return invocation.proceed();
        }
        try {
            return invocation.proceed();
        } catch (Throwable t) {
            request.setAttribute(RateLimitFilter.FAILED_ATTEMPT_ATTRIBUTE, Boolean.TRUE);
            throw t;
        }
    }

    /**
     * @param type the bean's class
     * @param method a method called on it
     * @return its guard, or empty when no rule applies
     * @throws io.github.ratelimit.InvalidRateLimitConfigurationException when an annotation is invalid
     */
    Optional<Guard> guardFor(Class<?> type, Method method) {
        return entryFor(type, method).map(Entry::guard);
    }

    private Optional<Entry> entryFor(Class<?> type, Method method) {
        Class<?> userType = ClassUtils.getUserClass(type);
        return guards.computeIfAbsent(new Key(userType, method), k -> {
            Method specific = AopUtils.getMostSpecificMethod(method, userType);
            if (specific.getDeclaringClass() == Object.class) {
                return NONE;
            }
            List<Rule> rules = RateLimitAnnotations.rulesFor(userType, specific);
            return rules.isEmpty() ? NONE
                    : Optional.of(new Entry(limiter.guard(rules), new HandlerId(userType, specific)));
        });
    }
}
