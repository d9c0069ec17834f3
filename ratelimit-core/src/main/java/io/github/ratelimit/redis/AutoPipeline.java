package io.github.ratelimit.redis;

import io.github.ratelimit.support.RateLimitedLog;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.AbstractPipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.exceptions.JedisRedirectionException;

/**
 * Sends the scripts of many threads together: calls made while others are on the wire are queued, and the next
 * thread to find a connection free sends everything queued (up to a batch's size) as one pipeline, then hands each
 * caller its reply. What Lettuce and Redisson call auto-pipelining, without a thread of its own: the callers take
 * turns at sending (flat combining).
 *
 * <p>A call alone sends at once, as a plain call (a pipeline of one costs the client more); under load, one write and one read serve a whole batch,
 * which saves Redis and this JVM a system call pair per command. At most {@code lanes} batches are on the wire at
 * a time, each on a connection borrowed from the client's pool for that batch. A thread may also start several calls
 * ({@link #send}) and then await them: they go in one batch, which is how one request's rules share a round trip.
 *
 * <p>Failures are the caller's as before: a reply that is an error is that call's
 * {@link JedisDataException}; a broken connection or a timeout fails every call of
 * its batch; a script Redis does not have (NOSCRIPT) is run again on its own by its caller, which loads it.
 *
 * <p><b>Waiting for this instance's own lanes is not Redis failing.</b> A crowd of callers waits its turn here: a
 * queued call gives up (with a {@link NotSentException}, a store failure that Redis never saw) only once the store's
 * circuit breaker has opened meanwhile (Redis kept failing: the batches on the wire each fail within the socket
 * timeout, so a dead Redis opens it within its failure streak), or after {@value #MOST_TIMEOUTS} command timeouts in
 * all, a bound that no queue of live callers reaches. Neither this JVM's own pauses (a garbage collection stops the
 * sender too) nor a queue that takes a while to drain count as Redis's silence. So a thousand calls at once are
 * decided by Redis and never by a failure policy while Redis answers; the queue is as long as the callers are many,
 * each one call. A call taken into a batch waits for that batch's reply, which the socket timeout bounds; a caller that
 * sends finds its own call done after the batches ahead of it, each so bounded. Waiting ignores interruption, as a
 * blocking socket read does, and keeps the thread's interrupt status.
 *
 * <p>Only for a client whose pipeline goes to one server (standalone, Sentinel); on a Cluster, Jedis's pipeline
 * spans nodes with a thread pool per sync, so the store sends calls directly there. A Cluster client the store
 * did not recognise shows itself by a redirection (MOVED, ASK) in reply to a pipelined script (a call alone is routed
 * by the client): that call is run again on its own, and from then on every call is sent on its own.
 */
final class AutoPipeline implements ScriptRunner {

    /** Pipelined batches on the wire at once: one being written or read while the next one fills. */
    static final int LANES = 2;

    /** The most calls in one pipelined batch. */
    static final int MAX_BATCH = 64;

    private static final int QUEUED = 0;
    private static final int TAKEN = 1;
    private static final int DONE = 2;
    private static final int ABANDONED = 3;

    /** One caller's script call and, once done, its outcome. */
    private final class Call extends AtomicInteger implements Sent {
        private static final long serialVersionUID = 1L;
        final LuaScript script;
        final List<byte[]> keys;
        final List<byte[]> args;
        final Thread owner = Thread.currentThread();
        /** When the call was queued, on {@link System#nanoTime}. */
        long queuedAt;
        /** Whether its owner waits for it: only such a caller is woken to send (others are busy elsewhere). */
        volatile boolean awaited;

        @Nullable
        Object reply;

        @Nullable
        RuntimeException error;

        boolean runAlone;

        Call(LuaScript script, List<byte[]> keys, List<byte[]> args) {
            this.script = script;
            this.keys = keys;
            this.args = args;
        }

        /** Publishes the outcome (the fields are written before the volatile state) and wakes the owner. */
        void finish(@Nullable Object reply, @Nullable RuntimeException error, boolean runAlone) {
            this.reply = reply;
            this.error = error;
            this.runAlone = runAlone;
            set(DONE);
            if (owner != Thread.currentThread()) {
                LockSupport.unpark(owner);
            }
        }

        @Override
        public Object await() {
            return AutoPipeline.this.await(this);
        }
    }

