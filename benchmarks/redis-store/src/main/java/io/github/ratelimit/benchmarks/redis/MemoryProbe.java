package io.github.ratelimit.benchmarks.redis;

import redis.clients.jedis.Jedis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Redis memory per bucket: {@code used_memory} before and after writing N fresh keys (each used once, by
 * {@code --threads} callers) divided by the keys created, and whether every key expires: the keyspace's
 * {@code expires} must grow by as much as its {@code keys}, and {@code PTTL} must be positive on a sample.
 * Also reports {@code MEMORY USAGE} of sampled keys and the stored value's size.
 *
 * <p>The figure depends on more than the value: the key's length, jemalloc's size classes, and the growth of
 * Redis's key tables (8 bytes per slot for keys and again for expiries, doubling at powers of two). So the
 * benchmark runs each subject's probe on a fresh server of its own when it owns Redis, and every subject uses the
 * same key layout.
 */
final class MemoryProbe {

    /** The rule name in the keys: with the store's default prefix, keys read {@code ratelimit:{api:user:123}}. */
    private static final String KEY_SPACE = "api";
    private static final int SAMPLE = 200;
    private static final int WARMUP_KEYS = 1_000;
    private static final double TIME_BOUND_SECONDS = 600;

    /**
     * @param subject whose keys
     * @param keysWritten calls made, one per fresh key
     * @param keysCreated growth of the database's key count
     * @param expiresCreated growth of its count of keys with a time to live
     * @param usedMemoryDelta growth of {@code used_memory}, in bytes
     * @param sampled keys whose PTTL was read
     * @param sampledWithTtl those with a positive PTTL
     * @param minTtlMillis the smallest PTTL seen
     * @param maxTtlMillis the largest PTTL seen
     * @param medianMemoryUsage median {@code MEMORY USAGE} of the sampled keys, in bytes
     * @param valueBytes {@code STRLEN} of a sampled key (the serialized bucket)
     * @param exampleKey one of the keys
     * @param storeFailed calls decided without the store
     */
    record Result(String subject, long keysWritten, long keysCreated, long expiresCreated, long usedMemoryDelta,
                  int sampled, int sampledWithTtl, long minTtlMillis, long maxTtlMillis, long medianMemoryUsage,
                  long valueBytes, String exampleKey, long storeFailed) {

        double bytesPerKey() {
            return keysCreated <= 0 ? Double.NaN : (double) usedMemoryDelta / keysCreated;
        }

        boolean everyKeyExpires() {
            return keysCreated > 0 && expiresCreated == keysCreated && sampledWithTtl == sampled;
        }
    }

    private final RedisTarget target;
    private final Options options;

    MemoryProbe(RedisTarget target, Options options) {
        this.target = target;
        this.options = options;
    }

    Result measure(Subject subject) {
        int n = options.memoryKeys();
        List<String> keys = Workloads.keys("user:", n);
        try (Subject.Session session = subject.open()) {
            // Connections, scripts and JIT warmed on keys of their own, created before the first snapshot.
            List<String> warmKeys = Workloads.keys("user:", Math.min(WARMUP_KEYS, Math.max(n, options.threads())));
            Decider warmup = session.prepare(KEY_SPACE + "-warm", warmKeys, Workloads.MEMORY_LIMITS);
            LoadRun.run(warmup, options.threads(), warmKeys.size(), TIME_BOUND_SECONDS, true);

            Decider decider = session.prepare(KEY_SPACE, keys, Workloads.MEMORY_LIMITS);
            ServerCounters before = target.counters();
            LoadRun.Result run = LoadRun.run(decider, options.threads(), n, TIME_BOUND_SECONDS, true);
            ServerCounters after = target.counters();
            ServerCounters.Delta delta = after.since(before);
            int db = target.database();

            Jedis admin = target.admin();
            int sampled = 0;
            int withTtl = 0;
            long minTtl = Long.MAX_VALUE;
            long maxTtl = Long.MIN_VALUE;
            List<Long> usage = new ArrayList<>();
            int step = Math.max(1, n / SAMPLE);
            for (int i = 0; i < n && sampled < SAMPLE; i += step) {
                byte[] key = session.redisKey(KEY_SPACE, keys.get(i));
                long ttl = admin.pttl(key);
                sampled++;
                if (ttl > 0) {
                    withTtl++;
                }
                minTtl = Math.min(minTtl, ttl);
                maxTtl = Math.max(maxTtl, ttl);
                Long bytes = admin.memoryUsage(key);
                if (bytes != null) {
                    usage.add(bytes);
                }
            }
            byte[] example = session.redisKey(KEY_SPACE, keys.get(0));
            long[] sorted = usage.stream().mapToLong(Long::longValue).sorted().toArray();
            long medianUsage = sorted.length == 0 ? -1 : sorted[sorted.length / 2];
            return new Result(subject.id(), run.decisions(), delta.keys(db), delta.expires(db), delta.usedMemory(),
                    sampled, withTtl, minTtl, maxTtl, medianUsage, admin.strlen(example),
                    new String(example, StandardCharsets.UTF_8), run.storeFailed());
        }
    }
}
