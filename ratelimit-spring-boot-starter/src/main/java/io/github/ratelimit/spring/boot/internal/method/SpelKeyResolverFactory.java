package io.github.ratelimit.spring.boot.internal.method;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.key.KeyResolver;
import java.lang.reflect.Method;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.BeanReference;
import org.springframework.expression.spel.ast.CompoundExpression;
import org.springframework.expression.spel.ast.MethodReference;
import org.springframework.expression.spel.ast.Projection;
import org.springframework.expression.spel.ast.PropertyOrFieldReference;
import org.springframework.expression.spel.ast.Selection;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.StandardEvaluationContext;

/**
 * Keys written in SpEL, over the method's arguments, the current request and beans:
 * {@code #userId}, {@code #request.getHeader('X-Tenant')}, {@code @plans.of(#userId)},
 * {@code 'tenant:' + #order.tenantId}. An expression is SpEL when it contains {@code #} or {@code @} or starts
 * with a quote or {@code T(}; the built-in keys ({@code ip}, {@code user|ip}) contain none of these. Expressions
 * are parsed once, when the rule is registered, so a syntax error stops the application from starting.
 * Arguments are available by name (compile with {@code -parameters}, as Spring Boot's build plugins do) and as
 * {@code #p0}/{@code #a0}; {@code #args} is the array, {@code #request} the current HTTP request or null (an
 * {@code HttpServletRequest} on Spring MVC, a {@code ServerHttpRequest} on Spring WebFlux), {@code #exchange} the
 * WebFlux {@code ServerWebExchange} or null. A URL rule's key ({@code ratelimit.rules[i].key}) is decided before any
 * method runs: it may refer to {@code #request}, {@code #exchange} and beans only, which
 * {@link #checkRequestReferences} checks at start-up.
 */
public final class SpelKeyResolverFactory implements KeyResolver.Factory {

    /**
     * The context attribute holding the request, SpEL's {@code #request}: the servlet module's
     * {@code HttpRequestContext.REQUEST_ATTRIBUTE}, spelled out so that a reactive application, which has no servlet
     * API, never loads that class.
     */
    public static final String REQUEST_ATTRIBUTE = "io.github.ratelimit.servlet.HttpRequestContext.request";

    /** The context attribute holding the WebFlux exchange, SpEL's {@code #exchange}. */
    public static final String EXCHANGE_ATTRIBUTE = SpelKeyResolverFactory.class.getName() + ".exchange";

    /** What a key can refer to before any method runs. */
    private static final Set<String> OF_REQUEST = Set.of("#request", "#exchange");

    private final SpelExpressionParser parser = new SpelExpressionParser();
    private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();
    private final BeanFactory beanFactory;
    private final BeanFactoryResolver beans;

