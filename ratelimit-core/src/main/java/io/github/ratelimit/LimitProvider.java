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

    /**
     * Called once by each limiter built with this provider, with where to report changed answers: a provider whose
     * answers change at run time (a shared configuration store) reports them, and the limiter asks again at its next
     * call for that key instead of when its cached answer expires. A provider that never changes, or cannot tell,
     * does nothing (the default), and the limiter's cache time-to-live bounds how stale an answer gets.
     *
     * @param changes where to report; thread-safe, and cheap to call
     */
    default void onChange(Changes changes) {
    }

    /** Where a {@link LimitProvider} reports changed answers to a limiter. */
    interface Changes {

        /**
         * The answer for one key of one rule may have changed.
         *
         * @param rule the rule's name
         * @param key the key, as {@link #limitsFor} receives it
         */
        void keyChanged(String rule, String key);

        /** Any answer may have changed (after the provider lost track, for example during an outage). */
        void allChanged();
    }
}
