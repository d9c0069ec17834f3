package io.github.ratelimit;

/**
 * How a rule counts calls within its windows. Every algorithm takes several windows at once (decided
 * atomically), a cost per call and every {@link Mode}; they differ in what a window means.
 *
 * <table>
 *   <caption>Choosing an algorithm</caption>
 *   <tr><th>Algorithm</th><th>Admits within any rolling window</th><th>State per key</th></tr>
 *   <tr><td>{@link #TOKEN_BUCKET}</td><td>burst + rate × window</td><td>two numbers per window</td></tr>
 *   <tr><td>{@link #FIXED_WINDOW}</td><td>up to twice the limit across a boundary</td><td>one number per window</td></tr>
 *   <tr><td>{@link #SLIDING_WINDOW_LOG}</td><td>exactly the limit</td><td>one entry per admitted call</td></tr>
 *   <tr><td>{@link #SLIDING_WINDOW_COUNTER}</td><td>the limit on average; up to twice it in the worst window</td><td>a few counters per window</td></tr>
 *   <tr><td>{@link #LEAKY_BUCKET}</td><td>one call per interval, never a burst</td><td>two numbers per window</td></tr>
 * </table>
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
    FIXED_WINDOW,

    /**
     * Sliding window log: the time of every admitted call is kept, and a call passes when the calls admitted
     * within the last window, and it, are at most the limit. Exact for every rolling window ({@code 100/1m}
     * never admits a 101st call within any 60 seconds) with no refill shape to explain; memory grows with the
     * limit, so a rule's longest window may hold at most {@link Rule#MAX_LOG_CALLS} calls. A burst capacity
     * cannot be combined with it.
     */
    SLIDING_WINDOW_LOG,

    /**
     * Sliding window counter: one counter per clock-aligned window; the count in the sliding window is the
     * current window's count plus the previous window's, weighted by the share of it the sliding window still
     * covers. A few counters per key whatever the limit; approximate, since it assumes the previous window's
     * calls were spread evenly (over-admission is measured in {@code docs/BENCHMARKS.md}). A burst capacity
     * cannot be combined with it.
     */
    SLIDING_WINDOW_COUNTER,

    /**
     * Leaky bucket, the constant-rate queue: a token bucket that holds one token, so calls leave no closer than one
     * interval apart ({@code 5/1s}: 200 ms) and never in a burst. As a {@link Mode#SOFT} rule it is the queue: calls
     * wait their turn in arrival order, up to the rule's {@code maxDelay}, at most {@code maxWaiting} of them; as a
     * {@link Mode#HARD} rule it rejects a call that comes sooner than its interval. Runs on Bucket4j like the token
     * bucket (one round trip on Redis); a burst capacity cannot be combined with it, and a call costs one token.
     */
    LEAKY_BUCKET;

    /**
     * @return whether the algorithm is one of the sliding windows, which the limiter's own code computes (the
     *         others run on Bucket4j)
     */
    public boolean isSliding() {
        return this == SLIDING_WINDOW_LOG || this == SLIDING_WINDOW_COUNTER;
    }

    /**
     * @param limit a window of a rule
     * @return the most tokens the window holds under this algorithm: the limit's capacity, but one for the leaky
     *         bucket
     */
    public long capacity(Limit limit) {
        return this == LEAKY_BUCKET ? 1 : limit.capacity();
    }
}
