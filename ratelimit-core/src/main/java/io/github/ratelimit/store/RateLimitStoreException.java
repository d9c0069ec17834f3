package io.github.ratelimit.store;

import org.jspecify.annotations.Nullable;

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
    public RateLimitStoreException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }

    /**
     * For a failure whose stack trace says nothing (an open circuit breaker refusing at once): thrown often under
     * an outage, so it is made once, without a stack trace.
     *
     * @param message what failed
     * @param cause the underlying failure, or {@code null}
     * @param writableStackTrace whether the stack trace is filled in
     */
    protected RateLimitStoreException(String message, @Nullable Throwable cause, boolean writableStackTrace) {
        super(message, cause, false, writableStackTrace);
    }
}
