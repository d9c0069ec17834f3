package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * What an earlier version left in Redis, for the migration tests: state of every kind (a bucket, a sliding log and
 * counter, a calendar quota, a block) written through the store and then moved to the earlier key layout,
 * {@code <prefix>:{<rule>:<key>}}, as that version named it.
 */
final class EarlierLayoutKeys {

    private EarlierLayoutKeys() {}

    /** The rules whose state the scenario writes: each has refused {@code alice}, and {@code blocked} blocks her. */
    static List<Rule> rules() {
        return List.of(
                Rule.builder("bucket").key("user").limits("2/1h").build(),
                Rule.builder("log")
                        .key("user")
                        .limits("2/1h")
                        .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                        .build(),
                Rule.builder("counter")
                        .key("user")
                        .limits("2/1h")
                        .algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
                        .build(),
                Rule.builder("calendar").key("user").limits("2/1mo").build(),
                Rule.builder("blocked")
                        .key("user")
                        .limits("100/1h")
                        .blockFor(Duration.ofHours(1))
                        .build());
    }

    static RequestContext user(String name) {
        return RequestContext.builder().principal(name).build();
    }

    /** Spends {@code alice}'s limit on every rule through the store, and blocks her on {@code blocked}. */
    static void spendAlice(RateLimiter limiter) {
        for (Rule rule : rules()) {
            Guard guard = limiter.guard(rule);
            for (int i = 0; i < 2; i++) {
                assertThat(guard.acquire(user("alice")).permitted())
                        .as(rule.name())
                        .isTrue();
            }
        }
        Guard blocked = limiter.guard(rules().get(4));
        for (int i = 0; i < 99; i++) {
            blocked.acquire(user("alice"));
        }
        assertThat(blocked.acquire(user("alice")).binding().basis()).isEqualTo(Decision.Basis.BLOCKED);
    }

    /** Checks that {@code alice} is refused by every rule and {@code bob} admitted: her state carried over. */
    static void assertAliceStillRefused(RateLimiter limiter) {
        for (Rule rule : rules()) {
            Guard guard = limiter.guard(rule);
            assertThat(guard.acquire(user("alice")).permitted())
                    .as("alice on %s", rule.name())
                    .isFalse();
            assertThat(guard.acquire(user("bob")).permitted())
                    .as("bob on %s", rule.name())
                    .isTrue();
        }
        assertThat(limiter.guard(rules().get(4))
                        .acquire(user("alice"))
                        .binding()
                        .basis())
                .isEqualTo(Decision.Basis.BLOCKED);
    }

    /**
     * @return the name a key of the current layout, {@code <prefix>:<rule>:{<key>}<suffix>}, had in the earlier one,
     *         {@code <prefix>:{<rule>:<key>}<suffix>}
     */
    static String earlierName(String prefix, String name) {
        int tag = name.indexOf(":{", prefix.length() + 1);
        int close = name.indexOf('}', tag);
        String rule = name.substring(prefix.length() + 1, tag);
        return prefix + ":{" + rule + ":" + name.substring(tag + 2, close) + "}" + name.substring(close + 1);
    }

    /**
     * Renames each key to its earlier name, with its value and expiry ({@code DUMP}/{@code RESTORE}, which crosses a
     * Cluster's slots).
     */
    static void moveToEarlierLayout(UnifiedJedis client, String prefix, List<String> names) {
        for (String name : names) {
            byte[] from = name.getBytes(StandardCharsets.UTF_8);
            byte[] state = client.dump(from);
            long ttl = client.pttl(from);
            client.restore(earlierName(prefix, name).getBytes(StandardCharsets.UTF_8), Math.max(ttl, 0), state);
            client.del(from);
        }
    }

    /** @return the keys matching the pattern on the given nodes (every primary of a Cluster, or the one server) */
    static List<String> keys(List<HostAndPort> nodes, String pattern) {
        List<String> keys = new ArrayList<>();
        for (HostAndPort node : nodes) {
            try (Jedis jedis = new Jedis(node)) {
                String cursor = ScanParams.SCAN_POINTER_START;
                do {
                    ScanResult<String> page =
                            jedis.scan(cursor, new ScanParams().match(pattern).count(1000));
                    keys.addAll(page.getResult());
                    cursor = page.getCursor();
                } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
            }
        }
        return keys;
    }

    /**
     * The whole scenario: state written through a first store, moved to the earlier layout, foreign keys beside it;
     * then a second store on the same prefix moves it back in the background, and enforces it.
     *
     * @param stores a store on the prefix, each call a new one
     * @param client a client on the same Redis, for what an earlier version would have written
     * @param nodes the servers (a Cluster's primaries) to list keys on
     */
    static void scenario(
            Function<String, JedisBucketStore> stores, UnifiedJedis client, List<HostAndPort> nodes, String prefix) {
        try (JedisBucketStore first = stores.apply(prefix);
                RateLimiter limiter = RateLimiter.builder().store(first).build()) {
            spendAlice(limiter);
        }
        List<String> current = keys(nodes, KeyMigration.glob(prefix) + ":*:{*");
        assertThat(current).as("alice's keys, one per rule").hasSize(6);
        client.del(KeyMigration.doneKey(prefix));
        moveToEarlierLayout(client, prefix, current);
        // Beside them, keys of the prefix that are not an earlier layout's state: left alone.
        List<String> foreign = List.of(prefix + ":{limits}:rules", prefix + ":{nocolon}", prefix + ":{a:b}:other");
        for (String name : foreign) {
            client.set(name, "keep");
        }
        assertThat(keys(nodes, KeyMigration.glob(prefix) + ":*:{*")).isEmpty();

        try (JedisBucketStore second = stores.apply(prefix);
                RateLimiter limiter = RateLimiter.builder().store(second).build()) {
            org.awaitility.Awaitility.await("the migration")
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> second.keyMigration().finished());
            assertThat(second.keyMigration().moved.get()).isEqualTo(6);
            assertThat(keys(nodes, KeyMigration.glob(prefix) + ":*:{*")).containsExactlyInAnyOrderElementsOf(current);
            for (String name : current) {
                assertThat(client.pttl(name)).as("expiry of %s", name).isPositive();
                assertThat(client.exists(earlierName(prefix, name))).isFalse();
            }
            for (String name : foreign) {
                assertThat(client.get(name)).as(name).isEqualTo("keep");
            }
            assertThat(client.get(KeyMigration.doneKey(prefix))).isEqualTo(new byte[] {'2'});
            assertThat(client.pttl(KeyMigration.doneKey(prefix))).isPositive();
            assertAliceStillRefused(limiter);
        }
    }
}
