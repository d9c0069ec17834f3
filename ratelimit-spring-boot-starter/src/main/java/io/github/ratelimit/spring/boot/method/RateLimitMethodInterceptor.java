package io.github.ratelimit.spring.boot.method;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimitAnnotations;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.config.RateLimitSettings;
import io.github.ratelimit.spring.boot.web.reactive.ReactiveMethodRateLimit;
import io.github.ratelimit.spring.boot.web.servlet.MvcHandlerRules;
import io.github.ratelimit.spring.boot.web.servlet.ServletMethodRateLimit;
import io.github.ratelimit.spring.boot.web.servlet.WebAccess;
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
 * on waiting calls. Methods returning a {@code Mono}, a {@code Flux} or another publisher are decided when subscribed
 * to, without blocking ({@link ReactiveMethodRateLimit}).
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
public final class RateLimitMethodInterceptor implements MethodInterceptor {

    private record Key(Class<?> type, Method method) {
    }

    /** A method's guard, and the method as a handler method would name it. */
    private record Entry(Guard guard, HandlerId handler) {
    }

    private static final Optional<Entry> NONE = Optional.empty();

    private final RateLimiter limiter;
    private final Supplier<RateLimitSettings> settingsSource;
    private final Supplier<String> principal;
    /** Decides methods returning a publisher (or, on an event loop, a future); {@code null} without Reactor. */
    private final ReactiveMethodRateLimit reactive;
    /** Decides calls within a servlet request; {@code null} without the servlet API. */
    private final ServletMethodRateLimit servlet;
    private final Set<HandlerId> warnedBlocking = ConcurrentHashMap.newKeySet();
    private final Map<Key, Optional<Entry>> guards = new ConcurrentHashMap<>();
    private volatile RateLimitSettings settings;

    /**
     * @param settings looked up on first use, so the infrastructure bean does not create them early
     */
    public RateLimitMethodInterceptor(RateLimiter limiter, Supplier<RateLimitSettings> settings, WebAccess web,
                               Supplier<String> principal, ReactiveMethodRateLimit reactive) {
        this.limiter = limiter;
        this.reactive = reactive;
        this.servlet = web == WebAccess.NONE ? null : new ServletMethodRateLimit(this::settings, web, principal);
        this.settingsSource = settings;
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
        Class<?> returned = invocation.getMethod().getReturnType();
        // Within a servlet request (Spring MVC subscribes at once) every method is decided at the call, as a
        // handler the servlet filter may have decided already; elsewhere a publisher is decided on subscription.
        boolean inServletRequest = servlet != null && servlet.inRequest();
        if (reactive != null && !inServletRequest) {
            if (ReactiveMethodRateLimit.decidesOnSubscription(returned)) {
                return reactive.invoke(invocation, guard, entry.handler());
            }
            if (reactive.decidedByFilter(entry.handler())) {
                return invocation.proceed();
            }
            if (ReactiveMethodRateLimit.decidesFuture(returned)) {
                return reactive.invoke(invocation, guard, entry.handler());
            }
            if (ReactiveMethodRateLimit.onEventLoop()) {
                warnBlocking(entry.handler(), guard);
            }
        }
        if (servlet != null) {
            return servlet.invoke(invocation, guard, entry.handler());
        }
        Decision decision = guard.acquire(new MethodCallContext(invocation, principal.get()));
        if (!decision.permitted()) {
            throw new RateLimitExceededException(decision);
        }
        return proceed(invocation, guard, decision);
    }

    /**
     * Runs a permitted call; for rules that count only failures, a call that returns gets its tokens back and one
     * that throws keeps them.
     */
    public static Object proceed(MethodInvocation invocation, Guard guard, Decision decision) throws Throwable {
        if (!guard.countsFailures()) {
            return invocation.proceed();
        }
        boolean failed = true;
        try {
            Object result = invocation.proceed();
            failed = false;
            return result;
        } finally {
            guard.completed(decision, failed);
        }
    }

    /**
     * A method that returns its result (not a publisher) called on an event loop is decided there: a SOFT wait or
     * a store's round trip would hold the loop. Said once per method, when its rules could wait at all.
     */
    private void warnBlocking(HandlerId method, Guard guard) {
        if (warnedBlocking.contains(method)) {
            return;
        }
        boolean mayWait = reactive.offloads() || guard.rules().stream().anyMatch(r -> r.mode() == Mode.SOFT);
        if (mayWait && warnedBlocking.add(method)) {
            System.getLogger(RateLimitMethodInterceptor.class.getName()).log(System.Logger.Level.WARNING,
                    "@RateLimit method " + method.type().getSimpleName() + "#" + method.method().getName() + " was "
                    + "called on the non-blocking thread " + Thread.currentThread().getName() + ", where its decision "
                    + "can wait (a SOFT delay, or the store's round trip) and hold the event loop. Declare it to return "
                    + "a Mono or a Flux (decided when subscribed, without blocking), or call it off the event loop "
                    + "(publishOn(Schedulers.boundedElastic())).");
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
