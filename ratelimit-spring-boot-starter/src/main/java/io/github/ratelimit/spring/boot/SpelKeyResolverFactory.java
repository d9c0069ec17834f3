package io.github.ratelimit.spring.boot;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.key.KeyResolver;
import io.github.ratelimit.key.KeyResolverFactory;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.StandardEvaluationContext;

/**
 * Keys written in SpEL, over the method's arguments, the current request and beans:
 * {@code #userId}, {@code #request.getHeader('X-Tenant')}, {@code @plans.of(#userId)},
 * {@code 'tenant:' + #order.tenantId}. An expression is SpEL when it contains {@code #} or {@code @} or starts
 * with a quote or {@code T(}; the built-in keys ({@code ip}, {@code user|ip}) contain none of these. Expressions
 * are parsed once, when the rule is registered, so a syntax error stops the application from starting.
 * Arguments are available by name (compile with {@code -parameters}, as Spring Boot's build plugins do) and as
 * {@code #p0}/{@code #a0}; {@code #args} is the array, {@code #request} the current HTTP request or null.
 */
final class SpelKeyResolverFactory implements KeyResolverFactory {

    private final SpelExpressionParser parser = new SpelExpressionParser();
    private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();
    private final BeanFactoryResolver beans;

    SpelKeyResolverFactory(BeanFactory beanFactory) {
        this.beans = new BeanFactoryResolver(beanFactory);
    }

    static boolean isSpel(String expression) {
        String e = expression.trim();
        return e.indexOf('#') >= 0 || e.indexOf('@') >= 0 || e.startsWith("'") || e.startsWith("T(");
    }

    @Override
    public KeyResolver create(String expression, String source) {
        if (!isSpel(expression)) {
            return null;
        }
        Expression parsed;
        try {
            parsed = parser.parseExpression(expression);
        } catch (ParseException e) {
            throw new InvalidRateLimitConfigurationException(source + ": key '" + expression + "' is not a valid SpEL "
                    + "expression: " + e.getSimpleMessage() + ". Write e.g. '#userId' or \"#request.getHeader('X-Tenant')\".",
                    e);
        }
        return context -> {
            Object invocation = context.attribute(InvocationRequestContext.INVOCATION);
            StandardEvaluationContext evaluation;
            if (invocation instanceof MethodInvocation mi) {
                evaluation = new MethodBasedEvaluationContext(mi.getThis(), mi.getMethod(), mi.getArguments(),
                        parameterNames);
                evaluation.setVariable("args", mi.getArguments());
            } else {
                evaluation = new StandardEvaluationContext();
            }
            evaluation.setVariable("request", context.attribute(InvocationRequestContext.REQUEST));
            evaluation.setBeanResolver(beans);
            Object value = parsed.getValue(evaluation);
            return value == null ? null : value.toString();
        };
    }
}
