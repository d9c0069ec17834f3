package io.github.ratelimit.store;

import io.github.ratelimit.WindowState;

import java.util.List;

/**
 * One key's state under one rule's limits, in a store: what a decision acts on, whatever the algorithm. Each
 * method is one operation on the store (one round trip for a remote store) and is atomic across every window
 * of the limits: a call is counted in all of them or in none. Thread-safe. A store that fails throws a
 * {@link RuntimeException} ({@link RateLimitStoreException} for an outage, {@link RateLimitContentionException}
 * for a key too contended to update), and changes nothing it reports as not done.
 */
public interface KeyState {

    /**
     * Takes {@code cost} now if every window has room for it.
     *
     * @param cost the permits the call takes, at least 1
     * @return whether it was taken, how long until it could be when not, and each window's state after
     */
    Probe tryConsume(long cost);

    /**
     * Takes {@code cost} at the earliest time, from now on, at which every window has room for it, if that time
     * is at most {@code maxWaitNanos} away: the call is counted from that time on, and other calls see those
     * permits as taken at once. Used for a delayed call, right after {@link #tryConsume} said it must wait.
     *
     * @param cost the permits the call takes, at least 1
     * @param maxWaitNanos the longest the call may wait
     * @return nanoseconds until the reserved time (0 for now), or -1 when it is further away than
     *         {@code maxWaitNanos} (and nothing was taken)
     */
    long reserve(long cost, long maxWaitNanos);

    /**
     * Gives back {@code cost} permits that a call took and turned out not to need (another rule rejected it,
     * or it did not fail on a rule that counts failures). An algorithm that remembers calls forgets the most
     * recent ones.
     *
     * @param cost the permits to give back
     */
    void refund(long cost);

    /**
     * The outcome of {@link #tryConsume}.
     *
     * @param consumed whether the permits were taken
     * @param waitNanos when not, nanoseconds until they could be (at least 1); 0 when taken
     * @param windows each window's state after the operation, in the order of the limits
     */
    record Probe(boolean consumed, long waitNanos, List<WindowState> windows) {
    }
}
