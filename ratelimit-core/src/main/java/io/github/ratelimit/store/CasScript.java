package io.github.ratelimit.store;

import redis.clients.jedis.UnifiedJedis;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The script of a token-bucket or fixed-window decision: compare the bucket's stored state with the state this JVM expects, and when
 * they match, store the new state (or, for a decision that changed nothing, only confirm). When they differ,
 * return the stored state so the caller can recompute from it without another read. Run as a {@link LuaScript}.
 */
final class CasScript {

    /**
     * KEYS[1] the bucket; ARGV[1] the expected state ('' when absent); ARGV[2] the new state ('' to only
     * confirm); ARGV[3] the time to live in milliseconds. Returns 1 on a match, else the stored state ('' when
     * absent).
     */
    static final String SOURCE = """
            local current = redis.call('GET', KEYS[1])
            if current == false then current = '' end
            if current == ARGV[1] then
              if ARGV[2] ~= '' then
                redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
              end
              return 1
            end
            return current
            """;

    /** Returns the server's time: {seconds, microseconds}. */
    static final String TIME_SOURCE = "return redis.call('TIME')";

    private static final byte[] EMPTY = new byte[0];

    private final LuaScript compareAndSet = new LuaScript(SOURCE);
    private final LuaScript time = new LuaScript(TIME_SOURCE);

    /**
     * @return {@code null} when the stored state was as expected (and the new one, if any, is stored now);
     *         otherwise the stored state, empty when the bucket does not exist
     */
    byte[] compareAndSet(ScriptRunner scripts, byte[] key, byte[] expected, byte[] update, long ttlMillis) {
        Object reply = scripts.run(compareAndSet, List.of(key), List.of(expected == null ? EMPTY : expected,
                update == null ? EMPTY : update, Long.toString(ttlMillis).getBytes(StandardCharsets.US_ASCII)));
        if (reply instanceof Long) {
            return null;
        }
        return (byte[]) reply;
    }

    /**
     * @return the server's time in microseconds since the epoch
     */
    long serverTimeMicros(UnifiedJedis jedis, byte[] routingKey) {
        List<?> parts = (List<?>) time.run(jedis, List.of(routingKey), List.of());
        long seconds = Long.parseLong(text(parts.get(0)));
        long micros = Long.parseLong(text(parts.get(1)));
        return seconds * 1_000_000L + micros;
    }

    private static String text(Object o) {
        return o instanceof byte[] b ? new String(b, StandardCharsets.US_ASCII) : String.valueOf(o);
    }
}
