package io.github.ratelimit.internal.bucket;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketState;
import io.github.bucket4j.ConsumptionProbe;
import io.github.bucket4j.EstimationProbe;
import io.github.bucket4j.VerboseResult;
import io.github.ratelimit.Decision;
import io.github.ratelimit.store.BucketStore.KeyState;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/**
 * A key's state on a Bucket4j bucket: {@link io.github.ratelimit.Algorithm#TOKEN_BUCKET} and
 * {@link io.github.ratelimit.Algorithm#FIXED_WINDOW}. One verbose operation per probe, one reservation per
 * delayed call, {@code addTokens} per refund: the Redis store's buckets. The local store's bucket is a
 * {@link KeyState} of its own ({@code LocalBucketStore.LocalBucket}), which shares {@link #windows}.
 */
public final class BucketKeyState implements KeyState {

    private final Bucket bucket;

    /**
     * @param bucket the bucket (a Redis proxy: each write sets its key's expiry from the state it writes)
     */
    public BucketKeyState(Bucket bucket) {
        this.bucket = bucket;
    }

    /** Tokens are interchangeable: the receipt is not needed. */
    @Override
    public void refund(long cost, long receipt) {
        bucket.addTokens(cost);
    }

    @Override
    public Probe consume(long cost) {
        return probe(bucket.asVerbose().tryConsumeAndReturnRemaining(cost));
    }

    /** One read of the bucket (on Redis a compare-and-set round trip that writes nothing, unless the key is new). */
    @Override
    public Probe peek(long cost) {
        VerboseResult<EstimationProbe> result = bucket.asVerbose().estimateAbilityToConsume(cost);
        EstimationProbe probe = result.getValue();
        return new Probe(
                probe.canBeConsumed(),
                probe.canBeConsumed() ? 0 : Math.max(1, probe.getNanosToWaitForRefill()),
                windows(result),
                0);
    }

    /**
     * @param result a verbose {@code tryConsumeAndReturnRemaining}'s result
     * @return it as a probe
     */
    public static Probe probe(VerboseResult<ConsumptionProbe> result) {
        ConsumptionProbe probe = result.getValue();
        return new Probe(
                probe.isConsumed(),
                probe.isConsumed() ? 0 : Math.max(1, probe.getNanosToWaitForRefill()),
                windows(result),
                0);
    }

