package io.github.ratelimit.spring.boot.internal.method;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.config.RateLimitAnnotations;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.util.ClassUtils;

/**
 * Decides calls of {@code @RateLimit} methods (and methods of {@code @RateLimit} types) through the core engine:
 * the same rules, keys and decisions as the servlet filter. Each call goes to the first {@link MethodDecider} that
 * takes it: inside a servlet request, the Spring MVC one ({@code ServletMethodRateLimit}: the handler's rules join the
 * filter's decision and the response's headers); a method returning a {@code Mono}, a {@code Flux} or another
 * publisher, or a future called on an event loop, the Reactor one ({@code ReactiveMethodRateLimit}: decided when
 * subscribed to, without blocking). Any other call is decided here, on the calling thread: a rejection throws
 * {@link RateLimitExceededException} (a web layer turns it into the filter's 429), and a SOFT delay waits, within
 * the limiter's cap on waiting calls.
 *
 * <p>Guards are compiled once per method, at start-up by {@link RateLimitAnnotationValidator} (so a bad
 * annotation stops the application), and otherwise on the first call.
 */
public final class RateLimitMethodInterceptor implements MethodInterceptor {

    private record Key(Class<?> type, Method method) {}

    /** A method's guard, and the method as a handler method would name it. */
    private record Entry(Guard guard, HandlerId handler) {}

    private static final Optional<Entry> NONE = Optional.empty();

    private final RateLimiter limiter;
    private final List<MethodDecider> deciders;
    private final Supplier<String> principal;
    private final Map<Key, Optional<Entry>> guards = new ConcurrentHashMap<>();

    /**
     * @param limiter the limiter (looked up on first use, so the infrastructure bean does not create it early)
     * @param deciders the ways calls are decided, in order: the first that takes a call decides it
     * @param principal the caller's name for a call no decider takes, or {@code null}
     */
    public RateLimitMethodInterceptor(RateLimiter limiter, List<MethodDecider> deciders, Supplier<String> principal) {
        this.limiter = limiter;
        this.deciders = List.copyOf(deciders);
        this.principal = principal;
    }

    @Override
    public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
        Class<?> type = invocation.getThis() != null
                ? AopUtils.getTargetClass(invocation.getThis())
                : invocation.getMethod().getDeclaringClass();
        Optional<Entry> found = entryFor(type, invocation.getMethod());
        if (found.isEmpty()) {
            return invocation.proceed();
        }
        Entry entry = found.get();
        for (MethodDecider decider : deciders) {
            if (decider.decides(invocation, entry.guard(), entry.handler())) {
                return decider.invoke(invocation, entry.guard(), entry.handler());
            }
        }
        Decision decision = entry.guard().acquire(new MethodCallContext(invocation, principal.get()));
        if (!decision.permitted()) {
            throw new RateLimitExceededException(decision);
        }
        return proceed(invocation, entry.guard(), decision);
    }

    /**
     * Runs a permitted call and, for rules that settle when it ends, reports how it ended: a call that returns gets
     * the tokens of rules that count only failures back, one that throws keeps them, and either gives back its
     * concurrency rules' slots; rules that charge what a call used are settled with its result ({@link MethodCharges}).
     * A call that returns a {@link CompletionStage} ends when the stage completes (failed if it completes
     * exceptionally, charged with the value it completes with), one that returns a publisher {@code ends} knows when
     * the publisher ends.
     */
    public static @Nullable Object proceed(MethodInvocation invocation, Guard guard, Decision decision)
            throws Throwable {
        return proceed(invocation, guard, decision, null);
    }

    /**
     * As {@link #proceed(MethodInvocation, Guard, Decision)}, for a call whose result may be a publisher that ends
     * later.
     *
     * @param ends ends a call when the publisher it returned ends, or {@code null} when no publisher type is known
     */
    public static @Nullable Object proceed(
            MethodInvocation invocation, Guard guard, Decision decision, @Nullable Ends ends) throws Throwable {
        boolean charges = guard.charges();
        if (!guard.settlesOnCompletion() && !charges) {
            return invocation.proceed();
        }
        Throwable failure = null;
        boolean later = false;
        Object result = null;
        try {
            result = invocation.proceed();
            if (result instanceof CompletionStage<?> stage) {
                later = true;
                stage.whenComplete((value, error) -> {
                    if (charges) {
                        MethodCharges.settle(invocation, guard, decision, value, error);
                    }
                    guard.completed(decision, error != null);
                });
            } else if (ends != null) {
                Object ending = ends.endWith(result, guard, decision, invocation);
                if (ending != null) {
                    later = true;
                    return ending;
                }
            }
            return result;
        } catch (Throwable t) {
            failure = t;
            throw t;
        } finally {
            if (!later) {
                if (charges) {
                    MethodCharges.settle(invocation, guard, decision, result, failure);
                }
                guard.completed(decision, failure != null);
            }
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
            return rules.isEmpty()
                    ? NONE
                    : Optional.of(new Entry(limiter.guard(rules), new HandlerId(userType, specific)));
        });
    }

    /**
     * Ends a call when the publisher its method returned ends (the Reactor support provides one), so rules that
     * settle when a call ends (a concurrency rule's slot) see the work's end, not the method's return.
     */
    @FunctionalInterface
    public interface Ends {

        /**
         * @param result what the method returned
         * @param guard the call's rules
         * @param decision the call's decision
         * @param invocation the call, for the charge expressions of its rules ({@link MethodCharges})
         * @return the result, reporting the call's end to {@code guard} ({@link Guard#completed(Decision, boolean)},
         *         and {@link Guard#settle} with the last value it gave) when it ends; {@code null} when it is no
         *         publisher this knows
         */
        @Nullable
        Object endWith(@Nullable Object result, Guard guard, Decision decision, MethodInvocation invocation);
    }
}
