package io.github.ratelimit.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import redis.clients.jedis.Jedis;

/**
 * Attacks the state the limiter keeps in Redis, as a typo in {@code redis-cli} or a migration bug would: the
 * client's key replaced by another type, counts that are not numbers, calls dated far ahead (the counter entry
 * {@code 60000000:99999999999999} made one script loop about 1e14 times: Redis answered BUSY to everyone and every
 * rule failed open). Over real HTTP against a real Tomcat and Redis, every
 * algorithm must answer exactly as on an empty key (3 of 5 requests pass a 3/h rule; before, a wrong type admitted
 * all 5 by failing open), and leave the key of its own type with an expiry.
 */
class StoredStateAttackTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private Target target;

    @AfterEach
    void stop() throws Exception {
        if (target != null) {
            target.close();
        }
    }

    private record Garbage(String name, BiConsumer<Jedis, byte[]> plant) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static final long HOUR_MICROS = 3_600_000_000L;

    static Stream<Arguments> attacks() {
        List<Garbage> any = List.of(
                new Garbage("a string", (j, k) -> j.set(k, "garbage".getBytes(StandardCharsets.UTF_8))),
                new Garbage("a list", (j, k) -> j.rpush(k, "a".getBytes(StandardCharsets.UTF_8))),
                new Garbage("a hash", (j, k) -> j.hset(k, bytes("a"), bytes("b"))),
                new Garbage("a sorted set", (j, k) -> j.zadd(k, 1, bytes("a"))),
                new Garbage("a set", (j, k) -> j.sadd(k, bytes("a"))),
                new Garbage("a 1 MB string", (j, k) -> j.set(k, bytes("x".repeat(1 << 20)))));
        List<Arguments> cases = new ArrayList<>();
        for (Algorithm algorithm : Algorithm.values()) {
            for (Garbage g : any) {
                // An old call in a sorted set is what a log holds, not garbage.
                if (!(algorithm == Algorithm.SLIDING_WINDOW_LOG && g.name().equals("a sorted set"))) {
                    cases.add(Arguments.of(algorithm, g));
                }
            }
        }
        long interval = System.currentTimeMillis() * 1_000 / HOUR_MICROS;
        cases.add(Arguments.of(
                Algorithm.SLIDING_WINDOW_COUNTER,
                new Garbage(
                        "the far-future entry", (j, k) -> j.hset(k, bytes("3600000000:99999999999999"), bytes("1")))));
        for (String count : List.of("abc", "-5", "1e3", "99999999999999999999")) {
            cases.add(Arguments.of(
                    Algorithm.SLIDING_WINDOW_COUNTER,
                    new Garbage(
                            "a count of '" + count + "'",
                            (j, k) -> j.hset(k, bytes("3600000000:" + interval), bytes(count)))));
        }
        cases.add(Arguments.of(
                Algorithm.SLIDING_WINDOW_LOG, new Garbage("calls at 1e18 and +inf, no expiry", (j, k) -> {
                    j.zadd(k, 1e18, bytes("a"));
                    j.zadd(k, Double.POSITIVE_INFINITY, bytes("b"));
                })));
        return cases.stream();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @ParameterizedTest(name = "{0} over {1}")
    @MethodSource("attacks")
    void garbageInRedisIsReplacedNotObeyed(Algorithm algorithm, Garbage garbage) throws Exception {
        target = Target.builder(StoreKind.REDIS, redis)
                .rule(UrlRule.of(
                        Rule.builder("api")
                                .key("ip")
                                .limits("3/1h")
                                .algorithm(algorithm)
                                .build(),
                        List.of("/api/**"),
                        Set.of()))
                .start();
        // One request makes the client's key; then it is overwritten with garbage, as by hand.
        assertThat(target.get("/api/x").status()).isEqualTo(200);
        List<byte[]> keys = target.redisKeys();
        assertThat(keys).hasSize(1);
        byte[] key = keys.get(0);
        try (Jedis jedis = new Jedis(redis.server().host(), redis.server().port())) {
            jedis.del(key);
            garbage.plant().accept(jedis, key);
        }
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            statuses.add(target.get("/api/x").status());
        }
        // The garbage gives way to a new, full bucket: 3 calls, or the one a leaky bucket holds.
        assertThat(statuses)
                .isEqualTo(
                        algorithm == Algorithm.LEAKY_BUCKET
                                ? List.of(200, 429, 429, 429, 429)
                                : List.of(200, 200, 200, 429, 429));
        assertThat(target.redisStore().stats().repairs()).as("repairs").isPositive();
        assertThat(target.redisStore().stats().failures()).as("Redis failures").isZero();
        try (Jedis jedis = new Jedis(redis.server().host(), redis.server().port())) {
            assertThat(jedis.type(key))
                    .isEqualTo(
                            switch (algorithm) {
                                case SLIDING_WINDOW_LOG -> "zset";
                                case SLIDING_WINDOW_COUNTER -> "hash";
                                default -> "string";
                            });
            assertThat(jedis.pttl(key)).as("the key's expiry").isPositive();
        }
    }
}