    /** A call given up before it was sent: Redis saw nothing of it. */
    static final class NotSentException extends JedisConnectionException {
        private static final long serialVersionUID = 1L;

        NotSentException(String message) {
            super(message);
        }
    }

    private final UnifiedJedis jedis;
    private final int maxBatch;
    /** The longest a call waits to be sent, in command timeouts, unless the breaker opens first. */
    static final int MOST_TIMEOUTS = 20;

    private final long queueTimeoutNanos;
    /** Whether the store's circuit breaker refuses calls now: Redis kept failing while a call waited. */
    private final BooleanSupplier refusing;

    private final ConcurrentLinkedQueue<Call> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger freeLanes;
    /** Pipelines sent: the round trips actually made. */
    final LongAdder batches = new LongAdder();
    /** Whether Redis redirected a pipelined call: the client is a Cluster, and calls go one by one. */
    volatile boolean redirected;

    private static final RateLimitedLog REDIRECT_LOG = new RateLimitedLog(3_600_000_000_000L);

    /**
     * @param jedis a client whose pipeline goes to one server
     * @param lanes how many batches may be on the wire at once, at least 1
     * @param maxBatch the most calls in one batch, at least 1
     * @param queueTimeoutNanos the command timeout: a call waits to be sent at most {@value #MOST_TIMEOUTS} of them
     * @param refusing whether the store's circuit breaker refuses calls now
     */
    AutoPipeline(UnifiedJedis jedis, int lanes, int maxBatch, long queueTimeoutNanos, BooleanSupplier refusing) {
        if (lanes < 1 || maxBatch < 1 || queueTimeoutNanos <= 0) {
            throw new IllegalArgumentException("lanes " + lanes + ", maxBatch " + maxBatch + ", queueTimeoutNanos "
                    + queueTimeoutNanos + ": each must be positive");
        }
        this.jedis = jedis;
        this.maxBatch = maxBatch;
        this.queueTimeoutNanos = queueTimeoutNanos;
        this.refusing = refusing;
        this.freeLanes = new AtomicInteger(lanes);
    }

    /**
     * Queues the call: it goes with the next batch, which its own thread sends when it awaits the call and no
     * other thread has sent it by then. A thread that starts several calls before awaiting one sends them in one
     * batch.
     */
    @Override
    public Sent send(LuaScript script, List<byte[]> keys, List<byte[]> args) {
        if (redirected) {
            return () -> script.run(jedis, keys, args);
        }
        Call call = new Call(script, keys, args);
        call.queuedAt = System.nanoTime();
        queue.add(call);
        return call;
    }

