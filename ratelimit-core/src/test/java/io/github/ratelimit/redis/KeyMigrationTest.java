package io.github.ratelimit.redis;

import static io.github.ratelimit.redis.EarlierLayoutKeys.earlierName;
import static io.github.ratelimit.redis.EarlierLayoutKeys.user;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.testing.redis.RedisServer;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.RedisClient;

/**
 * Keys an earlier version wrote under the earlier layout, {@code <prefix>:{<rule>:<key>}}, move to the current one,
 * {@code <prefix>:<rule>:{<key>}}, in the background when a store starts, and are enforced as before: on a standalone
 * Redis here, on a Cluster in {@link ClusterKeysTest}.
 */
class KeyMigrationTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static String prefix() {
        return "m" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static JedisBucketStore store(String prefix) {
        return JedisBucketStore.builder()
                .url(redis.uri())
                .keyPrefix(prefix)
                .keyMigrationAgain(Duration.ofMillis(200))
                .build();
    }

    private static RedisClient client() {
        return RedisClient.builder().hostAndPort(redis.server().hostAndPort()).build();
    }

    @Test
    void movesEveryKindOfStateAndEnforcesIt() {
        try (RedisClient client = client()) {
            EarlierLayoutKeys.scenario(
                    KeyMigrationTest::store, client, List.of(redis.server().hostAndPort()), prefix());
        }
    }

    @Test
    void whereBothNamesExistTheCurrentOneWinsAndTheEarlierIsDeleted() {
        String prefix = prefix();
        Rule rule = Rule.builder("bucket").key("user").limits("2/1h").build();
        String name = prefix + ":bucket:{alice}";
        byte[] earlier = earlierName(prefix, name).getBytes(StandardCharsets.UTF_8);
        try (RedisClient client = client()) {
            try (JedisBucketStore first = store(prefix);
                    RateLimiter limiter = RateLimiter.builder().store(first).build()) {
                Guard guard = limiter.guard(rule);
                guard.acquire(user("alice"));
                guard.acquire(user("alice"));
                await().until(() -> first.keyMigration().finished()); // found nothing: the mark is written
            }
            EarlierLayoutKeys.moveToEarlierLayout(client, prefix, List.of(name)); // spent, under the earlier name
            try (JedisBucketStore second = store(prefix);
                    RateLimiter limiter = RateLimiter.builder().store(second).build()) {
                await().until(() -> second.keyMigration().finished()); // the mark: nothing moved
                assertThat(second.keyMigration().moved.get()).isZero();
                assertThat(limiter.guard(rule).acquire(user("alice")).permitted())
                        .as("counted afresh under the current name")
                        .isTrue();
            }
            assertThat(client.exists(earlier)).isTrue();
            client.del(KeyMigration.doneKey(prefix));
            try (JedisBucketStore third = store(prefix);
                    RateLimiter limiter = RateLimiter.builder().store(third).build()) {
                await().until(() -> third.keyMigration().finished());
                assertThat(client.exists(earlier)).as("the earlier name").isFalse();
                Guard guard = limiter.guard(rule);
                assertThat(guard.acquire(user("alice")).permitted())
                        .as("the current state: one of two left")
                        .isTrue();
                assertThat(guard.acquire(user("alice")).permitted()).isFalse();
            }
        }
    }

    @Test
    void aStartAfterTheMigrationEndedLooksNoFurther() {
        String prefix = prefix();
        try (JedisBucketStore first = store(prefix)) {
            await().until(() -> first.keyMigration().finished());
        }
        long scans = redis.server().commandCalls("scan");
        long gets = redis.server().commandCalls("get");
        try (JedisBucketStore second = store(prefix)) {
            await().until(() -> second.keyMigration().finished());
            assertThat(redis.server().commandCalls("get") - gets).isEqualTo(1);
            assertThat(redis.server().commandCalls("scan") - scans).isZero();
        }
    }

    @Test
    void aStoreToldNotToMoveKeysLeavesThemAndAsksNothing() {
        String prefix = prefix();
        String earlier = prefix + ":{bucket:alice}";
        try (RedisClient client = client()) {
            client.psetex(earlier, 60_000, "state");
            long scans = redis.server().commandCalls("scan");
            try (JedisBucketStore store = JedisBucketStore.builder()
                            .url(redis.uri())
                            .keyPrefix(prefix)
                            .migrateKeys(false)
                            .build();
                    RateLimiter limiter = RateLimiter.builder().store(store).build()) {
                assertThat(limiter.guard(Rule.builder("bucket")
                                        .key("user")
                                        .limits("1/1h")
                                        .build())
                                .acquire(user("alice"))
                                .permitted())
                        .isTrue();
            }
            assertThat(client.get(earlier)).isEqualTo("state");
            assertThat(client.exists(KeyMigration.doneKey(prefix))).isFalse();
            assertThat(redis.server().commandCalls("scan")).isEqualTo(scans);
        }
    }

