package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.UnifiedJedis;

/**
 * The script of a token-bucket or fixed-window decision: compare the bucket's stored state with the state this JVM expects, and when
 * they match, store the new state (or, for a decision that changed nothing, only confirm). When they differ,
 * return the stored state so the caller can recompute from it without another read. Run as a {@link LuaScript}.
 */
final class CasScript {

    /** The longest state a bucket of any rule stores; a longer value is garbage (it would be read on every call). */
    static final int MAX_STATE_BYTES = 4096;

    /**
     * KEYS[1] the bucket; ARGV[1] the expected state ('' when absent); ARGV[2] the new state ('' to only
     * confirm); ARGV[3] the time to live in milliseconds. Returns 1 on a match, else the stored state ('' when
     * absent); 2, or the stored state in a list, when it replaced garbage first: a key of another type, or a
     * value longer than {@link #MAX_STATE_BYTES} (deleted, so it reads as absent), or a confirmed state without
     * an expiry (given one). Garbage the script cannot tell (a value that does not decode) the caller replaces.
     * Worst case per call: a constant number of commands on one small string: the value is read by one
     * {@code GETRANGE} of at most {@link #MAX_STATE_BYTES} + 1 bytes, which tells a longer value (garbage, never read
     * whole) and a key of another type (its WRONGTYPE error) in the same command.
     */
    static final String SOURCE = """
            local key = KEYS[1]
            local repaired = 0
            -- Absent and empty read alike, as ''.
            local current = redis.pcall('GETRANGE', key, 0, %1$d)
            if type(current) == 'table' then
              -- Only a key of another type makes a read fail; anything else fails the script, as redis.call would.
              if not string.find(current.err or '', 'WRONGTYPE', 1, true) then error(current) end
              redis.call('UNLINK', key)
              repaired = 1
              current = ''
            elseif #current > %1$d then
              redis.call('UNLINK', key)
              repaired = 1
              current = ''
            end
            if current == ARGV[1] then
              if ARGV[2] ~= '' then
                redis.call('SET', key, ARGV[2], 'PX', ARGV[3])
              elseif current ~= '' and redis.call('PTTL', key) == -1 then
                redis.call('PEXPIRE', key, ARGV[3])
                repaired = 1
              end
              return 1 + repaired
            end
            if repaired == 1 then return {current} end
            return current
            """.formatted(MAX_STATE_BYTES);

    /**
     * What one compare-and-set found.
     *
     * @param stored {@code null} when the stored state was as expected (and the new one, if any, is stored now);
     *        otherwise the stored state, empty when the bucket does not exist
     * @param repaired whether the script replaced garbage it found under the key
     */
    record Reply(byte @Nullable [] stored, boolean repaired) {}

    /** Returns the server's time: {seconds, microseconds}. */
    static final String TIME_SOURCE = "return redis.call('TIME')";

    private static final byte[] EMPTY = new byte[0];
    private static final Reply MATCHED = new Reply(null, false);
    private static final Reply MATCHED_REPAIRED = new Reply(null, true);

    private final LuaScript compareAndSet = new LuaScript(SOURCE);
    private final LuaScript time = new LuaScript(TIME_SOURCE);

    /**
     * Starts one compare-and-set; {@link #reply} reads what it found.
     *
     * @return the call, to await
     */
    ScriptRunner.Sent send(
            ScriptRunner scripts, byte[] key, byte @Nullable [] expected, byte @Nullable [] update, long ttlMillis) {
        return scripts.send(
                compareAndSet,
                List.of(key),
                List.of(
                        expected == null ? EMPTY : expected,
                        update == null ? EMPTY : update,
                        Long.toString(ttlMillis).getBytes(StandardCharsets.US_ASCII)));
    }

    /**
     * @param reply the script's reply
     * @return what the script found
     */
    static Reply reply(Object reply) {
        if (reply instanceof Long code) {
            return code == 1 ? MATCHED : MATCHED_REPAIRED;
        }
        if (reply instanceof List<?> list) {
            return new Reply((byte[]) list.get(0), true);
        }
        return new Reply((byte[]) reply, false);
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
