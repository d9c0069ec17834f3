package io.github.ratelimit.redis;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.Connection;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.exceptions.JedisRedirectionException;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * Runs a store's scripts on a Redis Cluster: the calls one thread starts before it awaits any (the rules of one
 * request) go to Redis when the first of them is awaited, those of one hash slot as one pipeline on a connection to the
 * slot's node, each other slot's alone. The key layout makes the client key the hash tag ({@link RedisKeys}), so the
 * rules a request meets that count by the same key cost one round trip, not one per rule.
 *
 * <p>A call alone is run by the client, which routes it, follows a redirection and loads a script the node lacks (as
 * {@link DirectRunner} does). In a pipeline, a reply that is a redirection (the slot moved: a failover, a resharding)
 * or {@code NOSCRIPT} makes that call run again alone, which lets the client learn the slot's node and load the
 * script; a pipeline whose node could not be reached at all (nothing was written: the node is down, or every pooled
 * connection to it is busy) sends its calls alone, for the same reason. A pipeline that fails once written (a
 * timeout, a broken connection) fails each of its calls with that failure, which the store's breaker and failure
 * policies see as they would a call's own: whether Redis ran the scripts is unknown.
 *
 * <p>Thread-safe. A call is run once, however it is awaited; every call started must be awaited, on the thread that
 * started it ({@link ScriptRunner#send}): one awaited nowhere goes with that thread's next batch.
 */
final class SlotBatches implements ScriptRunner {

    private final IntFunction<Connection> connections;
    private final DirectRunner alone;
    private final ThreadLocal<List<Call>> started = ThreadLocal.withInitial(ArrayList::new);

    /** Round trips: each batch of one slot's calls, pipelined or alone. */
    final LongAdder roundTrips = new LongAdder();

    /**
     * @param jedis the Cluster's client
     * @param connections a pooled connection to the node that serves a slot, which closing gives back
     * @param timeoutNanos how long Redis may answer none of the calls while one waits for a connection
     *        ({@link DirectRunner})
     */
    SlotBatches(UnifiedJedis jedis, IntFunction<Connection> connections, long timeoutNanos) {
        this.connections = connections;
        this.alone = new DirectRunner(jedis, timeoutNanos);
    }

    @Override
    public Sent send(LuaScript script, List<byte[]> keys, List<byte[]> args) {
        Call call = new Call(script, keys, args);
        started.get().add(call);
        return call;
    }

    /** Sends every call this thread has started and not sent, with the awaited one, and finishes each. */
    private void sendStarted(Call awaited) {
        List<Call> mine = started.get();
        List<Call> calls = new ArrayList<>(mine);
        mine.clear();
        if (!calls.contains(awaited)) {
            calls.add(awaited); // started on another thread: it goes with this one's calls
        }
        Map<Integer, List<Call>> bySlot = new LinkedHashMap<>();
        for (Call c : calls) {
            if (c.taken.compareAndSet(false, true)) {
                bySlot.computeIfAbsent(c.slot, s -> new ArrayList<>(2)).add(c);
            }
        }
        for (Map.Entry<Integer, List<Call>> batch : bySlot.entrySet()) {
            roundTrips.increment();
            try {
                if (batch.getValue().size() == 1) {
                    runAlone(batch.getValue().get(0));
                } else {
                    runTogether(batch.getKey(), batch.getValue());
                }
            } finally {
                // Every call taken is finished, whatever happened (an Error included), so none is awaited forever.
                for (Call c : batch.getValue()) {
                    if (!c.done) {
                        c.finish(null, new JedisConnectionException("the Redis call did not complete"));
                    }
                }
            }
        }
    }

    private void runAlone(Call call) {
        try {
            call.finish(alone.run(call.script, call.keys, call.args), null);
        } catch (JedisException e) {
            call.finish(null, e);
        } catch (RuntimeException e) {
            call.finish(null, new JedisConnectionException("the Redis call failed: " + e, e));
        }
    }

    @SuppressWarnings("unchecked")
    private void runTogether(int slot, List<Call> batch) {
        Response<Object>[] replies = new Response[batch.size()];
        try (Connection connection = connections.apply(slot)) {
            Pipeline pipeline = new Pipeline(connection);
            for (int i = 0; i < replies.length; i++) {
                Call c = batch.get(i);
                replies[i] = pipeline.evalsha(c.script.sha(), c.keys, c.args);
            }
            pipeline.sync();
        } catch (JedisException e) {
            if (RedisCallException.unsent(e)) {
                // Nothing was written: the slot's node is down or its connections are busy. Alone, a call lets the
                // client find the slot's node again (after a failover) or wait its turn for a connection; when the
                // first cannot reach the slot either, neither can the others, which fail as it did, at once.
                Call first = batch.get(0);
                runAlone(first);
                JedisException failure = first.failure;
                for (Call c : batch.subList(1, batch.size())) {
                    if (failure != null && RedisCallException.unsent(failure)) {
                        c.finish(null, failure);
                    } else {
                        runAlone(c);
                    }
                }
            } else {
                batch.forEach(c -> c.finish(null, e));
            }
            return;
        } catch (RuntimeException e) {
            JedisConnectionException failure = new JedisConnectionException("the pipelined Redis call failed: " + e, e);
            batch.forEach(c -> c.finish(null, failure));
            return;
        }
        for (int i = 0; i < replies.length; i++) {
            Call c = batch.get(i);
            try {
                c.finish(replies[i].get(), null);
            } catch (JedisNoScriptException | JedisRedirectionException e) {
                runAlone(c); // the client loads the script, or follows the slot to its node
            } catch (JedisException e) {
                c.finish(null, e);
            }
        }
    }

    /** One script call: run once, by the batch it was taken into. */
    private final class Call implements Sent {

        final LuaScript script;
        final List<byte[]> keys;
        final List<byte[]> args;
        final int slot;
        final AtomicBoolean taken = new AtomicBoolean();
        private @Nullable Object reply;

        @Nullable
        JedisException failure;

        volatile boolean done;

        Call(LuaScript script, List<byte[]> keys, List<byte[]> args) {
            this.script = script;
            this.keys = keys;
            this.args = args;
            this.slot = JedisClusterCRC16.getSlot(keys.get(0));
        }

        void finish(@Nullable Object reply, @Nullable JedisException failure) {
            this.reply = reply;
            this.failure = failure;
            this.done = true;
        }

        @Override
        @SuppressWarnings("NullAway") // a call that ends without a failure holds the script's reply, never null
        public Object await() {
            if (!done) {
                sendStarted(this);
            }
            if (failure != null) {
                throw failure;
            }
            return reply;
        }
    }
}
