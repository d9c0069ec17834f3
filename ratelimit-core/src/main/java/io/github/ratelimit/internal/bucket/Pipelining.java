package io.github.ratelimit.internal.bucket;

import io.github.ratelimit.store.BucketStore.KeyState;

/**
 * A key state in a remote store whose consume can be started and awaited apart, so that the consumes of one call's
 * rules travel to the store together, in one round trip, rather than one after another. The engine asks
 * {@link #known} of every rule first (a rejection this JVM remembers decides the call with no round trip at all),
 * then starts each rule's consume with {@link #send}, then awaits them in order.
 */
public interface Pipelining {

    /**
     * @param cost the permits the call would take
     * @return what {@link KeyState#consume} would answer without asking the store (a rejection remembered until a
     *         later time), or {@code null} when only the store can tell (the default: a state that remembers nothing)
     */
    default KeyState.Probe known(long cost) {
        return null;
    }

    /**
     * Starts {@link KeyState#consume}: the store sees it with the other operations the thread starts before it
     * awaits one. Every consume started must be awaited, on the thread that started it, even when its outcome is
     * no longer wanted (then given back with {@link KeyState#refund} if it took permits).
     *
     * @param cost the permits the call takes, at least 1
     * @return the consume on its way
     * @throws RuntimeException as {@link KeyState#consume} would, when it cannot even start (the store refuses
     *         calls during an outage)
     */
    Sent send(long cost);

    /** A consume started by {@link #send}. */
    interface Sent {

        /**
         * @return its outcome, as {@link KeyState#consume} returns it
         * @throws RuntimeException as {@link KeyState#consume} would
         */
        KeyState.Probe await();
    }
}
