package io.github.ratelimit.key;

import io.github.ratelimit.RequestContext;
import org.jspecify.annotations.Nullable;

/**
 * Finds the key a rule counts a call by: the client address, the user, an API key.
 *
 * <p>Register custom resolvers by name with {@link io.github.ratelimit.RateLimiter.Builder#keyResolver}; rules
 * then name them in their key expression. Implementations must be thread-safe, fast (they run on every
 * call) and must not block; they should not throw (an exception is logged and treated as a missing key).
 */
@FunctionalInterface
public interface KeyResolver {

    /**
     * @param context the call being decided
     * @return the key, or {@code null} (or empty) when this call has none; the rule's
     *         {@link io.github.ratelimit.MissingKeyPolicy} then applies. Any text may be returned: the limiter
     *         escapes it, tags it with the alternative it came from, and hashes it when it is long, so the value
     *         can never reach a bucket of another key, alternative or rule.
     */
    @Nullable
    String resolve(RequestContext context);

    /**
     * Compiles key expressions written in a language of its own, such as the Spring starter's SpEL keys
     * ({@code #userId}, {@code @plans.of(#userId)}). A limiter asks its factory first, with a rule's whole key
     * expression, when the rule is registered; when the factory declines, the built-in grammar ({@code ip},
     * {@code user|ip}, ...) applies. Implementations must be thread-safe, and so must the resolvers they return.
     */
    @FunctionalInterface
    public interface Factory {

        /**
         * @param expression a rule's key expression
         * @param source the rule's source, for messages
         * @return a resolver, or {@code null} when the expression is not in this factory's language
         * @throws io.github.ratelimit.InvalidRateLimitConfigurationException when it is, but is malformed
         */
        @Nullable
        KeyResolver create(String expression, String source);
    }
}
