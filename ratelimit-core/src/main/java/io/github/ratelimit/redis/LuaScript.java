package io.github.ratelimit.redis;

import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisNoScriptException;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

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
            this.sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(this.source))
                    .getBytes(StandardCharsets.US_ASCII);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required by every Java platform", e);
        }
    }

    /** @return the script's SHA-1, as hex ASCII, for EVALSHA */
    byte[] sha() {
        return sha;
    }

    Object run(UnifiedJedis jedis, List<byte[]> keys, List<byte[]> args) {
        try {
            return jedis.evalsha(sha, keys, args);
        } catch (JedisNoScriptException e) {
            return jedis.eval(source, keys, args);
        }
    }
}
