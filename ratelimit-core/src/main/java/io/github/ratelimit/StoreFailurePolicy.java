package io.github.ratelimit;

/**
 * What a rule decides when its bucket store (Redis) fails or is unreachable.
 */
public enum StoreFailurePolicy {

    /** Use the limiter's default policy ({@link RateLimiter.Builder#defaultStoreFailurePolicy}). */
    DEFAULT,

    /** Let the request through unlimited; counted and logged. The usual choice for public reads. */
    FAIL_OPEN,

    /** Reject the request; counted and logged. For login, one-time passwords, payments. */
    FAIL_CLOSED,

    /**
     * Decide with a bucket in this JVM's memory instead, holding the share of the rule's limits set by
     * {@link RateLimiter.Builder#localFallbackShare(double)} (with N instances, a share of 1/N keeps the total
     * near the limit).
     */
    LOCAL_FALLBACK
}
