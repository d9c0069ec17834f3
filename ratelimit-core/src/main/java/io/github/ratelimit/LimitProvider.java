package io.github.ratelimit;

import java.util.List;

/**
 * Per-key limits that replace a rule's own: a plan per customer, an override for one user (the design's
 * "configuration store": {@code user:241531} → {@code 5/1s}).
 *
 * <p>A {@link RateLimiter} asks the provider when a key is first seen and again after its cache entry expires
 * ({@link RateLimiter.Builder#limitProvider(LimitProvider, java.time.Duration)}); a changed answer is applied
 * to the key's existing bucket, not only to new keys, by Bucket4j's additive configuration replacement: a
 * window whose capacity grows gains the difference (tokens already spent stay spent), and one whose capacity
 * shrinks keeps at most the new capacity. Implementations must be thread-safe; they may block briefly (a
 * database read), since answers are cached. An exception, or limits that cannot serve the rule (a capacity
 * below the rule's cost), is logged and the rule's own limits apply.
 */
@FunctionalInterface
public interface LimitProvider {

    /**
     * @param rule the rule deciding the call
     * @param key the resolved key, as the rule counts by it (for a {@code user} rule, the user name)
     * @return the limits for this rule and key, or {@code null} or an empty list for the rule's own
     */
    List<Limit> limitsFor(Rule rule, String key);
}
