package io.github.ratelimit;

/**
 * Receives every decision a {@link RateLimiter} makes: for metrics, logs and audit.
 *
 * <p>Called on the deciding thread, before a delayed call waits; implementations must be thread-safe and
 * fast, and must not block. An exception thrown here is logged and otherwise ignored: it never changes a
 * decision.
 */
@FunctionalInterface
public interface RateLimitListener {

    /**
     * @param decision the decision, with one verdict per evaluated rule
     */
    void onDecision(Decision decision);
}
