package io.github.ratelimit.store;

import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketConfiguration;

/**
 * Where buckets live: in this JVM ({@link LocalBucketStore}) or in a shared store such as Redis.
 *
 * <p>The limiter calls {@link #bucket} once per rule per decision and then makes one Bucket4j call on the
 * result (a verbose {@code tryConsumeAndReturnRemaining}, or a reservation for a delayed call); a remote store
 * should make that one call cost one network round trip, and {@link #bucket} itself none. After a reservation
 * that leaves the bucket owing tokens (a delayed call), the limiter calls {@link #bucket} once more for the same
 * key, so a store that sets expiry when a bucket is accessed sees the debt.
 *
 * <p>A store may drop a bucket only once it is full again, judged from its actual state (a bucket that owes
 * tokens for a reservation is not full until the debt is repaid): a new bucket is full, so dropping one earlier
 * would forgive what it owes.
 *
 * <p>Implementations must be thread-safe. A store that fails (unreachable, timed out) throws a
 * {@link RuntimeException} from {@link #bucket} or from the bucket's methods; the rule's
 * {@link io.github.ratelimit.StoreFailurePolicy} then decides, so a store should fail fast rather than wait.
 */
public interface BucketStore extends AutoCloseable {

    /**
     * Returns the bucket for a key, creating it with {@code configuration} when absent. When the bucket exists
     * with another configuration (a rule's limits, or a key's own limits, changed), the store replaces it with
     * Bucket4j's {@code TokensInheritanceStrategy.ADDITIVE}: a window whose capacity grows gains the difference,
     * one whose capacity shrinks keeps at most the new capacity.
     *
     * @param key the bucket's identity
     * @param configuration its configuration; stores may rely on identity of equal configurations for speed,
     *        and must fall back to {@code equals}
     * @return a bucket whose operations act on the shared state
     */
    Bucket bucket(BucketKey key, BucketConfiguration configuration);

    /**
     * As {@link #bucket(BucketKey, BucketConfiguration)}, for a rule that allows this JVM to decide from a local
     * copy and synchronize now and then. A store that keeps buckets in this JVM anyway ignores it (the default).
     *
     * @param key the bucket's identity
     * @param configuration its configuration
     * @param localFirst how far this JVM may run ahead of the store; {@code null} for not at all
     * @return a bucket
     */
    default Bucket bucket(BucketKey key, BucketConfiguration configuration, io.github.ratelimit.LocalFirst localFirst) {
        return bucket(key, configuration);
    }

    /**
     * Releases connections and threads. Idempotent.
     */
    @Override
    default void close() {
    }
}