    @SuppressWarnings("NullAway") // a call that ends without an error holds the script's reply, never null
    private Object await(Call call) {
        call.awaited = true;
        boolean interrupted = false;
        try {
            while (call.get() != DONE) {
                if (call.get() == QUEUED && tryTakeLane()) {
                    try {
                        sendUntilDone(call);
                    } finally {
                        releaseLane();
                    }
                    continue;
                }
                if (call.get() == QUEUED) {
                    // Lanes busy with batches on the wire are this instance's crowd, not a failure: each batch ends
                    // within the socket timeout, and Redis failing opens the breaker.
                    long waited = System.nanoTime() - call.queuedAt;
                    long most = MOST_TIMEOUTS * queueTimeoutNanos;
                    boolean open = refusing.getAsBoolean();
                    if ((open || waited >= most) && call.compareAndSet(QUEUED, ABANDONED)) {
                        if (freeLanes.get() > 0) {
                            wakeHead(); // it may have been woken to take a lane; the next caller takes it instead
                        }
                        throw new NotSentException(
                                open
                                        ? "the Redis circuit breaker opened while this call waited " + "to be sent"
                                        : "this call waited " + waited / 1_000_000 + " ms to be sent, the most "
                                                + "a call waits (" + MOST_TIMEOUTS + " command timeouts)");
                    }
                    // Looks at the breaker again now and then: nothing else wakes a queued call when Redis fails.
                    LockSupport.parkNanos(this, Math.max(1_000, Math.min(most - waited, queueTimeoutNanos / 2)));
                } else if (call.get() == TAKEN) {
                    // On the wire: the sender's reads are bounded by the socket timeout, and it finishes every call.
                    LockSupport.park(this);
                }
                interrupted |= Thread.interrupted();
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        if (call.error != null) {
            throw call.error;
        }
        return call.runAlone ? call.script.run(jedis, call.keys, call.args) : call.reply;
    }

    private boolean tryTakeLane() {
        for (int free = freeLanes.get(); free > 0; free = freeLanes.get()) {
            if (freeLanes.compareAndSet(free, free - 1)) {
                return true;
            }
        }
        return false;
    }

    /** Frees a lane and wakes the oldest waiting caller, who may take it to send what is queued. */
    private void releaseLane() {
        freeLanes.incrementAndGet();
        wakeHead();
    }

    /**
     * Wakes the owner of the oldest queued call that waits for it. A call whose owner has not begun to wait (it
     * started other calls and is busy) is passed over: it goes with whatever batch the woken caller sends.
     */
    private void wakeHead() {
        for (Iterator<Call> it = queue.iterator(); it.hasNext(); ) {
            Call head = it.next();
            int state = head.get();
            if (state == QUEUED && head.awaited) {
                LockSupport.unpark(head.owner);
                return;
            }
            if (state == ABANDONED) {
                it.remove(); // nobody waits on it
            }
        }
    }

    /** Sends batches of what is queued until the given call is among those done. */
    private void sendUntilDone(Call own) {
        Call[] batch = new Call[maxBatch];
        while (own.get() != DONE) {
            int n = 0;
            while (n < maxBatch) {
                Call next = queue.poll();
                if (next == null) {
                    break;
                }
                if (next.compareAndSet(QUEUED, TAKEN)) {
                    batch[n++] = next;
                }
            }
            if (n == 0) {
                return; // someone else sent it; it is on the wire
            }
            send(batch, n);
        }
    }

    /**
     * A batch of one goes as a plain call, which costs the client less than a pipeline of one (no pipeline, response
     * queue or sync); the client routes it, and loads a script Redis lacks.
     */
    private void sendAlone(Call call) {
        boolean finished = false;
        try {
            Object reply = call.script.run(jedis, call.keys, call.args);
            call.finish(reply, null, false);
            finished = true;
        } catch (JedisException e) {
            call.finish(null, e, false);
            finished = true;
        } catch (RuntimeException e) {
            call.finish(null, new JedisConnectionException("the Redis call failed: " + e, e), false);
            finished = true;
        } finally {
            if (!finished) {
                // An Error: its caller must not wait forever.
                call.finish(null, new JedisConnectionException("the Redis call did not complete"), false);
            }
        }
    }

    @SuppressWarnings("unchecked")
    private void send(Call[] batch, int n) {
        batches.increment();
        if (n == 1) {
            sendAlone(batch[0]);
            batch[0] = null;
            return;
        }
        Response<Object>[] replies = new Response[n];
        RuntimeException failure = null;
        try (AbstractPipeline pipeline = jedis.pipelined()) {
            for (int i = 0; i < n; i++) {
                replies[i] = pipeline.evalsha(batch[i].script.sha(), batch[i].keys, batch[i].args);
            }
            pipeline.sync();
            for (int i = 0; i < n; i++) {
                try {
                    batch[i].finish(replies[i].get(), null, false);
                } catch (JedisNoScriptException e) {
                    batch[i].finish(null, null, true);
                } catch (JedisRedirectionException e) {
                    if (!redirected) {
                        redirected = true;
                        REDIRECT_LOG.log(
                                System.Logger.Level.WARNING,
                                () -> "Redis redirected a pipelined script (" + e.getMessage()
                                        + "): the client is a Cluster; sending each script on its own from now on",
                                null);
                    }
                    batch[i].finish(null, null, true);
                } catch (JedisException e) {
                    batch[i].finish(null, e, false);
                }
            }
        } catch (JedisException e) {
            failure = e;
        } catch (RuntimeException e) {
            failure = new JedisConnectionException("the pipelined Redis call failed: " + e, e);
        } finally {
            // Every call taken is finished, whatever happened (an Error included), so no caller waits forever.
            for (int i = 0; i < n; i++) {
                if (batch[i].get() != DONE) {
                    batch[i].finish(
                            null,
                            failure != null
                                    ? failure
                                    : new JedisConnectionException("the pipelined Redis call did not complete"),
                            false);
                }
                batch[i] = null;
            }
        }
    }
}
