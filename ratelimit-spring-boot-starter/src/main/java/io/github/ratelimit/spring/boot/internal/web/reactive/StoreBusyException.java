package io.github.ratelimit.spring.boot.internal.web.reactive;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ResponseStatusException;

/**
 * A WebFlux decision that found the store's scheduler saturated (every thread waiting on Redis and the queue full):
 * 503 with {@code Retry-After: 1}. {@link RateLimitWebExceptionHandler} answers it with a problem+json body; without
 * that handler, Spring's own answer a {@link ResponseStatusException} with its status and headers.
 */
final class StoreBusyException extends ResponseStatusException {

    private static final HttpHeaders RETRY_AFTER = HttpHeaders.readOnlyHttpHeaders(retryAfter());

    StoreBusyException(int queue, Throwable cause) {
        super(
                HttpStatus.SERVICE_UNAVAILABLE,
                "The rate limiter's store is not keeping up: " + queue
                        + " decisions are waiting for it. Retry after 1 s.",
                cause);
    }

    private static HttpHeaders retryAfter() {
        HttpHeaders headers = new HttpHeaders();
        headers.set(HttpHeaders.RETRY_AFTER, "1");
        return headers;
    }

    @Override
    public HttpHeaders getHeaders() {
        return RETRY_AFTER;
    }
}
