package io.github.ratelimit.key;

import io.github.ratelimit.RequestContext;

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
    String resolve(RequestContext context);
}
