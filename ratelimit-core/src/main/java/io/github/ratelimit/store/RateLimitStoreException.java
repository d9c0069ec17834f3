package io.github.ratelimit.store;

/**
 * Thrown by a {@link BucketStore} that cannot decide now: the store is unreachable, timed out, refused the
 * write, or its circuit breaker is open. The limiter applies the rule's
 * {@link io.github.ratelimit.StoreFailurePolicy}; applications see this exception only when they use a store
 * directly.
 */
public class RateLimitStoreException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what failed
     * @param cause the underlying failure, or {@code null}
     */
    public RateLimitStoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
