package io.github.ratelimit.redis;

import java.util.List;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Runs a store's scripts on Redis: one call at a time on a pooled connection ({@link DirectRunner}), or many threads'
 * calls sent together ({@link AutoPipeline}). Either way a call returns the script's reply or throws the
 * {@link JedisException} Redis or the connection gave, so the store's breaker and
 * failure policies see the same outcomes.
 */
interface ScriptRunner {

    /**
     * @param script the script
     * @param keys its keys (one, for every script of this store)
     * @param args its arguments
     * @return the script's reply
     * @throws JedisException when Redis or the connection fails
     */
    default Object run(LuaScript script, List<byte[]> keys, List<byte[]> args) {
        return send(script, keys, args).await();
    }

    /**
     * Starts a call whose reply the calling thread takes later, so that the calls one thread starts before it
     * awaits any go to Redis in one round trip (the rules of one request). Every call started must be awaited,
     * on the thread that started it.
     *
     * @param script the script
     * @param keys its keys
     * @param args its arguments
     * @return the call, to await
     */
    Sent send(LuaScript script, List<byte[]> keys, List<byte[]> args);

    /** A call started by {@link #send}. */
    interface Sent {

        /**
         * @return the script's reply, once it has come
         * @throws JedisException when Redis or the connection fails
         */
        Object await();
    }
}
