package io.github.ratelimit.benchmarks.redis;

import io.github.ratelimit.Limit;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.RedisClient;

/**
 * A G20 anchor: a well-known way of deciding a rate-limited call in Redis, written for this benchmark and run through
 * a pooled Jedis client from the benchmark's load threads, so that its Redis CPU and commands per decision compare
 * with our store's under the same load. Each decision is one round trip: one EVALSHA of the anchor's script (loaded
 * when a session opens), or one pipeline of plain commands. An anchor decides one window, the first of
 * {@link Workloads#THROUGHPUT_LIMITS} (so nothing is rejected), keeps no state in the client and never retries.
 *
 * <p>Its Redis keys have our layout, {@code <prefix>:<key space>:{<key>}}, with a suffix where an anchor keeps more
 * than one key per bucket or per window. The memory probe leaves anchors out: their keys per bucket differ (two, or
 * one per window), so bytes per key would not compare.
 */
abstract class JedisAnchorSubject implements Subject {

    private final RedisTarget target;
    private final String keyPrefix;
    private final int poolSize;

    JedisAnchorSubject(RedisTarget target, String keyPrefix, int poolSize) {
        this.target = target;
        this.keyPrefix = keyPrefix;
        this.poolSize = poolSize;
    }

    /** @return the file name of the anchor's Lua script, or {@code null} when it sends plain commands */
    abstract String scriptName();

    /**
     * @return every command a decision makes Redis run, sent or run inside the script, by commandstats name; any
     *         other (housekeeping aside) is an accounting problem
     */
    abstract Set<String> commands();

    /**
     * @param client the pooled client
     * @param sha the SHA1 of the loaded script, or {@code null} when {@link #scriptName()} is
     * @param buckets the Redis key of each bucket, by key index (before any suffix)
     * @param limit the one window to decide
     * @return the decider
     */
    abstract Decider decider(RedisClient client, byte[] sha, String[] buckets, Limit limit);

    @Override
    public List<Limit> throughputLimits() {
        return List.of(Workloads.THROUGHPUT_LIMITS.get(0));
    }

    @Override
    public boolean memoryProbe() {
        return false;
    }

    @Override
    public long retries(ServerCounters.Delta delta, StoreCounters store) {
        return 0;
    }

    @Override
    public String retriesSource() {
        return "0 by construction: one atomic script or pipeline per decision, nothing compared or retried";
    }

    @Override
    public Session open() {
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(poolSize);
        pool.setMaxIdle(poolSize);
        DefaultJedisClientConfig config = DefaultJedisClientConfig.builder()
                .user(target.user())
                .password(target.password())
                .database(target.database())
                .clientName("bench-" + id())
                .build();
        RedisClient client = RedisClient.builder()
                .hostAndPort(target.hostAndPort())
                .clientConfig(config)
                .poolConfig(pool)
                .build();
        try {
            String name = scriptName();
            byte[] sha = name == null
                    ? null
                    : target.admin().scriptLoad(LuaSources.read(name)).getBytes(StandardCharsets.US_ASCII);
            return new AnchorSession(client, sha);
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }

    /**
     * @param reply a script's reply, {@code {1 or 0, n}}
     * @return {@link Decider#ALLOWED} for 1, {@link Decider#REJECTED} for 0
     * @throws IllegalStateException for any other reply
     */
    static int verdict(Object reply) {
        if (reply instanceof List<?> list && !list.isEmpty() && list.get(0) instanceof Long allowed) {
            if (allowed == 1) {
                return Decider.ALLOWED;
            }
            if (allowed == 0) {
                return Decider.REJECTED;
            }
        }
        throw new IllegalStateException("the script answered " + reply + " instead of [1 or 0, n]");
    }

    /** @return a number as Lua's {@code tonumber} reads it, without an exponent */
    static byte[] ascii(double value) {
        return BigDecimal.valueOf(value).toPlainString().getBytes(StandardCharsets.US_ASCII);
    }

    static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Checks a window's counters: the EVALSHAs that succeeded each ran the given commands the given number of times,
     * none failed, and no other command ran.
     *
     * @param d the server's counters over the window
     * @param perScript the commands a script runs, by name, and how many times each
     * @param atMost the commands it runs at most the given number of times (on some paths only)
     * @return what did not add up, or {@code null}
     */
    final String scriptProblem(ServerCounters.Delta d, Map<String, Integer> perScript, Map<String, Integer> atMost) {
        long scripts = d.succeeded("evalsha");
        StringBuilder why = new StringBuilder();
        perScript.forEach((command, times) -> {
            if (d.calls(command) != times * scripts) {
                append(
                        why,
                        d.calls(command) + " " + command.toUpperCase(Locale.ROOT) + " calls for " + scripts
                                + " scripts that succeeded (each runs " + times + ")");
            }
        });
        atMost.forEach((command, times) -> {
            if (d.calls(command) > times * scripts) {
                append(
                        why,
                        d.calls(command) + " " + command.toUpperCase(Locale.ROOT) + " calls for " + scripts
                                + " scripts that succeeded (each runs at most " + times + ")");
            }
        });
        if (d.failed("evalsha") > 0) {
            append(why, d.failed("evalsha") + " EVALSHA failed (NOSCRIPT, or a script error)");
        }
        return otherCommands(d, why);
    }

    /**
     * @param d the server's counters over the window
     * @param why what did not add up so far, appended to
     * @return {@code why} with the calls of commands outside {@link #commands()} appended, or {@code null} when it
     *         stays empty
     */
    final String otherCommands(ServerCounters.Delta d, StringBuilder why) {
        Set<String> expected = commands();
        long other = d.calls(name -> !expected.contains(name) && !PhaseRunner.isHousekeeping(name));
        if (other > 0) {
            append(why, other + " calls of commands a decision of " + id() + " does not make");
        }
        return why.length() == 0 ? null : why.toString();
    }

    private static void append(StringBuilder why, String problem) {
        why.append(why.length() == 0 ? "" : "; ").append(problem);
    }

    private final class AnchorSession implements Session {
        private final RedisClient client;
        private final byte[] sha;

        AnchorSession(RedisClient client, byte[] sha) {
            this.client = client;
            this.sha = sha;
        }

        @Override
        public Decider prepare(String keySpace, List<String> keys, List<Limit> limits) {
            if (limits.size() != 1) {
                throw new IllegalArgumentException(id() + " decides one window, but was given " + limits);
            }
            String[] buckets = new String[keys.size()];
            for (int i = 0; i < buckets.length; i++) {
                buckets[i] = bucket(keySpace, keys.get(i));
            }
            return decider(client, sha, buckets, limits.get(0));
        }

        @Override
        public byte[] redisKey(String keySpace, String key) {
            return ascii(bucket(keySpace, key));
        }

        private String bucket(String keySpace, String key) {
            return keyPrefix + ":" + keySpace + ":{" + key + "}";
        }

        @Override
        public StoreCounters counters() {
            return null;
        }

        @Override
        public void close() {
            client.close();
        }
    }
}