    @Test
    void aMigrationClosedPartWayNeverMarksTheEarlierKeysGone() {
        String prefix = prefix();
        String earlier = prefix + ":{bucket:alice}";
        try (RedisClient client = client()) {
            // Many keys of the prefix the migration must scan past (not an earlier layout's), then one it must move.
            redis.clients.jedis.AbstractPipeline pipeline = client.pipelined();
            for (int i = 0; i < 100_000; i++) {
                pipeline.set(prefix + ":{other" + i + "}", "x");
            }
            pipeline.sync();
            pipeline.close();
            client.psetex(earlier, 60_000, "state");
            long scans = redis.server().commandCalls("scan");
            KeyMigration migration = new KeyMigration(client, prefix, null, Duration.ofMinutes(1));
            await("the pass under way")
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(1))
                    .until(() -> redis.server().commandCalls("scan") > scans);
            migration.close();
            await().until(migration::finished);
            // However far the pass got: the mark is written only once nothing is left to move.
            if (client.exists(KeyMigration.doneKey(prefix))) {
                assertThat(client.exists(earlier))
                        .as("an earlier key left behind a mark")
                        .isFalse();
            }
        }
    }

    @Test
    void aRedisPausedAtStartIsAskedAgainUntilTheKeysAreMoved() {
        String prefix = prefix();
        String earlier = prefix + ":{bucket:alice}";
        try (RedisServer own = RedisServer.start();
                RedisClient client = RedisClient.builder()
                        .hostAndPort(own.hostAndPort())
                        .clientConfig(DefaultJedisClientConfig.builder()
                                .socketTimeoutMillis(200)
                                .build())
                        .build()) {
            client.psetex(earlier, 60_000, "state");
            own.pause();
            try (KeyMigration migration = new KeyMigration(client, prefix, null, Duration.ofMillis(100))) {
                await("a pass that failed").atMost(Duration.ofSeconds(10)).until(() -> migration.failures.get() > 0);
                assertThat(migration.finished()).isFalse();
                own.resume();
                await("the migration").atMost(Duration.ofSeconds(10)).until(migration::finished);
                assertThat(migration.moved.get()).isEqualTo(1);
            }
            assertThat(client.get(prefix + ":bucket:{alice}")).isEqualTo("state");
            assertThat(client.pttl(prefix + ":bucket:{alice}")).isBetween(1L, 60_000L);
            assertThat(client.exists(earlier)).isFalse();
        }
    }

    @Test
    void aUserRedisForbidsToScanLeavesTheKeysAndStopsAtOnce() {
        String prefix = prefix();
        String earlier = prefix + ":{bucket:alice}";
        String user = "m" + UUID.randomUUID().toString().substring(0, 8);
        try (RedisClient admin = client()) {
            admin.sendCommand(Protocol.Command.ACL, "SETUSER", user, "on", ">secret", "~*", "+@all", "-scan");
            admin.psetex(earlier, 60_000, "state");
            try (JedisBucketStore store = JedisBucketStore.builder()
                            .url("redis://" + user + ":secret@" + redis.server().host() + ":"
                                    + redis.server().port())
                            .keyPrefix(prefix)
                            .build();
                    RateLimiter limiter = RateLimiter.builder().store(store).build()) {
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> store.keyMigration().finished());
                assertThat(store.keyMigration().moved.get()).isZero();
                assertThat(admin.get(earlier)).isEqualTo("state");
                assertThat(admin.exists(KeyMigration.doneKey(prefix))).isFalse();
                // The store itself works as before.
                assertThat(limiter.guard(Rule.builder("api")
                                        .key("user")
                                        .limits("1/1h")
                                        .build())
                                .acquire(user("alice"))
                                .permitted())
                        .isTrue();
            } finally {
                admin.sendCommand(Protocol.Command.ACL, "DELUSER", user);
            }
        }
    }

    /** Over random rules, keys and suffixes: each earlier name maps to its current one, and no current name maps. */
    @Test
    void everyEarlierNameMapsToItsCurrentOneAndNoCurrentNameIsTakenForAnEarlierOne() {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        String ruleChars = "ab:%-_.";
        String keyChars = "ab:{}%|* ";
        List<String> suffixes = List.of("", ":log", ":counter", ":calendar", ":slots", ":block");
        for (int i = 0; i < 5_000; i++) {
            String rule = text(random, ruleChars, 1 + random.nextInt(6));
            String key = text(random, keyChars, random.nextInt(8));
            String suffix = suffixes.get(random.nextInt(suffixes.size()));
            String current =
                    new String(RedisKeys.bucketKey("p:x", new BucketStore.Key(rule, key)), StandardCharsets.UTF_8)
                            + suffix;
            assertThat(RedisKeys.fromEarlierLayout("p:x", earlierName("p:x", current)))
                    .as("rule %s, key %s (seed %d)", rule, key, seed)
                    .isEqualTo(current);
            assertThat(RedisKeys.fromEarlierLayout("p:x", current))
                    .as("rule %s, key %s (seed %d)", rule, key, seed)
                    .isNull();
        }
        assertThat(RedisKeys.fromEarlierLayout("p", "p:{limits}:rules")).isNull();
        assertThat(RedisKeys.fromEarlierLayout("p", "p:{clock}")).isNull();
        assertThat(RedisKeys.fromEarlierLayout("p", "p:{layout}")).isNull();
        assertThat(RedisKeys.fromEarlierLayout("p", "p:{a:b}:other")).isNull();
        assertThat(RedisKeys.fromEarlierLayout("p", "p:{:b}")).isNull();
        assertThat(RedisKeys.fromEarlierLayout("p", "q:{a:b}")).isNull();
        assertThat(RedisKeys.fromEarlierLayout("p", "p:{api%3Alogin:x}:block")).isEqualTo("p:api%3Alogin:{x}:block");
    }

    private static String text(Random random, String chars, int length) {
        StringBuilder sb = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            sb.append(chars.charAt(random.nextInt(chars.length())));
        }
        return sb.toString();
    }
}
