package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisCluster;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * On a Redis Cluster, the key layout's hash tag is the client key: a request's rules that count by the same key live
 * on one slot and go to its node in one round trip, counted by the store and by the node itself ({@code INFO stats}'s
 * reads); rules that count by different keys take one per slot. Keys of the earlier layout move to this one across
 * slots.
 */
class ClusterKeysTest {

    private static RedisCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = RedisCluster.start(3, 0);
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    private static String prefix() {
        return "c" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static JedisBucketStore.Builder store(String prefix) {
        return JedisBucketStore.builder()
                .cluster(cluster.nodes().stream().map(Object::toString).toList())
                .keyPrefix(prefix);
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
    void rulesThatCountByTheSameKeyShareOneRoundTrip(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        try (JedisBucketStore store = store(prefix()).timeMeter(clock).build()) {
            for (String rule : List.of("site", "api", "hello")) {
                assertThat(nodeOf(store.redisKey(new BucketStore.Key(rule, "alice"), algorithm)))
                        .as(rule)
                        .isEqualTo(nodeOf(store.redisKey(new BucketStore.Key("site", "alice"), algorithm)));
            }
            OneRoundTripPerCallTest.threeRulesByOneKeyShareOneRoundTrip(
                    store, clock, algorithm, key -> new Jedis(nodeOf(key)));
        }
    }

    @Test
    void rulesThatCountByDifferentKeysTakeOneRoundTripPerSlot() {
        String prefix = prefix();
        try (JedisBucketStore store = store(prefix).build();
                RateLimiter limiter = RateLimiter.builder().store(store).build()) {
            Guard guard = limiter.guard(
                    Rule.builder("by-user").key("user").limits("100/1m").build(),
                    Rule.builder("by-user-too").key("user").limits("100/1m").build(),
                    Rule.builder("by-address").key("ip").limits("100/1m").build());
            RequestContext request = RequestContext.builder()
                    .principal("alice")
                    .remoteAddress("203.0.113.7")
                    .build();
            assertThat(JedisClusterCRC16.getSlot("{alice}")).isNotEqualTo(JedisClusterCRC16.getSlot("{203.0.113.7}"));
            JedisBucketStore.Stats before = store.stats();
            for (int i = 0; i < 5; i++) {
                assertThat(guard.acquire(request).permitted()).isTrue();
            }
            JedisBucketStore.Stats after = store.stats();
            assertThat(after.roundTrips() - before.roundTrips()).as("scripts").isEqualTo(15);
            assertThat(after.pipelines() - before.pipelines()).as("round trips").isEqualTo(10);
        }
    }

    @Test
    void movesEveryKindOfStateOfTheEarlierLayoutAcrossSlots() {
        try (RedisClusterClient client = RedisClusterClient.create(new java.util.HashSet<>(cluster.nodes()))) {
            EarlierLayoutKeys.scenario(
                    p -> store(p).keyMigrationAgain(Duration.ofMillis(200)).build(),
                    client,
                    cluster.masters(),
                    prefix());
        }
    }

    private static HostAndPort nodeOf(byte[] key) {
        int slot = JedisClusterCRC16.getSlot(key);
        try (Jedis jedis = new Jedis(cluster.masters().get(0))) {
            for (Object range : jedis.clusterSlots()) {
                List<?> r = (List<?>) range;
                if ((Long) r.get(0) <= slot && slot <= (Long) r.get(1)) {
                    List<?> master = (List<?>) r.get(2);
                    return new HostAndPort(
                            new String((byte[]) master.get(0), java.nio.charset.StandardCharsets.UTF_8),
                            ((Long) master.get(1)).intValue());
                }
            }
        }
        throw new AssertionError("no node serves slot " + slot);
    }
}
