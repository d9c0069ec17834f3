package io.github.ratelimit.benchmarks.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import redis.clients.jedis.Jedis;

/**
 * Redis memory per bucket: {@code used_memory} before and after making {@code calls} calls to each of N fresh keys
 * (by {@code --threads} callers, in passes that call every key once) divided by the keys created, and whether
 * every key expires: the keyspace's {@code expires} must grow by as much as its {@code keys}, and {@code PTTL} must
 * be positive on a sample. Also reports {@code MEMORY USAGE} of sampled keys and the stored value's type, size and
 * encoding (a token bucket is a string, a sliding log a sorted set with one entry per admitted call in its longest
 * window, a sliding counter a hash with a few fields per window).
 *
 * <p>A pass starts at least {@link #MIN_PASS_NANOS} after the one before, so calls to one key are about that far
 * apart or more and the probe's {@code 5/1s} never rejects them; rejected calls are counted and reported anyway,
 * since a rejected call adds no entry to a log.
 *
 * <p>The figure depends on more than the value: the key's length, jemalloc's size classes, and the growth of
 * Redis's key tables (8 bytes per slot for keys and again for expiries, doubling at powers of two). So the
 * benchmark runs each subject's probe on a fresh server of its own when it owns Redis, and every subject uses the
 * same key layout.
 */
final class MemoryProbe {

    /** The rule name in the keys: with the store's default prefix, keys read {@code ratelimit:api:{user:123}}. */
    private static final String KEY_SPACE = "api";

    private static final int SAMPLE = 200;
    private static final int WARMUP_KEYS = 1_000;
    private static final double TIME_BOUND_SECONDS = 600;
    /** The shortest time from the start of one pass over the keys to the start of the next. */
    static final long MIN_PASS_NANOS = 500_000_000L;

    /**
     * @param subject whose keys
     * @param callsPerKey calls made to each key
     * @param keysWritten calls made, in all
     * @param rejected calls the rule rejected
     * @param keysCreated growth of the database's key count
     * @param expiresCreated growth of its count of keys with a time to live
     * @param usedMemoryDelta growth of {@code used_memory}, in bytes
     * @param sampled keys whose PTTL was read
     * @param sampledWithTtl those with a positive PTTL
     * @param minTtlMillis the smallest PTTL seen
     * @param maxTtlMillis the largest PTTL seen
     * @param medianMemoryUsage median {@code MEMORY USAGE} of the sampled keys, in bytes
     * @param valueType {@code TYPE} of the first sampled key still there ({@code none} if none was)
     * @param encoding its {@code OBJECT ENCODING}
     * @param medianValueSize median over the sample of the value's size: {@code STRLEN} of a string (bytes),
     *        {@code ZCARD} of a sorted set (entries), {@code HLEN} of a hash (fields)
     * @param seconds how long the calls took, all passes and the pauses between them included
     * @param exampleKey one of the keys
     * @param storeFailed calls decided without the store
     * @param expiredKeys keys Redis expired while the probe made its calls (any makes the figure suspect)
     */
    record Result(
            String subject,
            int callsPerKey,
            long keysWritten,
            long rejected,
            long keysCreated,
            long expiresCreated,
            long usedMemoryDelta,
            int sampled,
            int sampledWithTtl,
            long minTtlMillis,
            long maxTtlMillis,
            long medianMemoryUsage,
            String valueType,
            String encoding,
            long medianValueSize,
            double seconds,
            String exampleKey,
            long storeFailed,
            long expiredKeys) {

        double bytesPerKey() {
            return keysCreated <= 0 ? Double.NaN : (double) usedMemoryDelta / keysCreated;
        }

        boolean everyKeyExpires() {
            return keysCreated > 0 && expiresCreated == keysCreated && sampledWithTtl == sampled;
        }

        /** @return e.g. {@code string, 195 B}, {@code zset (listpack), 50 entries}, {@code hash (listpack), 4 fields} */
        String value() {
            String unit = switch (valueType) {
                case "string" -> " B";
                case "zset" -> " entries";
                case "hash" -> " fields";
                default -> "";
            };
            return "none".equals(valueType)
                    ? "none (no sampled key left)"
                    : valueType + " (" + encoding + "), " + medianValueSize + unit;
        }
    }

    private final RedisTarget target;
    private final Options options;

    MemoryProbe(RedisTarget target, Options options) {
        this.target = target;
        this.options = options;
    }

