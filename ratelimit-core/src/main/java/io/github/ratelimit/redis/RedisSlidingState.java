package io.github.ratelimit.redis;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Limit;
import io.github.ratelimit.internal.bucket.Pipelining;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.BucketStore.KeyState;
import io.github.ratelimit.store.RateLimitStoreException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * A key's sliding log or counters in Redis: each operation is one script ({@link SlidingScripts}), so one round
 * trip, atomic across every window, with the time read on the server unless the store was given a clock. This JVM's
 * operations on the key wait in its {@link KeyQueue}: one script run on its way at a time, the operations that come
 * meanwhile sent together as one run of the combined script, at most {@value #MAX_COMBINED}, performed in the order
 * they came, each exactly as it would be alone.
 */
final class RedisSlidingState implements KeyState, Pipelining {

    static final byte[] PROBE = {'p'};
    static final byte[] RESERVE = {'r'};
    static final byte[] REFUND = {'f'};
    static final byte[] PEEK = {'k'};
    static final byte[] CHARGE = {'c'};
    static final byte[] ZERO = {'0'};
    static final byte[] EMPTY = new byte[0];
    static final byte[] KEEP =
            Long.toString(CasProxyManager.KEEP_AFTER_FULL_MILLIS).getBytes(StandardCharsets.US_ASCII);

    /**
     * What every state of one store shares.
     *
     * @param combining whether this JVM's concurrent operations on one key are combined into one script run
     */
    record Context(
            CasProxyManager calls,
            @Nullable TimeMeter clock,
            String memberPrefix,
            AtomicLong sequence,
            boolean combining) {}

    /** The most operations of this JVM one script run performs for a key ({@link LuaScript#combined}). */
    static final int MAX_COMBINED = 64;

    static final LuaScript LOG = new LuaScript(SlidingScripts.LOG);
    static final LuaScript LOG_COMBINED = new LuaScript(LuaScript.combined(SlidingScripts.LOG));
    /** The counters' script, which performs a run of operations, one alone included, parsing the hash once. */
    static final LuaScript COUNTER_RUN = new LuaScript(SlidingScripts.COUNTER_RUN);

    /** One operation waiting in the key's queue, and once done, its reply. */
    private static final class Operation extends KeyQueue.Call {
        final List<byte[]> args;
        /** Whether a late answer may be asked once more: not for a counter's refund, which would be given twice. */
        final boolean askAgain;

        @Nullable
        Object reply;

        @Nullable
        RuntimeException error;

        Operation(List<byte[]> args, boolean askAgain) {
            this.args = args;
            this.askAgain = askAgain;
        }

        void finish(@Nullable Object reply, @Nullable RuntimeException error) {
            this.reply = reply;
            this.error = error;
            finished();
        }

        @SuppressWarnings("NullAway") // once finished without an error, it holds the script's reply, never null
        Object reply() {
            if (error != null) {
                throw error;
            }
            return reply;
        }
    }

    private final Context context;
    private final BucketStore.Limits limits;
    private final List<byte[]> keys;
    private final LuaScript script;
    private final LuaScript combined;
    /** Per window: its period in microseconds and its limit. */
    private final byte[][] windowArgs;
    /** This JVM's operations on the key: one script run on its way at a time, those that come meanwhile combined. */
    private final KeyQueue queue = new KeyQueue(MAX_COMBINED);

    RedisSlidingState(Context context, byte[] key, BucketStore.Limits limits) {
        this.context = context;
        this.limits = limits;
        this.keys = List.of(key);
        this.script = limits.algorithm() == Algorithm.SLIDING_WINDOW_LOG ? LOG : COUNTER_RUN;
        this.combined = script == LOG ? LOG_COMBINED : COUNTER_RUN;
        List<Limit> list = limits.limits();
        this.windowArgs = new byte[list.size() * 2 + 1][];
        windowArgs[0] = ascii(list.size());
        for (int i = 0; i < list.size(); i++) {
            windowArgs[1 + 2 * i] = ascii(Math.max(1, list.get(i).period().toNanos() / 1_000));
            windowArgs[2 + 2 * i] = ascii(list.get(i).permits());
        }
    }

    BucketStore.Limits limits() {
        return limits;
    }

    @Override
    public Probe consume(long cost) {
        return send(cost).await();
    }

    @Override
    public Sent send(long cost) {
        ScriptRunner.Sent sent = start(PROBE, cost, ZERO, ZERO);
        return () -> probe(checked(PROBE, sent.await()));
    }

    private Probe probe(List<?> reply) {
        boolean consumed = number(reply.get(0)) == 1;
        long wait = waitNanos(number(reply.get(1)));
        List<Limit> list = limits.limits();
        Decision.Window[] windows = new Decision.Window[list.size()];
        for (int i = 0; i < windows.length; i++) {
            Limit limit = list.get(i);
            windows[i] = new Decision.Window(
                    limit.window(),
                    limit.permits(),
                    limit.permits(),
                    limit.period(),
                    number(reply.get(4 + 2 * i)),
                    number(reply.get(5 + 2 * i)) * 1_000);
        }
        return new Probe(
                consumed, consumed ? 0 : Math.max(1, wait), Arrays.asList(windows), number(reply.get(2)) * 1_000);
    }

    @Override
    public Probe peek(long cost) {
        Probe p = probe(run(PEEK, cost, ZERO, ZERO));
        return new Probe(p.consumed(), p.waitNanos(), p.windows(), 0);
    }

    @Override
    public Probe reserve(long cost, long maxWaitNanos) {
        return reserve(cost, 0, maxWaitNanos);
    }

    @Override
    public Probe reserve(long cost, long minWaitNanos, long maxWaitNanos) {
        // Both rounded up to whole microseconds: a call another rule delays by exactly its maxDelay stays within it.
        List<?> reply = run(RESERVE, cost, ascii(ceilMicros(maxWaitNanos)), ascii(ceilMicros(minWaitNanos)));
        boolean reserved = number(reply.get(0)) == 1;
        return new Probe(reserved, waitNanos(number(reply.get(1))), List.of(), number(reply.get(2)) * 1_000);
    }

    /**
     * Forgets the call counted at the receipt's time. When Redis fails at that moment, it is tried again later, off
     * the request path ({@link LateRefunds}): at once when Redis certainly did not see it, and for the log whatever
     * happened (forgetting the call counted at a time twice forgets nothing more); a counter's refund that reached
     * Redis unanswered is not tried again (its count would be given back twice), only counted. Never throws for it.
     */
    @Override
    public void refund(long cost, long receipt) {
        if (receipt <= 0) {
            return;
        }
        byte[] at = ascii(receipt / 1_000);
        try {
            run(REFUND, cost, at, ZERO);
        } catch (RateLimitStoreException e) {
            LateRefunds late = context.calls().lateRefunds;
            if (script != LOG && e instanceof RedisCallException call && call.sent()) {
                late.unconfirmed.increment();
                return;
            }
            late.offer(
                    cost + " permit(s) to " + RedisKeys.printable(keys.get(0)),
                    () -> checked(REFUND, start(REFUND, cost, at, ZERO, true).await()));
        }
    }

    /** Counts what a call used now ({@link #charge(long, long)} with no receipt). */
    @Override
    public long charge(long tokens) {
        return charge(tokens, 0);
    }

    /**
     * Counts what a call used, in one script run ({@link SlidingScripts#COUNTER_RUN}, operation {@code c}), which
     * holds the debt's bound atomically for every instance. When Redis fails, the charge is lost (the call keeps its
     * estimate): it is never sent again, as a count added twice would be charged twice; the caller logs and counts it.
     *
     * @throws UnsupportedOperationException for a sliding log, which counts calls, not tokens
     */
    @Override
    public long charge(long tokens, long receipt) {
        if (script == LOG) {
            throw new UnsupportedOperationException("a sliding log counts calls, not tokens: it cannot be charged");
        }
        List<?> reply = run(CHARGE, tokens, ascii(Math.max(0, receipt / 1_000)), ZERO);
        return number(reply.get(2));
    }

    /** Runs one operation; counts a repair when the script found garbage in the key and replaced it. */
    private List<?> run(byte[] op, long cost, byte[] maxWait, byte[] minWait) {
        return checked(op, start(op, cost, maxWait, minWait).await());
    }

    private ScriptRunner.Sent start(byte[] op, long cost, byte[] maxWait, byte[] minWait) {
        return start(op, cost, maxWait, minWait, false);
    }

    /** @param late whether the call goes off the request path ({@link CasProxyManager#sendLate}) */
    private ScriptRunner.Sent start(byte[] op, long cost, byte[] maxWait, byte[] minWait, boolean late) {
        List<byte[]> args = new ArrayList<>(8 + windowArgs.length);
        TimeMeter clock = context.clock();
        args.add(clock == null ? EMPTY : ascii(clock.currentTimeNanos() / 1_000));
        args.add(ascii(cost));
        args.add(op);
        args.add(maxWait);
        args.add((context.memberPrefix() + Long.toString(context.sequence().incrementAndGet(), 36))
                .getBytes(StandardCharsets.US_ASCII));
        args.add(KEEP);
        args.addAll(Arrays.asList(windowArgs));
        args.add(minWait);
        // Forgetting a log's entry twice forgets it once; a counter's count given back, or charged, twice is so twice.
        boolean askAgain = (op != REFUND && op != CHARGE) || script == LOG;
        if (late || !context.combining()) {
            return alone(args, late, askAgain);
        }
        Operation operation = new Operation(args, askAgain);
        if (queue.goesAlone(operation)) {
            ScriptRunner.Sent sent;
            try {
                sent = alone(args, false, askAgain);
            } catch (RuntimeException e) {
                queue.handOver();
                throw e;
            }
            return () -> {
                try {
                    return sent.await();
                } finally {
                    queue.handOver();
                }
            };
        }
        return () -> {
            queue.awaitTurn(operation, this::sendTogether);
            return operation.reply();
        };
    }

    /**
     * Starts one operation alone: the log's script, or the counters' run of one.
     *
     * @param late whether it goes off the request path ({@link CasProxyManager#sendLate})
     * @param askAgain whether a late answer may be asked once more
     */
    private ScriptRunner.Sent alone(List<byte[]> args, boolean late, boolean askAgain) {
        if (script == LOG) {
            return late
                    ? context.calls().sendLate(LOG, keys, args)
                    : context.calls().send(LOG, keys, args, 1, askAgain);
        }
        List<byte[]> run = new ArrayList<>(2 + args.size());
        run.add(ascii(1));
        run.add(ascii(args.size()));
        run.addAll(args);
        ScriptRunner.Sent sent = late
                ? context.calls().sendLate(COUNTER_RUN, keys, run)
                : context.calls().send(COUNTER_RUN, keys, run, 1, askAgain);
        return () -> ((List<?>) sent.await()).get(0);
    }

    /**
     * Sends the operations of a group this thread leads as one script run (the counters' run, or the log's script run
     * several times, {@link LuaScript#combined}), in the order they were started, and hands each its reply; a failure
     * is each one's.
     */
    private void sendTogether(List<Operation> group) {
        try {
            if (group.size() == 1) {
                Operation one = group.get(0);
                one.finish(alone(one.args, false, one.askAgain).await(), null);
                return;
            }
            List<byte[]> args =
                    new ArrayList<>(1 + group.size() * (1 + group.get(0).args.size()));
            args.add(ascii(group.size()));
            boolean askAgain = true;
            for (Operation o : group) {
                args.add(ascii(o.args.size()));
                args.addAll(o.args);
                askAgain &= o.askAgain;
            }
            List<?> replies = (List<?>) context.calls()
                    .send(combined, keys, args, group.size(), askAgain)
                    .await();
            for (int i = 0; i < group.size(); i++) {
                group.get(i).finish(replies.get(i), null);
            }
        } catch (RuntimeException e) {
            for (Operation o : group) {
                if (!o.done()) {
                    o.finish(null, e);
                }
            }
        } finally {
            // Whatever happened (an Error included), no operation of the group is left for its owner to wait on.
            for (Operation o : group) {
                if (!o.done()) {
                    o.finish(null, new RateLimitStoreException("the Redis call did not complete", null));
                }
            }
        }
    }

    private List<?> checked(byte[] op, Object answer) {
        List<?> reply = (List<?>) answer;
        int repairedAt = op == REFUND || op == CHARGE ? 1 : 3;
        if (reply.size() > repairedAt && number(reply.get(repairedAt)) == 1) {
            context.calls()
                    .repaired(
                            keys.get(0),
                            "a key of another type or size, or entries no rule writes (not "
                                    + "numbers, out of range, dated beyond the longest delay), or no expiry; replaced");
        }
        return reply;
    }

    static long ceilMicros(long nanos) {
        return nanos >= Long.MAX_VALUE - 999 ? Long.MAX_VALUE / 1_000 : (nanos + 999) / 1_000;
    }

    private static long waitNanos(long micros) {
        return micros < 0 ? Long.MAX_VALUE : micros * 1_000;
    }

    static long number(Object o) {
        return o instanceof Long l ? l : Long.parseLong(new String((byte[]) o, StandardCharsets.US_ASCII));
    }

    static byte[] ascii(long value) {
        return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
    }
}
