package io.github.ratelimit.redis;

import java.util.List;
import java.util.NoSuchElementException;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Runs each script on its own, on a connection borrowed from the client's pool when it is awaited (a Cluster routes
 * each key to its node: one round trip per call).
 *
 * <p><b>Waiting for this instance's own connections is not Redis failing.</b> When every pooled connection is busy
 * with this instance's other calls, the pool gives up after its wait ({@code connectTimeout}); the call then asks
 * again, for as long as Redis keeps answering: it fails (a store failure, so the rule's failure policy) only when
 * Redis has answered none of this runner's calls for {@code timeoutNanos} (the command timeout) since it began, that
 * is, when the connections are held by calls Redis does not answer in time; or, however Redis answers, after
 * {@value #MOST_TIMEOUTS} command timeouts in all (connections held and never given back would otherwise hold the call
 * for good). The pool the store builds for itself serves waiting callers in turn, so none is passed over. Thread-safe.
 */
final class DirectRunner implements ScriptRunner {

    /** The longest a call waits for connections, in command timeouts, whatever Redis answers meanwhile. */
    static final int MOST_TIMEOUTS = 100;

    private final UnifiedJedis jedis;
    private final long timeoutNanos;
    /** When Redis last answered a call of this runner ({@link System#nanoTime}). */
    private volatile long lastAnswer = System.nanoTime();

    /**
     * @param jedis the client
     * @param timeoutNanos how long Redis may answer none of the calls while one waits for a connection
     */
    DirectRunner(UnifiedJedis jedis, long timeoutNanos) {
        this.jedis = jedis;
        this.timeoutNanos = timeoutNanos;
    }

    @Override
    public Sent send(LuaScript script, List<byte[]> keys, List<byte[]> args) {
        return () -> run(script, keys, args);
    }

    @Override
    public Object run(LuaScript script, List<byte[]> keys, List<byte[]> args) {
        long began = System.nanoTime();
        while (true) {
            try {
                Object reply = script.run(jedis, keys, args);
                lastAnswer = System.nanoTime();
                return reply;
            } catch (JedisDataException e) {
                lastAnswer = System.nanoTime(); // an error reply is an answer
                throw e;
            } catch (JedisException e) {
                long now = System.nanoTime();
                if (!(e.getCause() instanceof NoSuchElementException)
                        || now - Math.max(began, lastAnswer) > timeoutNanos
                        || now - began > MOST_TIMEOUTS * timeoutNanos) {
                    throw e;
                }
                // Every connection is in use by this instance's calls, which Redis answers: ask the pool again.
            }
        }
    }
}
