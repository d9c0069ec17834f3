package io.github.ratelimit.spring.boot.internal.method;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.Charges;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToLongFunction;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * Charges a {@code @RateLimit} call what it used ({@link io.github.ratelimit.RateLimit#charge()}) once the method has
 * returned: each charging rule's SpEL over {@code #result} and the arguments, read with {@link Charges#tokens}, then
 * {@link Guard#settle}. A call that threw, or whose expression fails or gives no whole number, keeps its estimate
 * (logged once per rule every 10 s, counted). Expressions are parsed once each (their number is the annotations');
 * {@link RateLimitAnnotationValidator} checked them at start-up. Never throws into the call.
 */
public final class MethodCharges {

    private static final SpelExpressionParser PARSER = new SpelExpressionParser();
    private static final ParameterNameDiscoverer NAMES = new DefaultParameterNameDiscoverer();
    private static final Map<String, Expression> PARSED = new ConcurrentHashMap<>();

    private MethodCharges() {}

    /**
     * Settles a permitted call under its guard's charging rules; nothing when the guard has none.
     *
     * @param invocation the call, for its arguments
     * @param guard the call's rules
     * @param decision the call's decision
     * @param result what the method returned (the value its stage or publisher completed with), or {@code null}
     * @param error what it threw (or its stage or publisher failed with), or {@code null}
     */
    public static void settle(
            MethodInvocation invocation,
            Guard guard,
            Decision decision,
            @Nullable Object result,
            @Nullable Throwable error) {
        if (!guard.charges() || !decision.permitted()) {
            return;
        }
        try {
            guard.settle(decision, used(invocation, result, error));
        } catch (RuntimeException e) {
            // Guard.settle does not throw for the store; anything else must not reach a call that has returned.
            for (Rule rule : guard.rules()) {
                if (rule.charge() != null) {
                    Charges.unusable(rule, "settling failed: " + e);
                }
            }
        }
    }

    private static ToLongFunction<Rule> used(
            MethodInvocation invocation, @Nullable Object result, @Nullable Throwable error) {
        return rule -> {
            if (error != null) {
                Charges.unusable(rule, "the method threw " + error.getClass().getName());
                return Charges.UNUSABLE;
            }
            String charge = rule.charge();
            Object value;
            try {
                Expression expression = PARSED.computeIfAbsent(charge, PARSER::parseExpression);
                MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(
                        invocation.getThis(), invocation.getMethod(), invocation.getArguments(), NAMES);
                context.setVariable("args", invocation.getArguments());
                context.setVariable("result", result);
                value = expression.getValue(context);
            } catch (RuntimeException e) {
                Charges.unusable(rule, "evaluating it failed: " + e.getMessage());
                return Charges.UNUSABLE;
            }
            return Charges.tokens(rule, value);
        };
    }
}
