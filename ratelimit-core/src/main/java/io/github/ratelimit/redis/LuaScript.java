package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/**
 * One Lua script, run by EVALSHA; after a {@code SCRIPT FLUSH}, a restart, or on a Cluster node that has not seen
 * it, the NOSCRIPT reply makes it run by EVAL, which loads it again. Immutable.
 */
final class LuaScript {

    private final byte[] source;
    private final byte[] sha;

    LuaScript(String source) {
        this.source = source.getBytes(StandardCharsets.UTF_8);
        try {
            this.sha = HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-1").digest(this.source))
                    .getBytes(StandardCharsets.US_ASCII);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required by every Java platform", e);
        }
    }

    /**
     * The script that runs a script of the store several times in one call, in order, on the same key: what a crowd
     * of this JVM's operations on one key costs Redis ({@link KeyQueue}). Its arguments are the number of runs, then
     * for each run the number of its arguments and the arguments; its reply, the list of each run's reply. The source
     * becomes the body of a function whose parameter {@code ARGV} hides the call's own, so each run reads its own
     * arguments as it would alone; a run's {@code return} ends that run. Work per call: the runs', at most as many as
     * its caller sends (a group's size).
     *
     * @param source a script of the store, reading {@code KEYS[1]} and {@code ARGV}
     * @return the combined script's source
     */
    static String combined(String source) {
        return "local function run(ARGV)\n" + source + "\nend\n" + RUNS + """
                local out = {}
                for c = 1, #ops do out[c] = run(ops[c]) end
                return out
                """;
    }

    /**
     * Lua: the runs of a call whose arguments are the number of runs, then for each run the number of its arguments
     * and the arguments, as {@code ops}, a list of each run's arguments.
     */
    static final String RUNS = """
            local ops = {}
            local at = 2
            for c = 1, tonumber(ARGV[1]) do
              local len = tonumber(ARGV[at])
              local a = {}
              for j = 1, len do a[j] = ARGV[at + j] end
              at = at + len + 1
              ops[c] = a
            end
            """;

    /** @return the script's SHA-1, as hex ASCII, for EVALSHA */
    byte[] sha() {
        return sha;
    }

    /**
     * Loads the script into the script cache of the node that holds the key.
     *
     * @param jedis the client
     * @param key a key the script will run on
     */
    void load(UnifiedJedis jedis, byte[] key) {
        jedis.scriptLoad(source, key);
    }

    Object run(UnifiedJedis jedis, List<byte[]> keys, List<byte[]> args) {
        try {
            return jedis.evalsha(sha, keys, args);
        } catch (JedisNoScriptException e) {
            return jedis.eval(source, keys, args);
        }
    }
}
