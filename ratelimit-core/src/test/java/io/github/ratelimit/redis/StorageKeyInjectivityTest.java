package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.RandomKeyCases;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A property of bucket identity, over random rule names, key expressions and values: the map from (rule, which
 * alternative resolved, each part's value) to the key a store uses is injective, for the local store (the
 * {@link BucketStore.Key} itself) and for Redis (the key name). Equal identities must meet in one bucket, too.
 */
class StorageKeyInjectivityTest {

    private static final long SEED = Long.getLong("ratelimit.test.seed", System.nanoTime());
    private static final int CASES = 4_000;

    @Test
    void differentIdentitiesNeverShareAStoredKey() {
        RandomKeyCases cases = new RandomKeyCases(SEED);
        Map<BucketStore.Key, List<Object>> local = new HashMap<>();
        Map<String, List<Object>> redis = new HashMap<>();
        Map<List<Object>, String> byIdentity = new HashMap<>();
        Map<String, String> expressionOf = new HashMap<>(); // a rule has one key expression, as in a limiter
        ManualClock clock = new ManualClock();
        for (int i = 0; i < CASES; i++) {
            RandomKeyCases.Case drawn = cases.next();
            RandomKeyCases.Case c = new RandomKeyCases.Case(
                    drawn.rule(), expressionOf.computeIfAbsent(drawn.rule(), r -> drawn.expression()), drawn.request());
            List<Object> identity = c.identity();
            String key;
            try (RateLimiter limiter = RateLimiter.builder().timeMeter(clock).build()) {
                Decision d = limiter.guard(Rule.builder(c.rule())
                                .key(c.expression())
                                .limits("1/1h")
                                .build())
                        .acquire(c.request().context());
                key = d.verdicts().get(0).key();
            }
            if (identity == null) {
                assertThat(key).as("case %s (seed %d)", c, SEED).isNull();
                continue;
            }
            assertThat(key).as("case %s (seed %d)", c, SEED).isNotNull();
            BucketStore.Key bucketKey = new BucketStore.Key(c.rule(), key);
            String redisKey = new String(RedisKeys.bucketKey("ratelimit", bucketKey), StandardCharsets.ISO_8859_1);
            check(local, bucketKey, identity, c);
            check(redis, redisKey, identity, c);
            String earlier = byIdentity.putIfAbsent(identity, redisKey);
            if (earlier != null && !earlier.equals(redisKey)) {
                fail("one identity %s got two Redis keys %s and %s (seed %d)", identity, earlier, redisKey, SEED);
            }
        }
        assertThat(local).hasSizeGreaterThan(CASES / 2);
    }

    private static <K> void check(Map<K, List<Object>> seen, K stored, List<Object> identity, RandomKeyCases.Case c) {
        List<Object> other = seen.putIfAbsent(stored, identity);
        if (other != null && !other.equals(identity)) {
            fail("identities %s and %s share the stored key %s (case %s, seed %d)", other, identity, stored, c, SEED);
        }
    }

    @Test
    void theCasesFromTheReportGetDistinctRedisKeys() {
        assertThat(redisKey("api", "login:203.0.113.7")).isNotEqualTo(redisKey("api:login", "203.0.113.7"));
        assertThat(redisKey("api", "login:203.0.113.7")).isEqualTo("ratelimit:api:{login:203.0.113.7}");
        assertThat(redisKey("api:login", "203.0.113.7")).isEqualTo("ratelimit:api%3Alogin:{203.0.113.7}");
        assertThat(redisKey("a%3Ab", "c")).isNotEqualTo(redisKey("a:b", "c"));
        assertThat(redisKey("r", "a{b}")).isEqualTo("ratelimit:r:{a%7Bb%7D}");
        assertThat(redisKey("r", "a%7Bb")).isNotEqualTo(redisKey("r", "a{b"));
    }

    private static String redisKey(String rule, String key) {
        return new String(RedisKeys.bucketKey("ratelimit", new BucketStore.Key(rule, key)), StandardCharsets.UTF_8);
    }
}
