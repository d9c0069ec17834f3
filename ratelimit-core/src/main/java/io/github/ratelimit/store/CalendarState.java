package io.github.ratelimit.store;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Limit;
import io.github.ratelimit.internal.bucket.DebtBound;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/**
 * The fixed windows of one key of a rule with a calendar quota ({@code 1000/1mo}, {@code 100/1d@Europe/Berlin}), in
 * this JVM: per window one count for the window now open and one for the next (a call another rule delays may be
 * counted there), each window bounded by the calendar in its zone, or, for a window of a fixed length in the same
 * rule, by multiples of its period from the epoch (as Bucket4j aligns fixed windows). A call fits when every
 * window's count plus its cost is at most the limit; when it does not, it fits when the fullest window ends. The
 * clock is the store's wall clock: its nanoseconds are nanoseconds since the epoch.
 */
final class CalendarState extends LocalSlidingState {

    /** Longer than any calendar window's nominal length, by the most a daylight-saving change adds. */
    private static final long DST_SLACK_NANOS = Duration.ofHours(3).toNanos();

    /**
     * Per window, in the order of the limits: its name, the start of the open window, its count, and the next
     * window's. Matched to the limits by name, so a change of limits keeps the counts of the windows that remain.
     */
    @SuppressWarnings("NullAway.Init") // set by roll; canHold and add follow earliest, which calls it
    private String[] names;

    @SuppressWarnings("NullAway.Init")
    private long[] starts;

    @SuppressWarnings("NullAway.Init")
    private long[] counts;

    @SuppressWarnings("NullAway.Init")
    private long[] nextCounts;

    CalendarState(BucketStore.Limits limits, TimeMeter clock, Runnable afterReservation) {
        super(limits, clock, afterReservation);
    }

    static long start(Limit limit, long t) {
        return limit.windowStart(t);
    }

    static long end(Limit limit, long start) {
        return limit.windowEnd(start);
    }

    /** Moves every window to the one holding {@code now}: the next window's count becomes the open one's. */
    private void roll(BucketStore.Limits limits, long now) {
        List<Limit> list = limits.limits();
        if (names == null || !sameNames(list)) {
            String[] freshNames = new String[list.size()];
            long[] freshStarts = new long[list.size()];
            long[] freshCounts = new long[list.size()];
            long[] freshNext = new long[list.size()];
            Arrays.fill(freshStarts, Long.MIN_VALUE);
            for (int i = 0; i < freshNames.length; i++) {
                freshNames[i] = list.get(i).window();
                int old = names == null ? -1 : Arrays.asList(names).indexOf(freshNames[i]);
                if (old >= 0) {
                    freshStarts[i] = starts[old];
                    freshCounts[i] = counts[old];
                    freshNext[i] = nextCounts[old];
                }
            }
            names = freshNames;
            starts = freshStarts;
            counts = freshCounts;
            nextCounts = freshNext;
        }
        for (int i = 0; i < starts.length; i++) {
            Limit limit = list.get(i);
            long start = start(limit, now);
            if (start != starts[i]) {
                boolean next = starts[i] != Long.MIN_VALUE && start == end(limit, starts[i]);
                counts[i] = next ? nextCounts[i] : 0;
                nextCounts[i] = 0;
                starts[i] = start;
            }
        }
    }

    private boolean sameNames(List<Limit> list) {
        if (names.length != list.size()) {
            return false;
        }
        for (int i = 0; i < names.length; i++) {
            if (!names[i].equals(list.get(i).window())) {
                return false;
            }
        }
        return true;
    }

    @Override
    long earliest(BucketStore.Limits limits, long cost, long now) {
        roll(limits, now);
        List<Limit> list = limits.limits();
        long at = now;
        for (int i = 0; i < starts.length; i++) {
            long permits = list.get(i).permits();
            if (cost > permits) {
                return Long.MAX_VALUE;
            }
            if (counts[i] + cost > permits) {
                at = Math.max(at, end(list.get(i), starts[i]));
            }
        }
        if (at == now) {
            return now;
        }
        // Later: every window holding that time must have room, counting what is promised there already (nothing can
        // be, beyond a window's next one: reservations reach no further, see canHold).
        for (int i = 0; i < starts.length; i++) {
            Limit limit = list.get(i);
            long count = Math.max(0, count(limit, i, at));
            if (count + cost > limit.permits()) {
                return Long.MAX_VALUE;
            }
        }
        return at;
    }