    Result measure(Subject subject, int callsPerKey) {
        int n = options.memoryKeys();
        List<String> keys = Workloads.keys("user:", n);
        try (Subject.Session session = subject.open()) {
            // Connections, scripts and JIT warmed on keys of their own, created before the first snapshot.
            List<String> warmKeys = Workloads.keys("user:", Math.min(WARMUP_KEYS, Math.max(n, options.threads())));
            Decider warmup = session.prepare(KEY_SPACE + "-warm", warmKeys, Workloads.MEMORY_LIMITS);
            LoadRun.run(warmup, options.threads(), warmKeys.size(), TIME_BOUND_SECONDS, true);
            // Their keys go again, so none expires (a token bucket's lives about 1.6 s here) while the probe counts.
            Jedis admin = target.admin();
            for (String k : warmKeys) {
                admin.del(session.redisKey(KEY_SPACE + "-warm", k));
            }

            Decider decider = session.prepare(KEY_SPACE, keys, Workloads.MEMORY_LIMITS);
            ServerCounters before = target.counters();
            long decisions = 0;
            long rejected = 0;
            long storeFailed = 0;
            long started = System.nanoTime();
            long previousPassStart = started;
            for (int pass = 0; pass < callsPerKey; pass++) {
                long passStart = System.nanoTime();
                if (pass > 0) {
                    passStart = pause(MIN_PASS_NANOS - (passStart - previousPassStart), passStart);
                }
                previousPassStart = passStart;
                LoadRun.Result run = LoadRun.run(decider, options.threads(), n, TIME_BOUND_SECONDS, true);
                decisions += run.decisions();
                rejected += run.rejected();
                storeFailed += run.storeFailed();
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            ServerCounters after = target.counters();
            ServerCounters.Delta delta = after.since(before);
            int db = target.database();

            int sampled = 0;
            int withTtl = 0;
            long minTtl = Long.MAX_VALUE;
            long maxTtl = Long.MIN_VALUE;
            List<Long> usage = new ArrayList<>();
            List<Long> sizes = new ArrayList<>();
            String type = "none";
            String encoding = "–";
            int step = Math.max(1, n / SAMPLE);
            List<byte[]> sample = new ArrayList<>();
            for (int i = 0; i < n && sample.size() < SAMPLE; i += step) {
                sample.add(session.redisKey(KEY_SPACE, keys.get(i)));
            }
            // TTLs first, in one quick loop: a token bucket's key lives about 1.6 s after one call here.
            for (byte[] key : sample) {
                long ttl = admin.pttl(key);
                sampled++;
                if (ttl > 0) {
                    withTtl++;
                }
                minTtl = Math.min(minTtl, ttl);
                maxTtl = Math.max(maxTtl, ttl);
            }
            for (byte[] key : sample) {
                Long bytes = admin.memoryUsage(key);
                if (bytes != null) {
                    usage.add(bytes);
                }
                String k = new String(key, StandardCharsets.UTF_8);
                String t = admin.type(k);
                long size = size(admin, k, t);
                if (size >= 0) {
                    sizes.add(size);
                    if ("none".equals(type)) { // the first sampled key that is still there
                        type = t;
                        encoding = admin.objectEncoding(k);
                    }
                }
            }
            String exampleText = new String(session.redisKey(KEY_SPACE, keys.get(0)), StandardCharsets.UTF_8);
            return new Result(
                    subject.id(),
                    callsPerKey,
                    decisions,
                    rejected,
                    delta.keys(db),
                    delta.expires(db),
                    delta.usedMemory(),
                    sampled,
                    withTtl,
                    minTtl,
                    maxTtl,
                    median(usage),
                    type,
                    encoding,
                    median(sizes),
                    seconds,
                    exampleText,
                    storeFailed,
                    delta.expiredKeys());
        }
    }

    /** Sleeps {@code nanos} if positive; returns the time after. */
    private static long pause(long nanos, long now) {
        if (nanos > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(nanos);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return System.nanoTime();
        }
        return now;
    }

    /** @return the value's size: bytes of a string, entries of a sorted set, fields of a hash; -1 if absent */
    private static long size(Jedis admin, String k, String type) {
        return switch (type) {
            case "string" -> admin.strlen(k);
            case "zset" -> admin.zcard(k);
            case "hash" -> admin.hlen(k);
            default -> -1;
        };
    }

    private static long median(List<Long> values) {
        long[] sorted = values.stream().mapToLong(Long::longValue).sorted().toArray();
        return sorted.length == 0 ? -1 : sorted[sorted.length / 2];
    }
}