    @Override
    public Probe reserve(long cost, long maxWaitNanos) {
        CapturingStrategy strategy = new CapturingStrategy();
        boolean reserved;
        try {
            reserved = bucket.asBlocking().tryConsume(cost, maxWaitNanos, strategy);
        } catch (InterruptedException e) {
            // CapturingStrategy never blocks, so Bucket4j cannot be interrupted here.
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        if (!reserved) {
            return new Probe(false, maxWaitNanos + 1, List.of(), 0);
        }
        return new Probe(true, Math.max(0, strategy.nanos), List.of(), 0);
    }

    /**
     * @param result a verbose operation's result
     * @return each window's state, from the bucket's state after the operation
     */
    public static List<Decision.Window> windows(VerboseResult<?> result) {
        return windows(result.getState(), result.getOperationTimeNanos());
    }

    /**
     * Each window's state, from a bucket's state at {@code now}.
     *
     * @param state a bucket's state
     * @param now the time of the state, in nanoseconds
     * @return each window's state
     */
    public static List<Decision.Window> windows(BucketState state, long now) {
        Bandwidth[] bandwidths = state.getConfiguration().getBandwidths();
        Decision.Window[] windows = new Decision.Window[bandwidths.length];
        for (int i = 0; i < bandwidths.length; i++) {
            Bandwidth b = bandwidths[i];
            long current = state.getCurrentSize(i);
            long reset = resetNanos(b, b.getCapacity() - current, state.getRoundingError(i), now);
            windows[i] = new Decision.Window(
                    b.getId(),
                    b.getCapacity(),
                    b.getRefillTokens(),
                    Duration.ofNanos(b.getRefillPeriodNanos()),
                    Math.max(0, current),
                    reset);
        }
        return Arrays.asList(windows);
    }

    /**
     * Records each window's state from a bucket's state at {@code now} into an allowed verdict: the values
     * {@link #windows(BucketState, long)} gives, with no records made.
     *
     * @param state a bucket's state, of the verdict's shape's configuration
     * @param now the time of the state, in nanoseconds
     * @param verdict receives the windows
     */
    public static void record(BucketState state, long now, AllowedVerdict verdict) {
        Bandwidth[] bandwidths = state.getConfiguration().getBandwidths();
        for (int i = 0; i < bandwidths.length; i++) {
            Bandwidth b = bandwidths[i];
            long current = state.getCurrentSize(i);
            // A greedy window's reset depends on the state alone, not on the time: it is computed when read, from the
            // state's partly refilled token; an interval window's depends on the time, so it is computed now.
            verdict.record(
                    i,
                    current,
                    b.isRefillIntervally()
                            ? resetNanos(b, b.getCapacity() - current, state.getRoundingError(i), now)
                            : state.getRoundingError(i));
        }
    }

    /**
     * Nanoseconds until a bandwidth short of {@code deficit} tokens is full again.
     *
     * @param b the bandwidth
     * @param deficit the tokens it lacks (none or fewer: it is full)
     * @param roundingError Bucket4j's record of the partly refilled next token (in token-nanoseconds) of a greedy
     *        bandwidth
     * @param nowNanos the time, for a bandwidth that refills at intervals aligned to the clock (a greedy one ignores it)
     * @return the nanoseconds, 0 when full, saturated at {@code Long.MAX_VALUE}
     */
    public static long resetNanos(Bandwidth b, long deficit, long roundingError, long nowNanos) {
        if (deficit <= 0) {
            return 0;
        }
        long period = b.getRefillPeriodNanos();
        long tokens = b.getRefillTokens();
        if (b.isRefillIntervally()) {
            long periods = (deficit + tokens - 1) / tokens;
            long untilBoundary = b.isIntervallyAligned() ? period - Math.floorMod(nowNanos, period) : period;
            return saturatedAdd(untilBoundary, saturatedMultiply(periods - 1, period));
        }
        long product = saturatedMultiply(deficit, period);
        if (product == Long.MAX_VALUE) {
            return (long) Math.ceil((double) deficit * period / tokens);
        }
        long remainder = Math.max(0, product - roundingError);
        return (remainder + tokens - 1) / tokens;
    }

    /**
     * The tokens a charge may take from a bucket's state, so that no window is left owing more than
     * {@link #maxDebt its bound} ({@link KeyState#charge}).
     *
     * @param state a bucket's state, refilled to now
     * @param tokens the tokens asked for, at least 1
     * @return {@code tokens}, or fewer so that every window keeps at least {@code -maxDebt} tokens; never negative
     */
    public static long chargeable(BucketState state, long tokens) {
        Bandwidth[] bandwidths = state.getConfiguration().getBandwidths();
        long allowed = tokens;
        for (int i = 0; i < bandwidths.length; i++) {
            // A window holds at most its capacity (Limit#MAX_PERMITS) and owes at most DebtBound.CEILING: no overflow.
            long room = state.getCurrentSize(i) + maxDebt(bandwidths[i]);
            allowed = Math.min(allowed, Math.max(0, room));
        }
        return allowed;
    }

    /**
     * The most a charge leaves a window of a bucket owing ({@link DebtBound}).
     *
     * @param window a window of a bucket
     * @return the most tokens it may owe, at least its capacity
     */
    public static long maxDebt(Bandwidth window) {
        return DebtBound.of(window.getCapacity(), window.getRefillTokens(), window.getRefillPeriodNanos());
    }

    /**
     * @param a a non-negative factor
     * @param b a non-negative factor
     * @return {@code a * b} for non-negative factors, or {@code Long.MAX_VALUE} when it overflows
     */
    public static long saturatedMultiply(long a, long b) {
        long high = Math.multiplyHigh(a, b);
        long low = a * b;
        return (high == 0 && low >= 0) ? low : Long.MAX_VALUE;
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }
}
