package io.github.ratelimit.benchmarks.redis;

import io.github.ratelimit.Limit;
import java.util.List;
import java.util.Map;
import java.util.Set;
import redis.clients.jedis.RedisClient;

/**
 * G20 anchor {@code scg}: a token bucket laid out as Spring Cloud Gateway's Redis rate limiter lays it out, in
 * {@code scg-token-bucket.lua} (written for this benchmark from that description): two string keys per bucket,
 * {@code <bucket>:tokens} and {@code <bucket>:ts}, both read with GET and both written with SETEX for twice the
 * bucket's fill time, on the server's TIME. Per decision: one EVALSHA, inside it TIME, 2 GET and 2 SETEX.
 */
final class ScgTokenBucketSubject extends JedisAnchorSubject {

    private static final byte[] ONE = ascii("1");

    ScgTokenBucketSubject(RedisTarget target, String keyPrefix, int poolSize) {
        super(target, keyPrefix, poolSize);
    }

    @Override
    public String id() {
        return Options.SCG;
    }

    @Override
    public String label() {
        return "SCG-style token bucket (Lua, 2 keys)";
    }

    @Override
    String scriptName() {
        return "scg-token-bucket.lua";
    }

    @Override
    Set<String> commands() {
        return Set.of("evalsha", "time", "get", "setex");
    }

    @Override
    Decider decider(RedisClient client, byte[] sha, String[] buckets, Limit limit) {
        List<byte[]> args = List.of(
                ascii(limit.permits() * 1e9 / limit.period().toNanos()), ascii(Long.toString(limit.capacity())), ONE);
        @SuppressWarnings("unchecked")
        List<byte[]>[] keys = new List[buckets.length];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = List.of(ascii(buckets[i] + ":tokens"), ascii(buckets[i] + ":ts"));
        }
        return keyIndex -> verdict(client.evalsha(sha, keys[keyIndex], args));
    }

    /** The client sends only EVALSHA. */
    @Override
    public long roundTrips(ServerCounters.Delta d) {
        return d.calls("evalsha");
    }

    @Override
    public String accountingProblem(ServerCounters.Delta d) {
        return scriptProblem(d, Map.of("time", 1, "get", 2, "setex", 2), Map.of());
    }
}
