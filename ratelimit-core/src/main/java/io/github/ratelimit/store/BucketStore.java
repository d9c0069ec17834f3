package io.github.ratelimit.store;

import io.github.ratelimit.LocalFirst;

/**
 * Where the state of rate-limited keys lives: in this JVM ({@link LocalBucketStore}) or in a shared store such
 * as Redis ({@link JedisBucketStore}), for every {@link io.github.ratelimit.Algorithm}.
 *
 * <p>The limiter calls {@link #state} once per rule per decision and then makes one call on the result
 * ({@link KeyState#consume}, or for a delayed call {@link KeyState#reserve} after it); a remote store should
 * make that one call cost one network round trip, and {@link #state} itself none.
 *
 * <p>A store may drop a key's state only once it can no longer matter, judged from its actual state: a bucket
 * once it is full again (one that owes tokens for a reservation is not full until the debt is repaid), a
 * sliding log or counter once its newest counted call (a reservation included) has slid out of the longest
 * window. Dropping it earlier would forgive what was counted.
 *
 * <p>Implementations must be thread-safe. A store that fails (unreachable, timed out) throws a
 * {@link RuntimeException} from {@link #state} or from the state's methods; the rule's
 * {@link io.github.ratelimit.StoreFailurePolicy} then decides, so a store should fail fast rather than wait.
 */
public interface BucketStore extends AutoCloseable {

    /**
     * Returns the state of a key, created empty (every window with all its permits) when absent. When it exists
     * under other limits (a rule's limits, or a key's own limits, changed), the new limits apply to it: a
     * bucket is replaced with Bucket4j's {@code TokensInheritanceStrategy.ADDITIVE} (a window whose capacity grows
     * gains the difference, one whose capacity shrinks keeps at most the new capacity), and a sliding log or
     * counter counts its calls against the new limits.
     *
     * @param key the key's identity
     * @param limits its limits and algorithm
     * @param localFirst how far this JVM may run ahead of the store; {@code null} for not at all; stores that
     *        keep state in this JVM anyway ignore it
     * @return the key's state, whose operations act on the shared state
     */
    KeyState state(BucketKey key, StoreLimits limits, LocalFirst localFirst);

    /**
     * Forgets a key's state, whatever its algorithm: its next call finds every window with all its permits. In a
     * shared store, at once for every instance.
     *
     * @param key the key's identity
     * @throws RateLimitStoreException when a shared store cannot be reached
     * @throws UnsupportedOperationException when the store cannot (the default, for stores written before this
     *         method)
     */
    default void reset(BucketKey key) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot reset a key");
    }

    /**
     * Told by the limiter when a key's own limits changed (its {@link io.github.ratelimit.LimitProvider} said so),
     * before the key's next call. A shared store whose instances settle on the newest configuration written makes
     * this instance's next write the newest, so the change holds on every instance, a change back to the rule's
     * own limits included. Stores with nothing to do ignore it (the default).
     *
     * @param key the key, or {@code null} for every key
     */
    default void limitsChanged(BucketKey key) {
    }

    /**
     * Releases connections and threads. Idempotent.
     */
    @Override
    default void close() {
    }
}
