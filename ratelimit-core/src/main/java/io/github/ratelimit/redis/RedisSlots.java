package io.github.ratelimit.redis;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.Decision;
import io.github.ratelimit.internal.bucket.Pipelining;
import io.github.ratelimit.store.BucketStore.KeyState;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.support.RateLimitedLog;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Concurrency rules' slots in Redis ({@link SlotScript}): each call in flight holds a lease that expires
 * {@link #LEASE_NANOS} after it was taken or last renewed. This instance renews the leases of its calls still running
 * every {@link #RENEW_NANOS} (one script per lease, started together so they share round trips where the store
 * pipelines), from a thread of its own started with the first lease and stopped by {@link #close()}. So a call
 * keeps its slot however long it runs, and the slots of an instance that crashed, or lost Redis for longer than a
 * lease, come back at most {@link #LEASE_NANOS} after its last renewal. Thread-safe.
 */
final class RedisSlots implements AutoCloseable {

    /** How long a lease lives unless renewed: the longest a crashed instance's slots stay taken. */
    static final long LEASE_NANOS = 15_000_000_000L;

    /** How often a running call's lease is renewed: two renewals may fail before it runs out. */
    static final long RENEW_NANOS = 5_000_000_000L;

    /** How often the renewer looks for leases due. */
    private static final long TICK_NANOS = 1_000_000_000L;

    /** How long a rejected call is told to wait: nothing says when a call in flight ends. */
    static final long RETRY_NANOS = 1_000_000_000L;

    private static final LuaScript SCRIPT = new LuaScript(SlotScript.SOURCE);
    private static final byte[] TAKE = {'a'};
    private static final byte[] PEEK = {'k'};
    private static final byte[] GIVE_BACK = {'f'};
    private static final byte[] RENEW = {'n'};
    private static final byte[] LEASE_MICROS = RedisSlidingState.ascii(LEASE_NANOS / 1_000);
    private static final RateLimitedLog LOST_LOG = new RateLimitedLog(10_000_000_000L);

    /** A lease this instance holds: where, and when it was last taken or renewed on the store's clock. */
    private record Held(byte[] key, byte[] max, long renewedNanos) {}

    private final RedisSlidingState.Context context;
    /** The store's clock: the server's time as the store tracks it, or the clock the store was given. */
    private final TimeMeter storeClock;

    private final Map<Long, Held> held = new ConcurrentHashMap<>();
    private @Nullable ScheduledThreadPoolExecutor renewer;
    private boolean closed;

    /**
     * @param context runs the script; its clock, when the store was given one, is the time the script uses
     * @param storeClock the store's clock, which says when a lease is due for renewal
     */
    RedisSlots(RedisSlidingState.Context context, TimeMeter storeClock) {
        this.context = context;
        this.storeClock = storeClock;
    }

    /**
     * @param key the Redis key of the rule's key's leases
     * @param max the most calls in flight
     * @return the key's slots
     */
    KeyState state(byte[] key, int max) {
        return new Slots(List.of(key), max, RedisSlidingState.ascii(max));
    }

    private List<byte[]> args(byte[] op, long lease, byte[] max) {
        TimeMeter given = context.clock();
        byte[] now =
                given == null ? RedisSlidingState.EMPTY : RedisSlidingState.ascii(given.currentTimeNanos() / 1_000);
        return List.of(now, op, RedisSlidingState.ascii(lease), max, LEASE_MICROS);
    }

    private List<?> run(List<byte[]> keys, byte[] op, long lease, byte[] max) {
        return checked(
                keys, context.calls().send(SCRIPT, keys, args(op, lease, max)).await());
    }

    private List<?> checked(List<byte[]> keys, Object answer) {
        List<?> reply = (List<?>) answer;
        if (RedisSlidingState.number(reply.get(2)) == 1) {
            context.calls()
                    .repaired(
                            keys.get(0),
                            "a key of another type, more leases than twice the limit and 64, or "
                                    + "leases expiring beyond twice a lease's life; replaced");
        }
        return reply;
    }

    private synchronized void startRenewing() {
        if (renewer != null || closed) {
            return;
        }
        renewer = new ScheduledThreadPoolExecutor(1, task -> {
            Thread t = new Thread(task, "ratelimit-lease-renewer");
            t.setDaemon(true);
            t.setContextClassLoader(RedisSlots.class.getClassLoader());
            return t;
        });
        renewer.scheduleWithFixedDelay(
                () -> {
                    try {
                        renewDue();
                    } catch (Throwable t) {
                        // A task that throws is never run again: every running call's lease would then run out
                        // unnoticed.
                        LOST_LOG.log(
                                Level.ERROR,
                                "Renewing the leases of calls in flight failed; trying again in a second",
                                t);
                    }
                },
                TICK_NANOS,
                TICK_NANOS,
                TimeUnit.NANOSECONDS);
    }

    /** Renews every lease last renewed {@link #RENEW_NANOS} ago or more; drops those that ran out meanwhile. */
    void renewDue() {
        long now = storeClock.currentTimeNanos();
        List<Map.Entry<Long, Held>> due = new ArrayList<>();
        List<ScriptRunner.Sent> sent = new ArrayList<>();
        try {
            for (Map.Entry<Long, Held> e : held.entrySet()) {
                Held h = e.getValue();
                if (now - h.renewedNanos() >= RENEW_NANOS) {
                    // Off the request path: a slow Redis answers within the background timeout, not the command's.
                    sent.add(context.calls().sendLate(SCRIPT, List.of(h.key()), args(RENEW, e.getKey(), h.max())));
                    due.add(e);
                }
            }
        } catch (RuntimeException e) {
            // The breaker is open: the leases are tried again at the next tick.
        }
        for (int i = 0; i < sent.size(); i++) {
            Map.Entry<Long, Held> e = due.get(i);
            try {
                List<?> reply = (List<?>) sent.get(i).await();
                Held h = e.getValue();
                if (RedisSlidingState.number(reply.get(0)) == 1) {
                    held.replace(e.getKey(), h, new Held(h.key(), h.max(), now));
                } else if (held.remove(e.getKey(), h)) {
                    LOST_LOG.log(
                            Level.WARNING,
                            () -> "A call's slot at " + RedisKeys.printable(h.key()) + " ran out "
                                    + "before its lease was renewed (Redis was unreachable for longer than a lease, or the key "
                                    + "was reset): its slot may be another call's now",
                            null);
                }
            } catch (RuntimeException x) {
                // Redis failed: this lease is tried again at the next tick, while it may still be live.
            }
        }
    }

    /** @return the leases this instance renews now */
    int held() {
        return held.size();
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (renewer != null) {
            renewer.shutdownNow();
        }
    }

    /** A key's slots: each operation one script; a take starts apart, to travel with the call's other rules. */
    private final class Slots implements KeyState, Pipelining {

        private final List<byte[]> keys;
        private final int max;
        private final byte[] maxArg;

        Slots(List<byte[]> keys, int max, byte[] maxArg) {
            this.keys = keys;
            this.max = max;
            this.maxArg = maxArg;
        }

        @Override
        public Probe consume(long cost) {
            return send(cost).await();
        }

        @Override
        public Pipelining.Sent send(long cost) {
            // Positive, and never 0, which means "no receipt".
            long lease = ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE | 1;
            long now = storeClock.currentTimeNanos();
            ScriptRunner.Sent sent = context.calls().send(SCRIPT, keys, args(TAKE, lease, maxArg));
            return () -> {
                List<?> reply = checked(keys, sent.await());
                long live = RedisSlidingState.number(reply.get(1));
                List<Decision.Window> windows = List.of(Decision.Window.concurrency(max, live));
                if (RedisSlidingState.number(reply.get(0)) != 1) {
                    return new Probe(false, RETRY_NANOS, windows, 0);
                }
                held.put(lease, new Held(keys.get(0), maxArg, now));
                startRenewing();
                return new Probe(true, 0, windows, lease);
            };
        }

        @Override
        public Probe peek(long cost) {
            List<?> reply = run(keys, PEEK, 0, maxArg);
            boolean free = RedisSlidingState.number(reply.get(0)) == 1;
            return new Probe(
                    free,
                    free ? 0 : RETRY_NANOS,
                    List.of(Decision.Window.concurrency(max, RedisSlidingState.number(reply.get(1)))),
                    0);
        }

        @Override
        public Probe reserve(long cost, long maxWaitNanos) {
            throw new UnsupportedOperationException("a slot cannot be reserved ahead: nothing says when a call ends");
        }

        /**
         * Gives the slot back. Its lease is forgotten first, so it is never renewed again, whatever Redis does now;
         * when Redis fails at that moment, giving it back is tried again off the request path ({@link LateRefunds}:
         * the same lease given back twice is given back once) until the lease would have run out anyway. Never throws
         * for Redis's failure.
         */
        @Override
        public void refund(long cost, long receipt) {
            if (receipt == 0) {
                return;
            }
            held.remove(receipt);
            try {
                run(keys, GIVE_BACK, receipt, maxArg);
            } catch (RateLimitStoreException e) {
                context.calls()
                        .lateRefunds
                        .offer(
                                "the slot of lease " + receipt + " at " + RedisKeys.printable(keys.get(0)),
                                () -> checked(
                                        keys,
                                        context.calls()
                                                .sendLate(SCRIPT, keys, args(GIVE_BACK, receipt, maxArg))
                                                .await()));
            }
        }
    }
}
