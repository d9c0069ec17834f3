package io.github.ratelimit;


/**
 * Families of rate-limit response headers; {@link RateLimitHeaders} writes the ones an application enables.
 * {@code Retry-After} is written on every rejection whatever the styles.
 */
public enum HeaderStyle {

    /**
     * {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining} and {@code X-RateLimit-Reset} (seconds until the
     * window is full again) for the binding window, the de-facto convention of many public APIs.
     */
    X_RATELIMIT,

    /**
     * The IETF HTTPAPI working group's {@code RateLimit-Policy} and {@code RateLimit} structured fields, one item
     * per window, in the syntax of draft-ietf-httpapi-ratelimit-headers-09:
     * {@code RateLimit-Policy: "search-1s";q=5;w=1, "search-1m";q=100;w=60} and
     * {@code RateLimit: "search-1s";r=4;t=1, "search-1m";r=99;t=1}. The draft still moves; a later syntax will
     * come as a new constant, so this one keeps its meaning.
     */
    IETF_DRAFT_09
}
