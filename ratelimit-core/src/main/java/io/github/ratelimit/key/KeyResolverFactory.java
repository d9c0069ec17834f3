package io.github.ratelimit.key;

/**
 * Compiles key expressions written in a language of its own, such as the Spring starter's SpEL keys
 * ({@code #userId}, {@code @plans.of(#userId)}). A limiter asks its factory first, with a rule's whole key
 * expression, when the rule is registered; when the factory declines, the built-in grammar ({@code ip},
 * {@code user|ip}, ...) applies. Implementations must be thread-safe, and so must the resolvers they return.
 */
@FunctionalInterface
public interface KeyResolverFactory {

    /**
     * @param expression a rule's key expression
     * @param source the rule's source, for messages
     * @return a resolver, or {@code null} when the expression is not in this factory's language
     * @throws io.github.ratelimit.InvalidRateLimitConfigurationException when it is, but is malformed
     */
    KeyResolver create(String expression, String source);
}
