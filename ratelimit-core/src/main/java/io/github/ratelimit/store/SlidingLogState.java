package io.github.ratelimit.store;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Limit;
import java.util.Arrays;
import java.util.List;

/**
 * The sliding window log of one key in this JVM: the time of each counted call, sorted. Every entry counts as the
 * rule's cost (a rule whose cost changes counts its older entries at the new cost until they slide out).
 *
 * <p>A window of period {@code W} and limit {@code N} counts, at time {@code t}, every entry later than
 * {@code t - W}, including entries reserved for later than {@code t} (a delayed call is counted from the time it
 * may go, and must not let earlier calls take its place). A call of cost {@code c} fits at {@code t} when each
 * window's count times {@code c}, plus {@code c}, is at most its {@code N}, that is when at most
 * {@code k = (N - c) / c} entries are later than {@code t - W}; the count only falls as {@code t} grows, so the
 * earliest time it fits is the {@code (k+1)}-th newest entry's time plus {@code W}. Entries older than the longest
 * window are dropped on every operation, so the log holds at most the longest window's limit in calls.
 */
final class SlidingLogState extends LocalSlidingState {

    private long[] times = new long[4];
    private int start;
    private int end;

    SlidingLogState(BucketStore.Limits limits, TimeMeter clock, Runnable afterReservation) {
        super(limits, clock, afterReservation);
    }

    private void trim(BucketStore.Limits limits, long now) {
        long horizon = now - limits.longestPeriodNanos();
        while (start < end && times[start] <= horizon) {
            start++;
        }
        if (start == end) {
            start = 0;
            end = 0;
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

    @Override
    long earliest(BucketStore.Limits limits, long cost, long now) {
        trim(limits, now);
        long at = now;
        for (Limit limit : limits.limits()) {
            if (cost > limit.permits()) {
                return Long.MAX_VALUE; // a scaled-down fallback limit can be smaller than the cost
            }
            long period = limit.period().toNanos();
            long room = (limit.permits() - cost) / cost; // entries that may stay in the window
            if (end - firstAfter(now - period) <= room) {
                continue;
            }
            // The (room+1)-th newest entry must leave the window first.
            at = Math.max(at, times[(int) (end - 1 - room)] + period);
        }
        return at;
    }

    @Override
    void add(BucketStore.Limits limits, long at, long cost) {
        if (end == times.length) {
            if (start > times.length / 2) {
                System.arraycopy(times, start, times, 0, end - start);
            } else {
                times = Arrays.copyOfRange(times, start, start + times.length * 2);
            }
            end -= start;
            start = 0;
        }
        // Sorted by time: a call counted now lands before the calls reserved for later.
        int i = end;
        while (i > start && times[i - 1] > at) {
            times[i] = times[i - 1];
            i--;
        }
        times[i] = at;
        end++;
    }

    @Override
    void remove(BucketStore.Limits limits, long now, long cost, long at) {
        trim(limits, now);
        int i = firstAfter(at - 1);
        if (i < end && times[i] == at) {
            System.arraycopy(times, i + 1, times, i, end - i - 1);
            end--;
        }
    }

    @Override
    List<Decision.Window> windows(BucketStore.Limits limits, long now, long cost) {
        List<Limit> list = limits.limits();
        Decision.Window[] windows = new Decision.Window[list.size()];
        long newest = end > start ? times[end - 1] : Long.MIN_VALUE;
        for (int i = 0; i < windows.length; i++) {
            Limit limit = list.get(i);
            long period = limit.period().toNanos();
            long used = (end - firstAfter(now - period)) * cost;
            long reset = newest > now - period ? newest + period - now : 0;
            windows[i] = new Decision.Window(
                    limit.window(),
                    limit.permits(),
                    limit.permits(),
                    limit.period(),
                    Math.max(0, limit.permits() - used),
                    reset);
        }
        return Arrays.asList(windows);
    }

    @Override
    long untilIrrelevant(BucketStore.Limits limits, long now) {
        return end > start ? Math.max(0, times[end - 1] + limits.longestPeriodNanos() - now) : 0;
    }

    @Override
    long horizonNanos(BucketStore.Limits limits) {
        return limits.longestPeriodNanos();
    }

    /** @return the number of entries held; for tests */
    synchronized int entries() {
        return end - start;
    }
}