    /** @return the count of the window of limit {@code i} holding {@code t}, or -1 beyond the next window */
    private long count(Limit limit, int i, long t) {
        long start = start(limit, t);
        if (start == starts[i]) {
            return counts[i];
        }
        return start == end(limit, starts[i]) ? nextCounts[i] : -1;
    }

    /**
     * A call is counted in the open or the next window of each limit, never further, and only where it fits: the next
     * window may hold reservations already, so a later time is not always a roomier one.
     */
    @Override
    boolean canHold(BucketStore.Limits limits, long at, long cost) {
        List<Limit> list = limits.limits();
        for (int i = 0; i < starts.length; i++) {
            long count = count(list.get(i), i, at);
            if (count < 0 || count + cost > list.get(i).permits()) {
                return false;
            }
        }
        return true;
    }

    @Override
    void add(BucketStore.Limits limits, long at, long cost) {
        List<Limit> list = limits.limits();
        for (int i = 0; i < starts.length; i++) {
            if (start(list.get(i), at) == starts[i]) {
                counts[i] += cost;
            } else {
                nextCounts[i] += cost;
            }
        }
    }

    @Override
    void remove(BucketStore.Limits limits, long now, long cost, long at) {
        roll(limits, now);
        List<Limit> list = limits.limits();
        for (int i = 0; i < starts.length; i++) {
            long start = start(list.get(i), at);
            if (start == starts[i]) {
                counts[i] = Math.max(0, counts[i] - cost);
            } else if (start == end(list.get(i), starts[i])) {
                nextCounts[i] = Math.max(0, nextCounts[i] - cost);
            }
        }
    }

    /**
     * A charge adds to the count of the window the call was counted in, per limit: the open one, or the next for a
     * delayed call counted there. A count above the limit is debt, owed until the window ends (the next call fits
     * only in the next window); a window that has ended (the call outlived it) owes nothing more, so the tokens go to
     * the one now open. No window's count goes more than {@link DebtBound} past its limit (a calendar quota owes at
     * most its limit).
     */
    @Override
    long[] chargedCounts(BucketStore.Limits limits, long now, long at) {
        roll(limits, now);
        List<Limit> list = limits.limits();
        long[] charged = new long[starts.length];
        for (int i = 0; i < starts.length; i++) {
            charged[i] = chargesNext(list.get(i), i, at) ? nextCounts[i] : counts[i];
        }
        return charged;
    }

    @Override
    void addCharge(BucketStore.Limits limits, long now, long at, long tokens) {
        List<Limit> list = limits.limits();
        for (int i = 0; i < starts.length; i++) {
            if (chargesNext(list.get(i), i, at)) {
                nextCounts[i] += tokens;
            } else {
                counts[i] += tokens;
            }
        }
    }

    /** @return whether a charge for the call counted at {@code at} adds to the next window of limit {@code i} */
    private boolean chargesNext(Limit limit, int i, long at) {
        return start(limit, at) == end(limit, starts[i]);
    }

    @Override
    List<Decision.Window> windows(BucketStore.Limits limits, long now, long cost) {
        roll(limits, now);
        List<Limit> list = limits.limits();
        Decision.Window[] windows = new Decision.Window[starts.length];
        for (int i = 0; i < windows.length; i++) {
            Limit limit = list.get(i);
            long end = end(limit, starts[i]);
            windows[i] = new Decision.Window(
                    limit.window(),
                    limit.permits(),
                    limit.permits(),
                    Duration.ofNanos(end - starts[i]),
                    Math.max(0, limit.permits() - counts[i]),
                    counts[i] > 0 || nextCounts[i] > 0 ? end - now : 0);
        }
        return Arrays.asList(windows);
    }

    @Override
    long horizonNanos(BucketStore.Limits limits) {
        long longest = 0;
        for (Limit limit : limits.limits()) {
            longest = Math.max(longest, limit.period().toNanos() + (limit.calendar() != null ? DST_SLACK_NANOS : 0));
        }
        return longest;
    }

    @Override
    long untilIrrelevant(BucketStore.Limits limits, long now) {
        roll(limits, now);
        List<Limit> list = limits.limits();
        long until = 0;
        for (int i = 0; i < starts.length; i++) {
            long end = end(list.get(i), starts[i]);
            if (nextCounts[i] > 0) {
                until = Math.max(until, end(list.get(i), end) - now);
            } else if (counts[i] > 0) {
                until = Math.max(until, end - now);
            }
        }
        return until;
    }
}
