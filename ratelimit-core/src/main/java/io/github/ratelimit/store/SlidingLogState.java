package io.github.ratelimit.store;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.Limit;
import io.github.ratelimit.WindowState;

import java.util.Arrays;
import java.util.List;

/**
 * The sliding window log of one key in this JVM: the time and cost of each counted call, sorted by time.
 *
 * <p>A window of period {@code W} and limit {@code N} counts, at time {@code t}, every entry later than
 * {@code t - W}, including entries reserved for later than {@code t} (a delayed call is counted from the time it
 * may go, and must not let earlier calls take its place). A call of cost {@code c} fits at {@code t} when each
 * window's count plus {@code c} is at most its {@code N}; the count only falls as {@code t} grows, so the earliest
 * time it fits is found from the entry whose sliding out makes room: walking back from the newest entry, the
 * first one that would bring the count over {@code N - c}, plus {@code W}. Entries older than the longest window
 * are dropped on every operation, so the log holds at most the longest window's limit in calls.
 */
final class SlidingLogState extends LocalSlidingState {

    private long[] times = new long[4];
    private long[] costs = new long[4];
    private int start;
    private int end;
    /** Whether every entry has cost {@link #unit}: then counting needs no walk. */
    private boolean uniform = true;
    private long unit;

    SlidingLogState(StoreLimits limits, TimeMeter clock, Runnable afterReservation) {
        super(limits, clock, afterReservation);
    }

    private void trim(StoreLimits limits, long now) {
        long horizon = now - limits.longestPeriodNanos();
        while (start < end && times[start] <= horizon) {
            start++;
        }
        if (start == end) {
            start = 0;
            end = 0;
            uniform = true;
        }
    }

    /** @return the index of the first entry later than {@code from} */
    private int firstAfter(long from) {
        int lo = start;
        int hi = end;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (times[mid] > from) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    /** @return the cost of the entries later than {@code from} */
    private long countAfter(long from) {
        int first = firstAfter(from);
        if (uniform) {
            return (end - first) * unit;
        }
        long sum = 0;
        for (int i = first; i < end; i++) {
            sum += costs[i];
        }
        return sum;
    }

    @Override
    long earliest(StoreLimits limits, long cost, long now) {
        trim(limits, now);
        long at = now;
        for (Limit limit : limits.limits()) {
            if (cost > limit.permits()) {
                return Long.MAX_VALUE; // a scaled-down fallback limit can be smaller than the cost
            }
            long period = limit.period().toNanos();
            if (countAfter(now - period) + cost <= limit.permits()) {
                continue;
            }
            long room = limit.permits() - cost;
            long sum = 0;
            for (int i = end - 1; i >= start; i--) {
                if (sum + costs[i] > room) {
                    at = Math.max(at, times[i] + period);
                    break;
                }
                sum += costs[i];
            }
        }
        return at;
    }

    @Override
    void add(StoreLimits limits, long at, long cost) {
        if (end == times.length) {
            if (start > times.length / 2) {
                System.arraycopy(times, start, times, 0, end - start);
                System.arraycopy(costs, start, costs, 0, end - start);
            } else {
                times = Arrays.copyOfRange(times, start, start + times.length * 2);
                costs = Arrays.copyOfRange(costs, start, start + costs.length * 2);
            }
            end -= start;
            start = 0;
        }
        if (start == end) {
            unit = cost;
            uniform = true;
        } else if (cost != unit) {
            uniform = false;
        }
        // Sorted by time: a call counted now lands before the calls reserved for later.
        int i = end;
        while (i > start && times[i - 1] > at) {
            times[i] = times[i - 1];
            costs[i] = costs[i - 1];
            i--;
        }
        times[i] = at;
        costs[i] = cost;
        end++;
    }

    @Override
    void removeNewest(StoreLimits limits, long now, long cost) {
        trim(limits, now);
        long left = cost;
        while (left > 0 && end > start) {
            long last = costs[end - 1];
            if (last <= left) {
                end--;
                left -= last;
            } else {
                costs[end - 1] = last - left;
                uniform = false;
                left = 0;
            }
        }
    }

    @Override
    List<WindowState> windows(StoreLimits limits, long now) {
        List<Limit> list = limits.limits();
        WindowState[] windows = new WindowState[list.size()];
        long newest = end > start ? times[end - 1] : Long.MIN_VALUE;
        for (int i = 0; i < windows.length; i++) {
            Limit limit = list.get(i);
            long period = limit.period().toNanos();
            long used = countAfter(now - period);
            long reset = newest > now - period ? newest + period - now : 0;
            windows[i] = new WindowState(limit.window(), limit.permits(), limit.permits(), limit.period(),
                    Math.max(0, limit.permits() - used), reset);
        }
        return Arrays.asList(windows);
    }

    @Override
    long untilIrrelevant(StoreLimits limits, long now) {
        return end > start ? Math.max(0, times[end - 1] + limits.longestPeriodNanos() - now) : 0;
    }

    /** @return the number of entries held; for tests */
    synchronized int entries() {
        return end - start;
    }
}
