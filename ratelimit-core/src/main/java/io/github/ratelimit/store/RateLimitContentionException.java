package io.github.ratelimit.store;

/**
 * Thrown by a {@link BucketStore} that reached the store but could not settle a decision: the bucket kept
 * changing under concurrent writers (other threads or instances) beyond the store's retry budget. Unlike a
 * {@link RateLimitStoreException}, this is not an outage, so the rule's
 * {@link io.github.ratelimit.StoreFailurePolicy} does not apply: the limiter rejects the call (basis
 * {@link io.github.ratelimit.Decision.Basis#CONTENTION}) rather than admit it uncounted, and the store does not count it
 * towards its circuit breaker.
 */
public class RateLimitContentionException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what happened
     */
    public RateLimitContentionException(String message) {
        super(message, null, false, false);
    }
}
