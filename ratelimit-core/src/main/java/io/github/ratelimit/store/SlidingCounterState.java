package io.github.ratelimit.store;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Limit;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.bucket.DebtBound;
import java.util.Arrays;
import java.util.List;

/**
 * The sliding window counters of one key in this JVM: per window of period {@code W}, one count per
 * clock-aligned interval {@code [kW, (k+1)W)}, kept for the previous interval, the current one and any later
 * ones that delayed calls were reserved into.
 *
 * <p>The load at time {@code t} in interval {@code k} is the sum of the counts of intervals {@code k} and later,
 * plus the count of interval {@code k-1} weighted by the share of it the sliding window {@code (t-W, t]} still
 * covers, {@code 1 - (t - kW) / W}. A call of cost {@code c} fits when the load plus {@code c} is at most
 * {@code N}. The load is continuous and never grows with time (at a boundary the weighted previous count is 0
 * and the current count becomes the previous one, weighted 1), so the earliest time a call fits is found in
 * closed form, interval by interval. Counting later intervals' reservations in the load keeps a call counted now
 * from taking the room a delayed call was promised.
 */
final class SlidingCounterState extends LocalSlidingState {

    /** Per window, in the order of the limits: the counts of consecutive intervals from {@link #bases}. */
    @SuppressWarnings("NullAway.Init") // set by trim; canHold, add and windows follow earliest, which calls it
    private long[][] counts;

    @SuppressWarnings("NullAway.Init")
    private long[] bases;

    @SuppressWarnings("NullAway.Init")
    private long[] periods;

    SlidingCounterState(BucketStore.Limits limits, TimeMeter clock, Runnable afterReservation) {
        super(limits, clock, afterReservation);
    }

    /** Drops intervals before the previous one, and the windows of limits that changed. */
    private void trim(BucketStore.Limits limits, long now) {
        List<Limit> list = limits.limits();
        if (periods == null || periods.length != list.size() || !samePeriods(list)) {
            long[][] fresh = new long[list.size()][];
            long[] freshBases = new long[list.size()];
            long[] freshPeriods = new long[list.size()];
            for (int i = 0; i < fresh.length; i++) {
                freshPeriods[i] = list.get(i).period().toNanos();
                int old = periods == null ? -1 : indexOf(freshPeriods[i]);
                fresh[i] = old < 0 ? new long[2] : counts[old];
                freshBases[i] = old < 0 ? Math.floorDiv(now, freshPeriods[i]) - 1 : bases[old];
            }
            counts = fresh;
            bases = freshBases;
            periods = freshPeriods;
        }
        for (int i = 0; i < counts.length; i++) {
            long previous = Math.floorDiv(now, periods[i]) - 1;
            long shift = previous - bases[i];
            if (shift > 0) {
                long[] c = counts[i];
                int keep = (int) Math.max(0, c.length - Math.min(shift, c.length));
                System.arraycopy(c, c.length - keep, c, 0, keep);
                Arrays.fill(c, keep, c.length, 0);
                bases[i] = previous;
            }
        }
    }

    private boolean samePeriods(List<Limit> list) {
        for (int i = 0; i < periods.length; i++) {
            if (periods[i] != list.get(i).period().toNanos()) {
                return false;
            }
        }
        return true;
    }

    private int indexOf(long period) {
        for (int i = 0; i < periods.length; i++) {
            if (periods[i] == period) {
                return i;
            }
        }
        return -1;
    }

    private long count(int window, long interval) {
        long offset = interval - bases[window];
        long[] c = counts[window];
        return offset >= 0 && offset < c.length ? c[(int) offset] : 0;
    }

    /** @return the sum of the counts of interval {@code from} and later */
    private long countFrom(int window, long from) {
        long sum = 0;
        long[] c = counts[window];
        for (long offset = Math.max(0, from - bases[window]); offset < c.length; offset++) {
            sum += c[(int) offset];
        }
        return sum;
    }

    /** @return the last interval with a count, or {@code Long.MIN_VALUE} */
    private long lastCounted(int window) {
        long[] c = counts[window];
        for (int offset = c.length - 1; offset >= 0; offset--) {
            if (c[offset] != 0) {
                return bases[window] + offset;
            }
        }
        return Long.MIN_VALUE;
    }

    /** @return the load of a window at {@code t} */
    private double load(int window, long t) {
        long period = periods[window];
        long k = Math.floorDiv(t, period);
        long offset = t - k * period;
        return countFrom(window, k) + count(window, k - 1) * ((double) (period - offset) / period);
    }

    @Override
    long earliest(BucketStore.Limits limits, long cost, long now) {
        trim(limits, now);
        long at = now;
        List<Limit> list = limits.limits();
        for (int i = 0; i < periods.length; i++) {
            long permits = list.get(i).permits();
            if (cost > permits) {
                return Long.MAX_VALUE; // a scaled-down fallback limit can be smaller than the cost
            }
            at = Math.max(at, earliest(i, permits, cost, now));
        }
        return at;
    }

