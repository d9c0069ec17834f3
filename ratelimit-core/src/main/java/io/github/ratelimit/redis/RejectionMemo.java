package io.github.ratelimit.redis;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.Decision;
import io.github.ratelimit.internal.bucket.Pipelining;
import io.github.ratelimit.store.BucketStore.KeyState;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A key's state that remembers until when Redis last said the key cannot pay, and answers calls before then itself,
 * for at most {@link #RECHECK_NANOS} at a time: a flood from a client already rejected costs Redis one script per
 * second and key at most, not one per request (Envoy's ratelimit keeps such a cache of over-limit keys).
 *
 * <p>It only ever rejects: a call it answers would have been rejected by Redis too, unless tokens came back meanwhile
 * through another instance (a refund, a reset, a raised limit), in which case this instance stays stricter than Redis
 * for at most {@link #RECHECK_NANOS}, never looser. A reset or a limit change this instance learns of replaces the whole
 * state ({@link KeyStates#forget}), memory included, and so does a refund made here. A call dearer than the one
 * rejected is not covered by it (a cost below it may still fit), and asks Redis. Thread-safe.
 */
final class RejectionMemo implements KeyState, Pipelining {

    /** The longest this JVM answers for Redis before it asks again: how late it learns of another's reset. */
    static final long RECHECK_NANOS = 1_000_000_000L;

    /**
     * What Redis answered last time the key could not pay.
     *
     * @param cost the cost that did not fit
     * @param at the store clock's time of the answer, in nanoseconds
     * @param until when the cost would fit, by the store's clock
     * @param recheckAt when to ask Redis again, if still rejected: at {@code until} or {@link #RECHECK_NANOS} after
     *        the answer, whichever comes first
     * @param windows the key's windows as Redis reported them then
     */
    private record Rejection(long cost, long at, long until, long recheckAt, List<Decision.Window> windows) {}

    private final KeyState redis;
    private final TimeMeter clock;
    private volatile @Nullable Rejection last;

    /**
     * @param redis the key's state in Redis
     * @param clock the store's clock, the one Redis's waits are measured on
     */
    RejectionMemo(KeyState redis, TimeMeter clock) {
        this.redis = redis;
        this.clock = clock;
    }

    @Override
    public Probe consume(long cost) {
        Probe remembered = remembered(cost, 0);
        return remembered != null ? remembered : remember(cost, redis.consume(cost));
    }

    @Override
    public @Nullable Probe known(long cost) {
        return remembered(cost, 0);
    }

    /** Answers from memory when it can; else starts Redis's consume (at once when it can be started apart). */
    @Override
    public Sent send(long cost) {
        Probe remembered = remembered(cost, 0);
        if (remembered != null) {
            return () -> remembered;
        }
        if (redis instanceof Pipelining pipelining) {
            Sent sent = pipelining.send(cost);
            return () -> remember(cost, sent.await());
        }
        return () -> remember(cost, redis.consume(cost));
    }

    /** A remembered rejection answers from memory; anything else is Redis's to say (nothing is remembered). */
    @Override
    public Probe peek(long cost) {
        Probe remembered = remembered(cost, 0);
        return remembered != null ? remembered : redis.peek(cost);
    }

    @Override
    public Probe reserve(long cost, long maxWaitNanos) {
        Probe remembered = remembered(cost, maxWaitNanos);
        return remembered != null ? remembered : remember(cost, redis.reserve(cost, maxWaitNanos));
    }

    @Override
    public Probe reserve(long cost, long minWaitNanos, long maxWaitNanos) {
        Probe remembered = remembered(cost, maxWaitNanos);
        return remembered != null ? remembered : remember(cost, redis.reserve(cost, minWaitNanos, maxWaitNanos));
    }

    @Override
    public void refund(long cost, long receipt) {
        last = null;
        redis.refund(cost, receipt);
    }

    /**
     * A charge pushes the key's next call further out: the rejection remembered would say too early a time, so it is
     * forgotten. (A charge made through another instance is learnt at the next recheck, as a refund is.)
     */
    @Override
    public long charge(long tokens) {
        last = null;
        return redis.charge(tokens);
    }

    /** As {@link #charge(long)}, where the call of {@code receipt} was counted. */
    @Override
    public long charge(long tokens, long receipt) {
        last = null;
        return redis.charge(tokens, receipt);
    }

    /**
     * @param cost the call's cost
     * @param maxWaitNanos the longest the call may wait (0 for a call that may not)
     * @return the rejection Redis would give, when the key is remembered unable to pay this cost within that wait;
     *         else {@code null}
     */
    private @Nullable Probe remembered(long cost, long maxWaitNanos) {
        Rejection r = last;
        if (r == null || cost < r.cost) {
            return null;
        }
        long now = clock.currentTimeNanos();
        long wait = r.until - now;
        if (wait <= maxWaitNanos || now >= r.recheckAt) {
            // Time has come, or to ask again, or the call may wait that long: Redis decides (and is remembered anew).
            if (wait <= 0) {
                last = null;
            }
            return null;
        }
        return new Probe(false, wait, aged(r.windows, now - r.at), 0);
    }

    /** Remembers a rejection; forgets on anything that took tokens (a reservation pushes the next call's wait out). */
    private Probe remember(long cost, Probe answer) {
        if (answer.consumed()) {
            if (last != null) {
                last = null;
            }
        } else if (answer.waitNanos() > 0) {
            long now = clock.currentTimeNanos();
            long wait = answer.waitNanos();
            last = new Rejection(cost, now, now + wait, now + Math.min(wait, RECHECK_NANOS), answer.windows());
        }
        return answer;
    }

    /** The windows as they were, with their resets brought forward by the time that has passed. */
    private static List<Decision.Window> aged(List<Decision.Window> windows, long elapsedNanos) {
        if (elapsedNanos <= 0 || windows.isEmpty()) {
            return windows;
        }
        List<Decision.Window> aged = new ArrayList<>(windows.size());
        for (Decision.Window w : windows) {
            aged.add(new Decision.Window(
                    w.name(),
                    w.limit(),
                    w.permits(),
                    w.period(),
                    w.remaining(),
                    Math.max(0, w.resetNanos() - elapsedNanos)));
        }
        return aged;
    }
}
