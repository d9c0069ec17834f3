package io.github.ratelimit.redis;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Limit;
import io.github.ratelimit.internal.bucket.Pipelining;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.BucketStore.KeyState;
import io.github.ratelimit.store.RateLimitStoreException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A key's calendar quotas in Redis ({@link CalendarScript}): each operation is one script, atomic across every
 * window. The windows' bounds are computed here, from the calendar in each window's zone, at the time the store's
 * clock says (the server's time, as the store tracks it, unless the store was given a clock); when the script, at its
 * own time, finds a bound passed, it says so with its time and the operation is sent once more with bounds for that
 * time (one more round trip, at most once per boundary and key).
 */
final class RedisCalendarState implements KeyState, Pipelining {

    // The operations' arguments, as the sliding windows' scripts take them.
    private static final byte[] PROBE = RedisSlidingState.PROBE;
    private static final byte[] RESERVE = RedisSlidingState.RESERVE;
    private static final byte[] REFUND = RedisSlidingState.REFUND;
    private static final byte[] PEEK = RedisSlidingState.PEEK;
    private static final byte[] CHARGE = RedisSlidingState.CHARGE;
    private static final byte[] ZERO = RedisSlidingState.ZERO;
    private static final byte[] EMPTY = RedisSlidingState.EMPTY;
    private static final byte[] KEEP = RedisSlidingState.KEEP;
    static final LuaScript SCRIPT = new LuaScript(CalendarScript.SOURCE);

    private final RedisSlidingState.Context context;
    /** The store's clock: the server's time as the store tracks it, or the clock the store was given. */
    private final TimeMeter storeClock;

    private final BucketStore.Limits limits;
    private final List<byte[]> keys;
    private final byte[][] names;

    RedisCalendarState(RedisSlidingState.Context context, TimeMeter storeClock, byte[] key, BucketStore.Limits limits) {
        this.context = context;
        this.storeClock = storeClock;
        this.limits = limits;
        this.keys = List.of(key);
        List<Limit> list = limits.limits();
        this.names = new byte[list.size()][];
        for (int i = 0; i < names.length; i++) {
            names[i] = list.get(i).window().getBytes(StandardCharsets.UTF_8);
        }
    }

    BucketStore.Limits limits() {
        return limits;
    }

    /** One operation's arguments, and the windows' bounds they were computed with (microseconds). */
    private record Call(List<byte[]> args, long[] starts, long[] ends) {}

    private Call call(byte[] op, long cost, byte[] arg, byte[] minWait, long nowMicros, boolean explicitTime) {
        List<Limit> list = limits.limits();
        List<byte[]> args = new ArrayList<>(7 + 5 * list.size());
        args.add(explicitTime ? RedisSlidingState.ascii(nowMicros) : EMPTY);
        args.add(RedisSlidingState.ascii(cost));
        args.add(op);
        args.add(arg);
        args.add(KEEP);
        args.add(RedisSlidingState.ascii(list.size()));
        long[] starts = new long[list.size()];
        long[] ends = new long[list.size()];
        for (int i = 0; i < list.size(); i++) {
            Limit limit = list.get(i);
            long start = limit.windowStart(nowMicros * 1_000);
            long end = limit.windowEnd(start);
            starts[i] = start / 1_000;
            ends[i] = end / 1_000;
            args.add(names[i]);
            args.add(RedisSlidingState.ascii(starts[i]));
            args.add(RedisSlidingState.ascii(ends[i]));
            args.add(RedisSlidingState.ascii(limit.windowEnd(end) / 1_000));
            args.add(RedisSlidingState.ascii(limit.permits()));
        }
        args.add(minWait);
        return new Call(args, starts, ends);
    }

    /** A script's reply, and the call it answers. */
    private record Reply(List<?> values, Call call) {}

    /** Starts an operation; its await sends it once more, at the script's time, if the bounds did not hold it. */
    private Supplier<Reply> start(byte[] op, long cost, byte[] arg, byte[] minWait) {
        return start(op, cost, arg, minWait, false);
    }

    /** @param late whether the call goes off the request path ({@link CasProxyManager#sendLate}) */
    private Supplier<Reply> start(byte[] op, long cost, byte[] arg, byte[] minWait, boolean late) {
        TimeMeter given = context.clock();
        boolean explicit = given != null;
        long now = (given != null ? given : storeClock).currentTimeNanos() / 1_000;
        Call call = call(op, cost, arg, minWait, now, explicit);
        // A count given back or charged twice is so twice: a refund or a charge answered late is not asked again.
        boolean askAgain = op != REFUND && op != CHARGE;
        ScriptRunner.Sent sent = send(call, late, askAgain);
        return () -> {
            List<?> reply = checked(op, sent.await());
            if (RedisSlidingState.number(reply.get(0)) == 2) {
                // The script's time is in another window: again, with bounds and the time for it.
                Call again = call(op, cost, arg, minWait, RedisSlidingState.number(reply.get(1)), true);
                reply = checked(op, send(again, late, askAgain).await());
                if (RedisSlidingState.number(reply.get(0)) == 2) {
                    throw new IllegalStateException(
                            "calendar windows computed for the script's own time did not " + "hold it");
                }
                return new Reply(reply, again);
            }
            return new Reply(reply, call);
        };
    }

    private ScriptRunner.Sent send(Call call, boolean late, boolean askAgain) {
        return late
                ? context.calls().sendLate(SCRIPT, keys, call.args())
                : context.calls().send(SCRIPT, keys, call.args(), 1, askAgain);
    }

    /** @return the reply as a probe, whose windows carry the open windows' lengths (a day may last 23 or 25 hours) */
    private KeyState.Probe probe(Reply answer) {
        List<?> reply = answer.values();
        Call call = answer.call();
        boolean consumed = RedisSlidingState.number(reply.get(0)) == 1;
        long waitMicros = RedisSlidingState.number(reply.get(1));
        long wait = waitMicros < 0 ? Long.MAX_VALUE : waitMicros * 1_000;
        List<Limit> list = limits.limits();
        Decision.Window[] windows = new Decision.Window[list.size()];
        for (int i = 0; i < windows.length; i++) {
            Limit limit = list.get(i);
            windows[i] = new Decision.Window(
                    limit.window(),
                    limit.permits(),
                    limit.permits(),
                    Duration.ofNanos((call.ends()[i] - call.starts()[i]) * 1_000),
                    RedisSlidingState.number(reply.get(4 + 2 * i)),
                    RedisSlidingState.number(reply.get(5 + 2 * i)) * 1_000);
        }
        return new KeyState.Probe(
                consumed,
                consumed ? 0 : Math.max(1, wait),
                Arrays.asList(windows),
                RedisSlidingState.number(reply.get(2)) * 1_000);
    }

    @Override
    public KeyState.Probe consume(long cost) {
        return send(cost).await();
    }

    @Override
    public KeyState.@Nullable Probe known(long cost) {
        return null;
    }

    @Override
    public Pipelining.Sent send(long cost) {
        Supplier<Reply> started = start(PROBE, cost, ZERO, ZERO);
        return () -> probe(started.get());
    }

    @Override
    public KeyState.Probe peek(long cost) {
        KeyState.Probe p = probe(start(PEEK, cost, ZERO, ZERO).get());
        return new KeyState.Probe(p.consumed(), p.waitNanos(), p.windows(), 0);
    }

    @Override
    public KeyState.Probe reserve(long cost, long maxWaitNanos) {
        return reserve(cost, 0, maxWaitNanos);
    }

    @Override
    public KeyState.Probe reserve(long cost, long minWaitNanos, long maxWaitNanos) {
        List<?> reply = start(
                        RESERVE,
                        cost,
                        RedisSlidingState.ascii(RedisSlidingState.ceilMicros(maxWaitNanos)),
                        RedisSlidingState.ascii(RedisSlidingState.ceilMicros(minWaitNanos)))
                .get()
                .values();
        long waitMicros = RedisSlidingState.number(reply.get(1));
        return new KeyState.Probe(
                RedisSlidingState.number(reply.get(0)) == 1,
                waitMicros < 0 ? Long.MAX_VALUE : waitMicros * 1_000,
                List.of(),
                RedisSlidingState.number(reply.get(2)) * 1_000);
    }

    /**
     * Gives back the call counted at the receipt's time. When Redis fails at that moment and certainly did not see the
     * refund, it is tried again later, off the request path ({@link LateRefunds}); a refund that reached Redis
     * unanswered is not tried again (its count would be given back twice), only counted. Never throws for it.
     */
    @Override
    public void refund(long cost, long receipt) {
        if (receipt <= 0) {
            return;
        }
        byte[] at = RedisSlidingState.ascii(receipt / 1_000);
        try {
            refundNow(cost, at, false);
        } catch (RateLimitStoreException e) {
            LateRefunds late = context.calls().lateRefunds;
            if (e instanceof RedisCallException call && call.sent()) {
                late.unconfirmed.increment();
                return;
            }
            late.offer(cost + " permit(s) to " + RedisKeys.printable(keys.get(0)), () -> refundNow(cost, at, true));
        }
    }

    /** Counts what a call used now ({@link #charge(long, long)} with no receipt). */
    @Override
    public long charge(long tokens) {
        return charge(tokens, 0);
    }

    /**
     * Counts what a call used, in one script run ({@link CalendarScript}, operation {@code c}), which holds the debt's
     * bound atomically for every instance. When Redis fails, the charge is lost (the call keeps its estimate): it is
     * never sent again, as a count added twice would be charged twice; the caller logs and counts it.
     */
    @Override
    public long charge(long tokens, long receipt) {
        byte[] at = RedisSlidingState.ascii(Math.max(0, receipt / 1_000));
        return RedisSlidingState.number(
                start(CHARGE, tokens, at, ZERO).get().values().get(2));
    }

    /** Sends a refund and waits for its reply, which {@link #checked} verifies; a refund's reply holds nothing else. */
    private void refundNow(long cost, byte[] at, boolean late) {
        var unused = start(REFUND, cost, at, ZERO, late).get();
    }

    private List<?> checked(byte[] op, Object answer) {
        List<?> reply = (List<?>) answer;
        int repairedAt = op == REFUND || op == CHARGE ? 1 : 3;
        if (RedisSlidingState.number(reply.get(0)) != 2
                && reply.size() > repairedAt
                && RedisSlidingState.number(reply.get(repairedAt)) == 1) {
            context.calls()
                    .repaired(
                            keys.get(0),
                            "a key of another type or size, or fields no rule writes (not "
                                    + "<window>|<start>, counts that are not positive integers, windows beyond the next); replaced");
        }
        return reply;
    }
}
