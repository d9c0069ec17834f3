package io.github.ratelimit.benchmarks.redis;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RateLimiter.Waiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.store.BucketStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.resps.Slowlog;

/**
 * The worst case of one script call, measured on the Redis server (every call's time from {@code SLOWLOG} with a
 * threshold of 0), with hostile stored state and with a thousand callers waiting on one key: the figures in
 * docs/RELIABILITY.md, "Work per call". Each scenario plants its state through a plain connection, then decides
 * through the store as an application would. Time stands still (a fixed wall clock), so planted times are exact
 * and delayed calls stay reserved. Prints a Markdown table.
 *
 * <p>Run: {@code java -cp benchmarks/redis-store/target/redis-store-benchmark.jar
 * io.github.ratelimit.benchmarks.redis.HostileStateBenchmark [--redis redis://host:port]}
 */
public final class HostileStateBenchmark {

    private static final long NOW_NANOS = Instant.parse("2026-01-01T00:00:00Z").getEpochSecond() * 1_000_000_000L;
    private static final long NOW_MICROS = NOW_NANOS / 1_000;

    private final RedisTarget target;
    private final Jedis admin;
    private int prefixes;

    private HostileStateBenchmark(RedisTarget target) {
        this.target = target;
        this.admin = target.admin();
    }

    /**
     * @param args {@code --redis <url>} to use an existing Redis (default: start one)
     */
    public static void main(String[] args) {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        String url = args.length == 2 && args[0].equals("--redis") ? args[1] : null;
        try (RedisTarget target = url == null ? RedisTarget.start() : RedisTarget.connect(url)) {
            System.out.print(new HostileStateBenchmark(target).run());
        }
        System.exit(0);
    }

    /** Time that stands still, and waits that never end: reservations stay, nothing runs. */
    private static final class Frozen implements TimeMeter, Waiter {
        @Override
        public long currentTimeNanos() {
            return NOW_NANOS;
        }

        @Override
        public boolean isWallClockBased() {
            return true;
        }

        @Override
        public void await(long nanos) {
            throw new UnsupportedOperationException("the benchmark decides asynchronously");
        }

        @Override
        public CompletableFuture<Void> after(long nanos) {
            return new CompletableFuture<>();
        }
    }

    private record Row(String scenario, int calls, long p50, long p99, long max) {}

