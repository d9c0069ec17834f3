package io.github.ratelimit;

/**
 * How a rule's buckets refill.
 */
public enum Algorithm {

    /**
     * Token bucket with greedy refill (the default): {@code 10/1s} adds one token every 100 ms, so a client
     * that spends its burst can go on at the steady rate. No window edge lets twice the limit through.
     */
    TOKEN_BUCKET,

    /**
     * Fixed window counter: the whole quota comes back at once at each window boundary, and boundaries are
     * aligned to the clock ({@code 100/1m} resets at every full minute, on every instance alike). Simple to
     * explain to API clients, but a burst at the end of one window and the start of the next can pass up to
     * twice the quota within one window's length. A burst capacity cannot be combined with it.
     */
    FIXED_WINDOW
}
