package io.github.ratelimit.store;

import io.github.bucket4j.BucketConfiguration;
import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Limit;
import io.github.ratelimit.Rule.LocalFirst;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Where the state of rate-limited keys lives: in this JVM ({@link LocalBucketStore}) or in a shared store such
 * as Redis ({@link io.github.ratelimit.redis.JedisBucketStore}), for every {@link io.github.ratelimit.Algorithm}.
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
    KeyState state(Key key, Limits limits, LocalFirst localFirst);

    /**
     * As {@link #state(Key, Limits, LocalFirst)}, for the key of {@code rule} named {@code key}: a store that finds a key's
     * state without a {@link Key} object overrides it, so the limiter's decisions on it make none (the default makes
     * one and calls the other).
     *
     * @param rule the rule's name, as {@link Key#rule()}
     * @param key the resolved key, as {@link Key#key()}
     * @param limits its limits and algorithm
     * @param localFirst as {@link #state(Key, Limits, LocalFirst)}
     * @return the key's state
     */
    default KeyState state(String rule, String key, Limits limits, LocalFirst localFirst) {
        return state(new Key(rule, key), limits, localFirst);
    }

    /**
     * Forgets a key's state, whatever its algorithm: its next call finds every window with all its permits, and no
     * block ({@link #block}). In a shared store, at once for every instance.
     *
     * @param key the key's identity
     * @throws RateLimitStoreException when a shared store cannot be reached
     * @throws UnsupportedOperationException when the store cannot (the default, for stores written before this
     *         method)
     */
    default void reset(Key key) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot reset a key");
    }

    /**
     * Whether this store keeps blocks ({@link #block}, {@link #blockedNanos}): a limiter refuses a rule with a
     * {@link io.github.ratelimit.Rule#blockFor() block} on a store that does not (the default).
     *
     * @return whether the store keeps blocks
     */
    default boolean keepsBlocks() {
        return false;
    }

    /**
     * Says how long the key stays blocked ({@link #block}).
     *
     * @param key the key's identity
     * @return nanoseconds left of the key's block, 0 when it has none (the default)
     */
    default long blockedNanos(Key key) {
        return 0;
    }

    /**
     * Blocks a key for {@code nanos} from now, unless it is blocked already: a block is never made longer by the
     * calls it refuses. The block lives with the key's state, bounded like it, and ends by itself; {@link #reset}
     * lifts it.
     *
     * @param key the key's identity
     * @param nanos how long, at least 1
     * @return the nanoseconds left of the key's block afterwards: {@code nanos} for a new block, less for one that
     *         was already running
     * @throws UnsupportedOperationException when the store keeps no blocks (the default)
     */
    default long block(Key key, long nanos) {
        throw new UnsupportedOperationException(getClass().getName() + " keeps no blocks");
    }

    /**
     * Told by the limiter when a key's own limits changed (its {@link io.github.ratelimit.LimitProvider} said so),
     * before the key's next call. A shared store whose instances settle on the newest configuration written makes
     * this instance's next write the newest, so the change holds on every instance, a change back to the rule's
     * own limits included. Stores with nothing to do ignore it (the default).
     *
     * @param key the key, or {@code null} for every key
     */
    default void limitsChanged(Key key) {}

    /**
     * Releases connections and threads. Idempotent.
     */
    @Override
    default void close() {}

    /**
     * Identifies one bucket: a rule and a key under it.
     *
     * @param rule the rule's name (printable ASCII, at most 200 characters, no braces)
     * @param key the resolved key, at most 128 characters (longer keys are hashed before they get here); may
     *        hold any characters, including braces, so stores must escape it where that matters
     */
    public record Key(String rule, String key) {

        /**
         * @param rule the rule's name
         * @param key the resolved key
         * @throws NullPointerException when a component is null
         */
        public Key {
            Objects.requireNonNull(rule, "rule");
            Objects.requireNonNull(key, "key");
        }
    }

    /**
     * What a store needs to know of a rule to keep a key's state: its windows and its algorithm. Immutable; the
     * limiter makes one per rule and per distinct set of per-key limits, so stores may rely on identity for speed
     * (and must fall back to {@link #equals}).
     */
    public static final class Limits {

        private final List<Limit> limits;
        private final Algorithm algorithm;
        private final long longestPeriodNanos;
        private final long longestPermits;
        /** The Bucket4j configuration, for the algorithms Bucket4j runs; made once, so equal rules share it. */
        private final @Nullable BucketConfiguration configuration;
        /** Whether a window is a calendar quota: the store counts the windows itself, as for sliding windows. */
        private final boolean calendar;
        /** The most calls in flight, for a concurrency rule (no windows); 0 for a rule of windows. */
        private final int concurrency;

        private Limits(int concurrency) {
            this.limits = List.of();
            this.algorithm = Algorithm.TOKEN_BUCKET;
            this.longestPeriodNanos = 0;
            this.longestPermits = concurrency;
            this.calendar = false;
            this.configuration = null;
            this.concurrency = concurrency;
        }

        private Limits(List<Limit> limits, Algorithm algorithm) {
            this.concurrency = 0;
            this.limits = List.copyOf(limits);
            this.algorithm = Objects.requireNonNull(algorithm, "algorithm");
            if (this.limits.isEmpty()) {
                throw new IllegalArgumentException("no limits");
            }
            Limit longest = this.limits.get(0);
            for (Limit limit : this.limits) {
                if (limit.period().compareTo(longest.period()) > 0) {
                    longest = limit;
                }
            }
            this.longestPeriodNanos = longest.period().toNanos();
            this.longestPermits = longest.permits();
            this.calendar = this.limits.stream().anyMatch(l -> l.calendar() != null);
            this.configuration =
                    algorithm.isSliding() || calendar ? null : BucketConfigurations.of(this.limits, algorithm);
        }

        /**
         * @param limits the windows, at least one (as validated by {@link io.github.ratelimit.Rule})
         * @param algorithm how they count
         * @return the limits
         */
        public static Limits of(List<Limit> limits, Algorithm algorithm) {
            return new Limits(limits, algorithm);
        }

        /**
         * @param max the most calls in flight per key, at least 1
         * @return the limits of a concurrency rule ({@link io.github.ratelimit.Rule#concurrency()}): no windows; the
         *         store keeps the key's calls in flight ({@link KeyState} for slots)
         */
        public static Limits concurrency(int max) {
            if (max < 1) {
                throw new IllegalArgumentException("at least one call in flight, not " + max);
            }
            return new Limits(max);
        }

        /**
         * @return the most calls in flight per key, for a concurrency rule; 0 for a rule of windows. A store keeps such
         *         a key as slots: {@link KeyState#consume} takes one (any cost takes one) and its receipt is the
         *         slot's lease, which {@link KeyState#refund} gives back, and nothing else does but the lease's
         *         expiry in a shared store; {@link KeyState#reserve} is not supported
         */
        public int concurrency() {
            return concurrency;
        }

        /**
         * @param share the part of each limit to keep, above 0 and at most 1; at least one permit stays
         * @return these limits scaled down (for a local fallback that each of several instances holds)
         */
        public Limits scaled(double share) {
            if (share >= 1.0) {
                return this;
            }
            if (concurrency > 0) {
                return new Limits(Math.max(1, (int) Math.floor(concurrency * share)));
            }
            Limit[] scaled = new Limit[limits.size()];
            for (int i = 0; i < scaled.length; i++) {
                Limit limit = limits.get(i);
                long permits = Math.max(1, (long) Math.floor(limit.permits() * share));
                long capacity = Math.max(1, (long) Math.floor(limit.capacity() * share));
                scaled[i] = new Limit(permits, limit.period(), capacity, limit.calendar());
            }
            return new Limits(List.of(scaled), algorithm);
        }

        /**
         * @return the windows
         */
        public List<Limit> limits() {
            return limits;
        }

        /**
         * @return how the windows count
         */
        public Algorithm algorithm() {
            return algorithm;
        }

        /** @return the longest window's period in nanoseconds */
        long longestPeriodNanos() {
            return longestPeriodNanos;
        }

        /** @return the longest window's limit */
        long longestPermits() {
            return longestPermits;
        }

        /**
         * @return whether Bucket4j runs these windows (a token bucket, a fixed window of fixed lengths); otherwise the
         *         store counts them itself (sliding windows, calendar quotas)
         */
        public boolean onBucket4j() {
            return configuration != null;
        }

        /** @return whether a window is a calendar quota ({@code 1000/1mo}) */
        public boolean calendar() {
            return calendar;
        }

        /** @return the Bucket4j configuration of a token-bucket or fixed-window rule */
        public BucketConfiguration bucketConfiguration() {
            if (configuration == null) {
                throw new IllegalStateException(algorithm + " does not run on Bucket4j");
            }
            return configuration;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Limits other
                    && algorithm == other.algorithm
                    && limits.equals(other.limits)
                    && concurrency == other.concurrency;
        }

        @Override
        public int hashCode() {
            return 31 * limits.hashCode() + algorithm.hashCode() + concurrency;
        }

        @Override
        public String toString() {
            return concurrency > 0 ? concurrency + " in flight" : algorithm + " " + limits;
        }
    }

    /**
     * One key's state under one rule's limits, in a store: what a decision acts on, whatever the algorithm. Each
     * method is one operation on the store (one round trip for a remote store) and is atomic across every window
     * of the limits: a call is counted in all of them or in none. Thread-safe. A store that fails throws a
     * {@link RuntimeException} ({@link RateLimitStoreException} for an outage, {@link ContentionException}
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
         * Says whether {@code cost} fits into every window now, and when it would, without taking it: for a peek
         * ({@link io.github.ratelimit.Guard#peek}). Nothing is counted; a store may tidy what it holds (drop calls no
         * window counts any more), as any operation may.
         *
         * @param cost the permits a call would take, at least 1
         * @return in {@code consumed}, whether it would be taken now (nothing is); otherwise how long until it could
         *         be; each window's state now; receipt 0
         * @throws UnsupportedOperationException from a store that cannot peek (the default); every store of this
         *         project can
         */
        default Probe peek(long cost) {
            throw new UnsupportedOperationException(getClass().getName() + " cannot peek at a key's state");
        }

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
         * Takes {@code tokens} whatever is left, for what a call turned out to use after it ran
         * ({@link io.github.ratelimit.Guard#settle}): a bucket's window may go below zero, a count past its limit, and
         * the window owes the difference (its next calls wait until it allows them again). Bounded: no window is left
         * owing more than it refills in a day, or its capacity when that is more, so what would take it further is not
         * taken, and a huge number neither overflows nor blocks a key for much longer than a day. Counted now, as a
         * call admitted now would be.
         *
         * @param tokens the tokens to take, at least 1
         * @return the tokens taken: {@code tokens}, or fewer where the bound held them back (0 when a window already
         *         owes all it may)
         * @throws UnsupportedOperationException from a state that cannot owe tokens (the default; of this project's
         *         stores, token-bucket, fixed-window and sliding-window-counter keys and calendar quotas can, in this
         *         JVM and in Redis)
         */
        default long charge(long tokens) {
            throw new UnsupportedOperationException(getClass().getName() + " cannot charge tokens after a call");
        }

        /**
         * As {@link #charge(long)}, for the call {@link #consume} or {@link #reserve} answered with {@code receipt}:
         * counted where that call was counted, so an algorithm that counts calls by time charges the interval (a
         * sliding counter) or the window (a calendar quota) that holds the call's own count; when that no longer
         * counts (the call outlived it), the one now open. A bucket's tokens are interchangeable: the default ignores
         * the receipt.
         *
         * @param tokens the tokens to take, at least 1
         * @param receipt the call's receipt, or 0 for none (counted now)
         * @return as {@link #charge(long)}
         * @throws UnsupportedOperationException as {@link #charge(long)}
         */
        default long charge(long tokens, long receipt) {
            return charge(tokens);
        }

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
        record Probe(boolean consumed, long waitNanos, List<Decision.Window> windows, long receipt) {}
    }

    /**
     * Thrown by a {@link BucketStore} that reached the store but could not settle a decision: the bucket kept
     * changing under concurrent writers (other threads or instances) beyond the store's retry budget. Unlike a
     * {@link RateLimitStoreException}, this is not an outage, so the rule's
     * {@link io.github.ratelimit.StoreFailurePolicy} does not apply: the limiter rejects the call (basis
     * {@link io.github.ratelimit.Decision.Basis#CONTENTION}) rather than admit it uncounted, and the store does not count it
     * towards its circuit breaker.
     */
    public static class ContentionException extends RuntimeException {

        private static final long serialVersionUID = 1L;

        /**
         * @param message what happened
         */
        public ContentionException(String message) {
            super(message, null, false, false);
        }
    }
}
