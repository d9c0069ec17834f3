package io.github.ratelimit;

import io.github.ratelimit.Decision.Outcome;

/**
 * What a rule does with a request that is over its limit.
 */
public enum Mode {

    /** Reject at once (HTTP 429, or {@link RateLimitExceededException} outside the web). */
    HARD,

    /**
     * Delay the request until the bucket has tokens for it, at most the rule's {@code maxDelay}. A request
     * that would have to wait longer is rejected at once without consuming anything, and so is one that
     * finds the per-limiter cap on waiting requests full.
     */
    SOFT,

    /**
     * Decide and report, never block: a would-be rejection is reported as
     * {@link Outcome#SHADOW_REJECTED} and the request goes on. For trying a limit in production.
     */
    SHADOW
}
