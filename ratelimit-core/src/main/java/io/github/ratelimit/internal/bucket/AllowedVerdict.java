package io.github.ratelimit.internal.bucket;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Decision.Verdict;
import io.github.ratelimit.Mode;
import java.time.Duration;
import java.util.AbstractList;
import java.util.List;
import java.util.RandomAccess;

/**
 * The verdicts of a call that one rule decided and its bucket allowed at once: a list of one {@link Verdict}
 * (outcome {@link Outcome#ALLOWED}, basis {@link Basis#BUCKET}, no receipt), whose windows the bucket recorded as
 * numbers when it took the call, and whose records ({@link Verdict}, {@link Decision.Window}) are made only when
 * something reads them: a call whose decision nobody reads (no headers, no listener) makes none. The values are
 * those the eager path ({@link BucketKeyState#windows(io.github.bucket4j.BucketState, long)}) gives.
 *
 * <p>Immutable once {@linkplain RecordingBucket#consume(long, AllowedVerdict) recorded}: the bucket writes it before
 * the decision holding it is made, and the decision's final field publishes it. Holds at most
 * {@value #MAX_WINDOWS} windows; a rule with more takes the engine's general path.
 */
public final class AllowedVerdict extends AbstractList<Verdict> implements RandomAccess {

    /** The most windows recorded in place. */
    public static final int MAX_WINDOWS = 2;

    /**
     * What every allowed verdict of one rule under one bucket configuration shares: made once per rule.
     */
    public static final class Shape {

        private final String rule;
        private final String publicName;
        private final Mode mode;
        private final long permits;
        private final BucketConfiguration configuration;
        private final Bandwidth[] bandwidths;
        /** Each window's period, made once: a {@code Duration} per window read would be most of a verdict's bytes. */
        private final Duration[] periods;

        private Shape(String rule, String publicName, Mode mode, long permits, BucketConfiguration configuration) {
            this.rule = rule;
            this.publicName = publicName;
            this.mode = mode;
            this.permits = permits;
            this.configuration = configuration;
            this.bandwidths = configuration.getBandwidths();
            this.periods = new Duration[bandwidths.length];
            for (int i = 0; i < bandwidths.length; i++) {
                periods[i] = Duration.ofNanos(bandwidths[i].getRefillPeriodNanos());
            }
        }

        /**
         * @param rule the rule's name
         * @param publicName the name clients see for it
         * @param mode its mode
         * @param permits the permits a call takes from it (its cost)
         * @param configuration the configuration of its buckets
         * @return the shape, or {@code null} when the configuration has more windows than a verdict records in place
         */
        public static Shape of(
                String rule, String publicName, Mode mode, long permits, BucketConfiguration configuration) {
            return configuration.getBandwidths().length > MAX_WINDOWS
                    ? null
                    : new Shape(rule, publicName, mode, permits, configuration);
        }

        /** @return the configuration the windows are of */
        public BucketConfiguration configuration() {
            return configuration;
        }
    }

    private final Shape shape;
    /**
     * The key the call is counted by until the verdict is first read, then the verdict, which holds it: one field
     * for both keeps a decision of one rule within its allocation goal (docs/BENCHMARKS.md, G1). Racing readers make
     * equal verdicts.
     */
    private Object keyOrVerdict;

    /** Each window's tokens after the call, as the bucket holds them (below zero after a reservation ahead). */
    private long current0;
    /** Each window's reset: for a greedy window, the state's partly refilled token, from which it is computed. */
    private long reset0;

    private long current1;
    private long reset1;

    /**
     * @param shape the rule's shape
     * @param key the key the call is counted by
     */
    public AllowedVerdict(Shape shape, String key) {
        this.shape = shape;
        this.keyOrVerdict = key;
    }

    /**
     * Records a window's state after the call was taken; for the bucket that took it.
     *
     * @param window the window's index in the configuration
     * @param current the window's tokens, as the bucket holds them
     * @param reset for a window that refills at intervals, nanoseconds until it is full again; for a greedy one, the
     *        state's rounding error (its partly refilled token), from which that is computed when read
     */
    void record(int window, long current, long reset) {
        if (window == 0) {
            current0 = current;
            reset0 = reset;
        } else {
            current1 = current;
            reset1 = reset;
        }
    }

    /** @return the shape this verdict was made with */
    public Shape shape() {
        return shape;
    }

    @Override
    public Verdict get(int index) {
        if (index != 0) {
            throw new IndexOutOfBoundsException("Index " + index + " out of bounds for length 1");
        }
        Object known = keyOrVerdict;
        if (known instanceof Verdict v) {
            return v;
        }
        Verdict v = new Verdict(
                shape.rule,
                (String) known,
                shape.mode,
                Outcome.ALLOWED,
                Basis.BUCKET,
                windows(),
                0,
                0,
                shape.publicName,
                shape.permits);
        keyOrVerdict = v;
        return v;
    }

    private List<Decision.Window> windows() {
        Decision.Window first = window(0, current0, reset0);
        return shape.bandwidths.length == 1 ? List.of(first) : List.of(first, window(1, current1, reset1));
    }

    private Decision.Window window(int i, long current, long reset) {
        Bandwidth b = shape.bandwidths[i];
        long resetNanos =
                b.isRefillIntervally() ? reset : BucketKeyState.resetNanos(b, b.getCapacity() - current, reset, 0);
        return new Decision.Window(
                b.getId(), b.getCapacity(), b.getRefillTokens(), shape.periods[i], Math.max(0, current), resetNanos);
    }

    @Override
    public int size() {
        return 1;
    }
}