    private String run() {
        admin.configSet("slowlog-log-slower-than", "0");
        admin.configSet("slowlog-max-len", "100000");
        List<Row> rows = new ArrayList<>();
        for (Algorithm algorithm : Algorithm.values()) {
            rows.add(scenario(
                    "typical: " + algorithm + ", 5/1s and 100/1m, one key, 2000 calls",
                    Rule.builder("api")
                            .limits("5/1s", "100/1m")
                            .algorithm(algorithm)
                            .build(),
                    2000,
                    key -> {}));
        }
        rows.add(thousandWaiters(
                "counter: 1000 waiters on one key, 1/10ms SOFT, max-delay 640ms",
                Rule.builder("w")
                        .limits("1/10ms")
                        .algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofMillis(640))
                        .maxWaiting(1000)
                        .build()));
        rows.add(thousandWaiters(
                "counter: 1000 waiters, SOFT max-delay 640ms, beside a SOFT token bucket delaying up" + " to 30 s",
                Rule.builder("queue")
                        .limits("100/1s")
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofSeconds(30))
                        .maxWaiting(1000)
                        .build(),
                Rule.builder("w")
                        .limits("1/10ms")
                        .algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofMillis(640))
                        .maxWaiting(1000)
                        .build()));
        Rule counterMinute = Rule.builder("api")
                .limits("2/1m")
                .algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
                .build();
        rows.add(repeated(
                "counter: the far-future entry 60000000:99999999999999 (replanted before each call)",
                counterMinute,
                200,
                key -> admin.hset(key, "60000000:99999999999999", "1")));
        rows.add(repeated(
                "counter: 'abc' as the current interval's count (replanted before each call)",
                counterMinute,
                200,
                key -> admin.hset(key, "60000000:" + NOW_MICROS / 60_000_000L, "abc")));
        int tolerated = 2 * (Rule.MAX_COUNTER_DELAY_INTERVALS + 3 * Rule.MAX_LIMITS);
        rows.add(scenario(
                "counter: " + tolerated + " entries of other windows (the most kept), 200 calls",
                counterMinute,
                200,
                key -> admin.hset(key, otherWindow(tolerated))));
        rows.add(repeated(
                "counter: 10000 entries (replaced whole; replanted before each call)",
                counterMinute,
                20,
                key -> admin.hset(key, otherWindow(10_000))));
        rows.add(repeated(
                "counter: a list where the hash belongs (replanted before each call)",
                counterMinute,
                200,
                key -> admin.rpush(key, "a", "b", "c")));
        Rule log = Rule.builder("api")
                .limits("10000/1h")
                .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                .build();
        rows.add(scenario(
                "log: 10000 calls in the window (the most a rule keeps), 200 more calls",
                log,
                200,
                key -> admin.zadd(key, members(10_000, NOW_MICROS - 1_000_000))));
        rows.add(repeated(
                "log: 20000 calls in the last second (the most kept; the oldest 100 go per call)",
                log,
                20,
                key -> admin.zadd(key, members(20_000, NOW_MICROS - 1_000))));
        rows.add(repeated(
                "log: members at 1e18 and +inf (replanted before each call)",
                Rule.builder("api")
                        .limits("2/1h")
                        .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                        .build(),
                200,
                key -> admin.zadd(key, Map.of("a", 1e18, "b", Double.POSITIVE_INFINITY))));
        rows.add(repeated(
                "log: 10000 members dated far ahead (100 removed per call; replanted before each call)",
                log,
                20,
                key -> admin.zadd(key, members(10_000, 1e18))));
        rows.add(repeated(
                "log: 10000 calls an hour old, no longer counted (replanted before each call)",
                log,
                20,
                key -> admin.zadd(key, members(10_000, NOW_MICROS - 3_700_000_000L))));
        Rule bucket = Rule.builder("api").limits("2/1h").build();
        rows.add(repeated(
                "token bucket: a hash where the state belongs (replanted before each call)",
                bucket,
                200,
                key -> admin.hset(key, "a", "b")));
        rows.add(repeated(
                "token bucket: a 1 MB string (replanted before each call)",
                bucket,
                20,
                key -> admin.set(key, "x".repeat(1 << 20))));
        return report(rows);
    }

    private static Map<String, String> otherWindow(int entries) {
        Map<String, String> fields = new HashMap<>();
        for (int i = 0; i < entries; i++) {
            fields.put("1000:" + (NOW_MICROS / 1_000 + i), "1");
        }
        return fields;
    }

    private static Map<String, Double> members(int count, double score) {
        Map<String, Double> members = new HashMap<>();
        for (int i = 0; i < count; i++) {
            members.put("m" + i, score);
        }
        return members;
    }

    /** A limiter on a fresh prefix, with frozen time. */
    private <T> T withLimiter(BiFunction<JedisBucketStore, RateLimiter, T> body) {
        Frozen frozen = new Frozen();
        try (JedisBucketStore store = JedisBucketStore.builder()
                        .url(target.url())
                        .keyPrefix("hostile" + prefixes++)
                        .timeMeter(frozen)
                        .commandTimeout(Duration.ofSeconds(5))
                        .build();
                RateLimiter limiter = RateLimiter.builder()
                        .store(store)
                        .timeMeter(frozen)
                        .waiter(frozen)
                        .maxWaiting(1000)
                        .build()) {
            return body.apply(store, limiter);
        }
    }

    private String key(JedisBucketStore store, Rule rule) {
        return new String(
                store.redisKey(new BucketStore.Key(rule.name(), "*"), rule.algorithm()), StandardCharsets.UTF_8);
    }

    /** Plants once, then decides {@code calls} times. */
    private Row scenario(String name, Rule rule, int calls, Consumer<String> plant) {
        return withLimiter((store, limiter) -> {
            Guard guard = limiter.guard(rule);
            plant.accept(key(store, rule));
            admin.slowlogReset();
            for (int i = 0; i < calls; i++) {
                guard.acquireAsync(RequestContext.empty());
            }
            return row(name);
        });
    }

    /** Plants before each of {@code calls} decisions, so each call meets the hostile state. */
    private Row repeated(String name, Rule rule, int calls, Consumer<String> plant) {
        return withLimiter((store, limiter) -> {
            Guard guard = limiter.guard(rule);
            String key = key(store, rule);
            List<Long> times = new ArrayList<>();
            for (int i = 0; i < calls; i++) {
                admin.del(key);
                plant.accept(key);
                admin.slowlogReset();
                guard.acquireAsync(RequestContext.empty());
                times.addAll(scriptTimes());
            }
            return row(name, times);
        });
    }

    /**
     * A thousand calls at one key while time stands still: each delayed call keeps its reservation, so the key holds
     * what a thousand concurrent waiters would leave. Sent from one thread, so that the figures are the scripts' work,
     * not this JVM's threads competing with Redis for the cores.
     */
    private Row thousandWaiters(String name, Rule... rules) {
        return withLimiter((store, limiter) -> {
            Guard guard = limiter.guard(rules);
            admin.slowlogReset();
            for (int i = 0; i < 1000; i++) {
                guard.acquireAsync(RequestContext.empty());
            }
            return row(name);
        });
    }

    private Row row(String name) {
        return row(name, scriptTimes());
    }

    private static Row row(String name, List<Long> times) {
        times.sort(null);
        if (times.isEmpty()) {
            return new Row(name, 0, 0, 0, 0);
        }
        return new Row(
                name,
                times.size(),
                times.get(times.size() / 2),
                times.get(Math.min(times.size() - 1, (int) Math.ceil(times.size() * 0.99) - 1)),
                times.get(times.size() - 1));
    }

    /** @return the server time of every script call since the last reset, in microseconds */
    private List<Long> scriptTimes() {
        List<Long> times = new ArrayList<>();
        for (Slowlog entry : admin.slowlogGet(100_000)) {
            String command =
                    entry.getArgs().isEmpty() ? "" : entry.getArgs().get(0).toUpperCase(Locale.ROOT);
            if (command.equals("EVALSHA") || command.equals("EVAL")) {
                times.add(entry.getExecutionTime());
            }
        }
        return times;
    }

    private String report(List<Row> rows) {
        StringBuilder sb = new StringBuilder();
        sb.append("Redis ").append(target.version()).append(", one script call's time on the server (SLOWLOG), µs\n\n");
        sb.append("| scenario | calls | p50 | p99 | max |\n|---|---|---|---|---|\n");
        for (Row r : rows) {
            sb.append(String.format(
                    Locale.ROOT, "| %s | %d | %d | %d | %d |%n", r.scenario(), r.calls(), r.p50(), r.p99(), r.max()));
        }
        return sb.toString();
    }
}
