package io.github.ratelimit.benchmarks.redis;

import io.github.ratelimit.Limit;
import java.util.List;
import java.util.Map;
import java.util.Set;
import redis.clients.jedis.RedisClient;

/**
 * G20 anchor {@code gcra}: the generic cell rate algorithm on one string key, in {@code gcra.lua} (written for this
 * benchmark): GET the theoretical arrival time, compute on the server's TIME, and when the call is allowed SET the
 * new one with PX (the burst tolerance). Per decision: one EVALSHA, inside it TIME, GET and, when allowed, SET.
 */
final class GcraSubject extends JedisAnchorSubject {

    private static final byte[] ONE = ascii("1");
    private static final byte[] SERVER_TIME = ascii("");

    GcraSubject(RedisTarget target, String keyPrefix, int poolSize) {
        super(target, keyPrefix, poolSize);
    }

    @Override
    public String id() {
        return Options.GCRA;
    }

    @Override
    public String label() {
        return "GCRA (Lua, 1 key)";
    }

    @Override
    String scriptName() {
        return "gcra.lua";
    }

    @Override
    Set<String> commands() {
        return Set.of("evalsha", "time", "get", "set");
    }

    @Override
    Decider decider(RedisClient client, byte[] sha, String[] buckets, Limit limit) {
        double intervalMicros = limit.period().toNanos() / 1e3 / limit.permits();
        List<byte[]> args = List.of(ascii(intervalMicros), ascii(intervalMicros * limit.capacity()), ONE, SERVER_TIME);
        @SuppressWarnings("unchecked")
        List<byte[]>[] keys = new List[buckets.length];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = List.of(ascii(buckets[i]));
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
        return scriptProblem(d, Map.of("time", 1, "get", 1), Map.of("set", 1));
    }
}
