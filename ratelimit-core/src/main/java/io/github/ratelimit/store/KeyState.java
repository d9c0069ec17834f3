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
     * @return whether it was taken, how long until it could be when not, each window's state after, and the
     *         receipt to give it back with
     */
    Probe consume(long cost);

    /**
     * Takes {@code cost} at the earliest time, from now on, at which every window has room for it, if that time
     * is at most {@code maxWaitNanos} away: the call is counted from that time on, and other calls see those
     * permits as taken at once. Used for a delayed call, right after {@link #consume} said it must wait.
     *
     * @param cost the permits the call takes, at least 1
     * @param maxWaitNanos the longest the call may wait
     * @return whether it was reserved, the nanoseconds until the reserved time (0 for now; when not reserved, how
     *         long it would have had to wait), and the receipt; no window states
     */
    Probe reserve(long cost, long maxWaitNanos);

    /**
     * As {@link #reserve(long, long)}, counting the call no earlier than {@code minWaitNanos} from now: for a call
     * that another rule delays that long, so an algorithm that remembers when calls run counts it when it runs.
     * The default ignores {@code minWaitNanos}, which is right where permits are interchangeable in time (a token
     * bucket).
     *
     * @param cost the permits the call takes, at least 1
     * @param minWaitNanos the earliest the call will run, from now
     * @param maxWaitNanos the longest the call may wait
     * @return as {@link #reserve(long, long)}
     */
    default Probe reserve(long cost, long minWaitNanos, long maxWaitNanos) {
        return reserve(cost, maxWaitNanos);
    }

    /**
     * Gives back the {@code cost} permits of one call that turned out not to need them (another rule rejected it,
     * it did not fail on a rule that counts failures, or it was cancelled while delayed). An algorithm that
     * remembers calls forgets exactly that call (by its receipt); if it has already forgotten it (the call left
     * every window), nothing changes.
     *
     * @param cost the permits to give back
     * @param receipt the receipt {@link #consume} or {@link #reserve} returned with the call
     */
    void refund(long cost, long receipt);

    /**
     * The outcome of {@link #consume} or {@link #reserve}.
     *
     * @param consumed whether the permits were taken (or reserved)
     * @param waitNanos when not taken, nanoseconds until they could be (at least 1); when reserved, the delay
     *        (0 for now); 0 when taken now
     * @param windows each window's state after the operation, in the order of the limits (empty for
     *        {@link #reserve})
     * @param receipt what identifies this call's permits to {@link #refund}: for the sliding windows, the time on
     *        the store's clock it was counted at; 0 for algorithms that give back by count alone
     */
    record Probe(boolean consumed, long waitNanos, List<WindowState> windows, long receipt) {
    }
}
