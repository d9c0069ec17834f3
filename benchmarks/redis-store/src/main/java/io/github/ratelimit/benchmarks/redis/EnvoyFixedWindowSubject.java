package io.github.ratelimit.benchmarks.redis;

import io.github.ratelimit.Limit;
import java.util.Set;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.Response;

/**
 * G20 anchor {@code envoy}: a fixed window as Envoy's rate limit service keeps it in Redis, written for this
 * benchmark from that description: one counter key per bucket and window, named after the window's start (from the
 * client's clock), and per decision one pipeline of {@code INCRBY key 1} and {@code PEXPIRE key <window>}: one round
 * trip, two commands, no script. A call is allowed while the count is at most the window's permits.
 */
final class EnvoyFixedWindowSubject extends JedisAnchorSubject {

    EnvoyFixedWindowSubject(RedisTarget target, String keyPrefix, int poolSize) {
        super(target, keyPrefix, poolSize);
    }

    @Override
    public String id() {
        return Options.ENVOY;
    }

    @Override
    public String label() {
        return "Envoy fixed window (INCRBY + PEXPIRE pipeline)";
    }

    @Override
    String scriptName() {
        return null;
    }

    @Override
    Set<String> commands() {
        return Set.of("incrby", "pexpire");
    }

    @Override
    Decider decider(RedisClient client, byte[] sha, String[] buckets, Limit limit) {
        long windowMillis = limit.period().toMillis();
        long permits = limit.permits();
        boolean wholeSeconds = windowMillis % 1000 == 0; // then the key names the start in seconds, as Envoy's do
        return keyIndex -> {
            long windowStart = System.currentTimeMillis() / windowMillis * windowMillis;
            byte[] key = ascii(buckets[keyIndex] + "_" + (wholeSeconds ? windowStart / 1000 : windowStart));
            Response<Long> count;
            try (Pipeline pipeline = client.pipelined()) {
                count = pipeline.incrBy(key, 1);
                pipeline.pexpire(key, windowMillis);
                pipeline.sync();
            }
            return count.get() <= permits ? Decider.ALLOWED : Decider.REJECTED;
        };
    }

    /** One pipeline per decision, so one round trip per INCRBY; replies written cross-check it. */
    @Override
    public long roundTrips(ServerCounters.Delta d) {
        return d.calls("incrby");
    }

    @Override
    public long clientCommands(ServerCounters.Delta d) {
        return d.calls("incrby") + d.calls("pexpire");
    }

    @Override
    public String accountingProblem(ServerCounters.Delta d) {
        StringBuilder why = new StringBuilder();
        if (d.calls("incrby") != d.calls("pexpire")) {
            why.append(d.calls("incrby"))
                    .append(" INCRBY for ")
                    .append(d.calls("pexpire"))
                    .append(" PEXPIRE");
        }
        if (d.failed("incrby") + d.failed("pexpire") > 0) {
            why.append(why.length() == 0 ? "" : "; ")
                    .append(d.failed("incrby") + d.failed("pexpire"))
                    .append(" INCRBY/PEXPIRE failed");
        }
        return otherCommands(d, why);
    }
}