    public SpelKeyResolverFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
        this.beans = new BeanFactoryResolver(beanFactory);
    }

    /**
     * Checks, at start-up, that a key refers only to what a call of the method provides: its parameters by name
     * (when the class was compiled with {@code -parameters}), {@code #p0}/{@code #a0}..., {@code #args},
     * {@code #request}, {@code #root}, {@code #this}, and beans that exist. A reference to anything else would
     * evaluate to null on every call, so every call would find its key missing.
     *
     * @param expression a SpEL key
     * @param method the annotated method
     * @param source the rule's source, for messages
     * @throws InvalidRateLimitConfigurationException naming the reference and what is available
     */
    void checkReferences(String expression, Method method, String source) {
        checkReferences(expression, method, source, "key");
    }

    /**
     * As {@link #checkReferences(String, Method, String)}, for an attribute of the annotation named in messages.
     *
     * @param attribute {@code key} or {@code permits}
     */
    void checkReferences(String expression, Method method, String source, String attribute) {
        checkReferences(expression, method, source, attribute, List.of("#request", "#exchange"));
    }

    /**
     * Checks, at start-up, a charge expression ({@code @RateLimit(charge = ...)}): it is evaluated once the method has
     * returned, over {@code #result} and the arguments, so it may refer to those; not to beans, which the evaluation
     * after the call does not resolve (compute the tokens in the method, and return them).
     *
     * @param expression the charge expression
     * @param method the annotated method
     * @param source the rule's source, for messages
     * @throws InvalidRateLimitConfigurationException when it is no SpEL, or refers to what a call does not provide
     */
    void checkChargeReferences(String expression, Method method, String source) {
        try {
            checkReferences(expression, method, source, "charge", List.of("#result"));
            checkNoBean(((SpelExpression) parser.parseExpression(expression)).getAST(), expression, source);
        } catch (ParseException e) {
            throw new InvalidRateLimitConfigurationException(
                    source + ": charge '" + expression + "' is not a valid SpEL expression: " + e.getSimpleMessage()
                            + ". Write e.g. '#result.usage.totalTokens'.",
                    e);
        }
    }

    private static void checkNoBean(SpelNode node, String expression, String source) {
        if (node instanceof BeanReference bean) {
            throw new InvalidRateLimitConfigurationException(source + ": charge '" + expression + "' refers to bean @"
                    + bean.getName() + ", which a charge, evaluated once the call has returned, cannot reach. Use "
                    + "#result and the arguments: compute the tokens in the method, and return them.");
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            checkNoBean(node.getChild(i), expression, source);
        }
    }

    private void checkReferences(
            String expression, Method method, String source, String attribute, List<String> alsoAvailable) {
        SpelNode ast = ((SpelExpression) parser.parseExpression(expression)).getAST();
        String[] names = parameterNames.getParameterNames(method);
        Set<String> available = new LinkedHashSet<>();
        if (names != null) {
            for (String n : names) {
                available.add("#" + n);
            }
        }
        for (int i = 0; i < method.getParameterCount(); i++) {
            available.add("#p" + i);
            available.add("#a" + i);
        }
        available.add("#args");
        available.addAll(alsoAvailable);
        available.addAll(List.of("#root", "#this"));
        check(ast, expression, available, names == null && method.getParameterCount() > 0, source, null, attribute);
    }

    /**
     * Checks, at start-up, that a URL rule's key refers only to what a request provides before any method runs:
     * {@code #request} and beans.
     *
     * @param expression a SpEL key
     * @param source the rule's source, for messages
     * @throws InvalidRateLimitConfigurationException naming the reference and what is available
     */
    public void checkRequestReferences(String expression, String source) {
        checkRequestReferences(expression, source, "key");
    }

    private void checkRequestReferences(String expression, String source, String attribute) {
        SpelNode ast = ((SpelExpression) parser.parseExpression(expression)).getAST();
        Function<String, InvalidRateLimitConfigurationException> problem =
                reference -> new InvalidRateLimitConfigurationException(
                        source + "." + attribute,
                        expression,
                        attribute + " '"
                                + expression
                                + "' refers to " + reference
                                + ", but a URL rule is decided before any method runs: its "
                                + attribute + " can refer to #request, #exchange and to beans (@name) only",
                        "Use #request (e.g. \"#request.getHeader('X-Tenant')\"), or move the rule to a @RateLimit on "
                                + "the method whose arguments it needs.");
        check(ast, expression, OF_REQUEST, false, source, problem, attribute);
        String onRoot = rootReference(ast, true);
        if (onRoot != null) {
            throw problem.apply("'" + onRoot + "' of the root object, which a URL rule does not have");
        }
    }

    /**
     * @param node a node of an expression's tree
     * @param startsChain whether the node is evaluated against the root object: it is not a later link of a chain
     *        ({@code #request.getHeader(...)}) nor inside a selection or projection, which have elements of their own
     * @return the first property or method read off the root object ({@code foo}, {@code bar()}), or {@code null}
     */
    private static @Nullable String rootReference(SpelNode node, boolean startsChain) {
        if (startsChain && (node instanceof PropertyOrFieldReference || node instanceof MethodReference)) {
            return node.toStringAST();
        }
        if (node instanceof Selection || node instanceof Projection) {
            return null;
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            boolean childStarts = !(node instanceof CompoundExpression) || i == 0;
            String found = rootReference(node.getChild(i), childStarts);
            if (found != null) {
                return found;
            }
        }
        return null;
    }

    /**
     * Checks that the SpEL keys of URL rules read only the request (a URL rule decides before any method is called).
     *
     * @param rules URL rules
     * @param beanFactory the bean factory their keys may name beans of
     * @return the factory that checked them
     * @throws io.github.ratelimit.InvalidRateLimitConfigurationException naming the rule whose key reads more
     */
    public static SpelKeyResolverFactory checkedForUrlRules(List<UrlRule> rules, BeanFactory beanFactory) {
        SpelKeyResolverFactory spel = new SpelKeyResolverFactory(beanFactory);
        for (UrlRule rule : rules) {
            if (isSpel(rule.rule().key())) {
                spel.checkRequestReferences(rule.rule().key(), rule.rule().source(), "key");
            }
            String permits = rule.rule().permits();
            if (permits != null && isSpel(permits)) {
                spel.checkRequestReferences(permits, rule.rule().source(), "permits");
            }
        }
        return spel;
    }

    /**
     * @param expression a SpEL key
     * @return whether it refers to anything of a method call (its arguments, {@code #root}, {@code #this}), so it
     *         can be evaluated only when the method is called, not from the request alone
     */
    public boolean readsInvocation(String expression) {
        return readsInvocation(((SpelExpression) parser.parseExpression(expression)).getAST());
    }

    /**
     * @param rule a rule
     * @return whether its key or its permits expression reads the method call, or it charges what the method returned,
     *         so only the advisor can decide it
     */
    public boolean readsInvocation(Rule rule) {
        // A charging rule reads the method's result: the advisor decides it, and charges it once the method returns.
        return rule.charge() != null
                || (isSpel(rule.key()) && readsInvocation(rule.key()))
                || (rule.permits() != null && isSpel(rule.permits()) && readsInvocation(rule.permits()));
    }

    private static boolean readsInvocation(SpelNode node) {
        if (node instanceof VariableReference && !OF_REQUEST.contains(node.toStringAST())) {
            return true;
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            if (readsInvocation(node.getChild(i))) {
                return true;
            }
        }
        return false;
    }

    private void check(
            SpelNode node,
            String expression,
            Set<String> available,
            boolean namesMissing,
            String source,
            java.util.function.@Nullable Function<String, InvalidRateLimitConfigurationException> problem,
            String attribute) {
        if (node instanceof VariableReference) {
            String reference = node.toStringAST();
            if (!available.contains(reference) && problem != null) {
                throw problem.apply(reference);
            }
            if (!available.contains(reference)) {
                throw new InvalidRateLimitConfigurationException(source + ": " + attribute + " '" + expression
                        + "' refers to " + reference + ", which a call of this method does not provide, so no call "
                        + "would have " + (attribute.equals("key") ? "a key" : "a value") + ". "
                        + "Available: " + available + ". "
                        + (namesMissing
                                ? "Parameter names are not in the class file: compile with -parameters (Spring Boot's build "
                                        + "plugins do), or use #p0, #p1, ..."
                                : "Refer to one of them."));
            }
        } else if (node instanceof BeanReference bean && !beanFactory.containsBean(bean.getName())) {
            throw new InvalidRateLimitConfigurationException(source + ": " + attribute + " '" + expression
                    + "' refers to bean @"
                    + bean.getName() + ", which does not exist. Define the bean, or correct its name.");
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            check(node.getChild(i), expression, available, namesMissing, source, problem, attribute);
        }
    }

    public static boolean isSpel(String expression) {
        String e = expression.trim();
        return e.indexOf('#') >= 0 || e.indexOf('@') >= 0 || e.startsWith("'") || e.startsWith("T(");
    }

    @Override
    public @Nullable KeyResolver create(String expression, String source) {
        if (!isSpel(expression)) {
            return null;
        }
        Expression parsed;
        try {
            parsed = parser.parseExpression(expression);
        } catch (ParseException e) {
            boolean permits = source.endsWith(": permits");
            String where = permits ? source.substring(0, source.length() - ": permits".length()) : source;
            throw new InvalidRateLimitConfigurationException(
                    where + ": " + (permits ? "permits" : "key") + " '"
                            + expression + "' is not a valid SpEL expression: " + e.getSimpleMessage() + ". Write e.g. "
                            + (permits ? "'#items.size()'." : "'#userId' or \"#request.getHeader('X-Tenant')\"."),
                    e);
        }
        return context -> {
            Object invocation = context.attribute(MethodCallContext.INVOCATION);
            StandardEvaluationContext evaluation;
            if (invocation instanceof MethodInvocation mi) {
                evaluation = new MethodBasedEvaluationContext(
                        mi.getThis(), mi.getMethod(), mi.getArguments(), parameterNames);
                evaluation.setVariable("args", mi.getArguments());
            } else {
                evaluation = new StandardEvaluationContext();
            }
            evaluation.setVariable("request", context.attribute(REQUEST_ATTRIBUTE));
            evaluation.setVariable("exchange", context.attribute(EXCHANGE_ATTRIBUTE));
            evaluation.setBeanResolver(beans);
            Object value = parsed.getValue(evaluation);
            return value == null ? null : value.toString();
        };
    }
}