    private long earliest(int window, long permits, long cost, long now) {
        long period = periods[window];
        long last = lastCounted(window);
        for (long k = Math.floorDiv(now, period); ; k++) {
            long later = countFrom(window, k);
            if (later + cost > permits) {
                continue;
            }
            long previous = count(window, k - 1);
            long start = k * period;
            if (previous == 0) {
                return Math.max(now, start);
            }
            // previous * (1 - offset / period) <= room  <=>  offset >= period * (previous - room) / previous
            long room = permits - cost - later;
            long offset = (long) Math.ceil((double) (previous - room) * period / previous);
            if (offset < period) {
                return Math.max(now, start + offset);
            }
            if (k > last + 1) {
                return Math.max(now, start); // unreachable: beyond the last count both terms are 0
            }
        }
    }

    /**
     * As the script in Redis: the intervals held, summed over the windows, stay within
     * {@link io.github.ratelimit.Rule#MAX_COUNTER_DELAY_INTERVALS} and three per window, whatever the number of
     * waiting calls, so a call delayed further (by another rule) is refused.
     */
    @Override
    boolean canHold(BucketStore.Limits limits, long at, long cost) {
        long held = 0;
        for (int i = 0; i < periods.length; i++) {
            held += Math.max(counts[i].length, Math.floorDiv(at, periods[i]) - bases[i] + 1);
        }
        return held <= Rule.MAX_COUNTER_DELAY_INTERVALS + 3L * periods.length;
    }

    @Override
    void add(BucketStore.Limits limits, long at, long cost) {
        for (int i = 0; i < periods.length; i++) {
            addTo(i, Math.floorDiv(at, periods[i]), cost);
        }
    }

    /** Adds {@code cost} to the count of interval {@code k} (the previous one or later) of a window. */
    private void addTo(int window, long k, long cost) {
        long offset = k - bases[window];
        long[] c = counts[window];
        if (offset >= c.length) {
            c = Arrays.copyOf(c, (int) offset + 1);
            counts[window] = c;
        }
        c[(int) offset] += cost;
    }

    /**
     * A charge adds to the count of the interval the call was counted in, per window: a count above the limit is debt,
     * which weighs as any count, so the window's next calls wait until its weighted count leaves them room, by the end
     * of the next interval at the latest. An interval before the previous one counts no more (the call outlived it),
     * so the tokens go to the interval now open. No interval's count goes more than {@link DebtBound} past the limit.
     */
    @Override
    long[] chargedCounts(BucketStore.Limits limits, long now, long at) {
        trim(limits, now);
        long[] charged = new long[periods.length];
        for (int i = 0; i < periods.length; i++) {
            charged[i] = count(i, chargedInterval(i, now, at));
        }
        return charged;
    }

    @Override
    void addCharge(BucketStore.Limits limits, long now, long at, long tokens) {
        for (int i = 0; i < periods.length; i++) {
            addTo(i, chargedInterval(i, now, at), tokens);
        }
    }

    /** @return the interval of a window a charge for the call counted at {@code at} adds to */
    private long chargedInterval(int window, long now, long at) {
        long current = Math.floorDiv(now, periods[window]);
        long k = Math.floorDiv(at, periods[window]);
        return k < current - 1 ? current : k;
    }

    @Override
    void remove(BucketStore.Limits limits, long now, long cost, long at) {
        trim(limits, now);
        for (int i = 0; i < counts.length; i++) {
            long offset = Math.floorDiv(at, periods[i]) - bases[i];
            long[] c = counts[i];
            if (offset >= 0 && offset < c.length) {
                c[(int) offset] -= Math.min(cost, c[(int) offset]);
            }
        }
    }

    @Override
    List<Decision.Window> windows(BucketStore.Limits limits, long now, long cost) {
        List<Limit> list = limits.limits();
        Decision.Window[] windows = new Decision.Window[periods.length];
        for (int i = 0; i < windows.length; i++) {
            Limit limit = list.get(i);
            long remaining = (long) Math.floor(limit.permits() - load(i, now) + 1e-9);
            long last = lastCounted(i);
            long reset = last == Long.MIN_VALUE ? 0 : Math.max(0, (last + 2) * periods[i] - now);
            windows[i] = new Decision.Window(
                    limit.window(), limit.permits(), limit.permits(), limit.period(), Math.max(0, remaining), reset);
        }
        return Arrays.asList(windows);
    }

    @Override
    long horizonNanos(BucketStore.Limits limits) {
        // A count made now, in interval k, weighs until the end of interval k + 1: up to two periods away.
        return 2 * limits.longestPeriodNanos();
    }

    @Override
    long untilIrrelevant(BucketStore.Limits limits, long now) {
        long until = 0;
        if (periods != null) {
            for (int i = 0; i < periods.length; i++) {
                long last = lastCounted(i);
                if (last != Long.MIN_VALUE) {
                    until = Math.max(until, (last + 2) * periods[i] - now);
                }
            }
        }
        return until;
    }
}
