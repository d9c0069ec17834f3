package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Limit;
import io.github.ratelimit.MissingKeyPolicy;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.KeyExpressions;
import io.github.ratelimit.internal.admin.KeyOperations;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.RedisClient;

/**
 * A client whose key is over 128 characters, which the limiter counts by as {@code ~sha256:<hex>}, addressed through
 * the admin operations on a real Redis (buckets and per-key limits): the address a listing gives reaches the state the
 * client's calls use in every algorithm, a concurrency rule's leases included; and an address in the limiter's own
 * forms that no key of the rule can be (a hash of the wrong form, the shared bucket of a rule that keeps none) is
 * refused rather than answered as done.
 */
class HashedKeyAdminTest {

    @RegisterExtension
    static final RedisServerExtension REDIS = new RedisServerExtension();

    /** A 200-character API key, as a client sends it. */
    private static final String API_KEY = "ak-" + "0123456789abcdef".repeat(12) + "-end";

    private static RequestContext client(String apiKey) {
        return RequestContext.builder().header("X-Api-Key", apiKey).build();
    }

    /** One application instance: a Redis bucket store and limit store on a prefix of its own, and its limiter. */
    private record App(
            String prefix, JedisBucketStore buckets, RedisLimitProvider limits, RateLimiter limiter, LimitAdmin admin)
            implements AutoCloseable {

        static App start() {
            String prefix = "h" + UUID.randomUUID().toString().substring(0, 8);
            JedisBucketStore buckets = JedisBucketStore.builder()
                    .url(REDIS.uri())
                    .keyPrefix(prefix)
                    .commandTimeout(Duration.ofSeconds(5))
                    .build();
            RedisLimitProvider limits = RedisLimitProvider.builder()
                    .client(buckets.client())
                    .keyPrefix(prefix)
                    .plan("tiny", List.of(Limit.parse("1/1h")))
                    .build();
            RateLimiter limiter = RateLimiter.builder()
                    .store(buckets)
                    .limitProvider(limits, Duration.ofMinutes(10))
                    .build();
            return new App(prefix, buckets, limits, limiter, LimitAdmin.of(limiter, limits));
        }

        /** @return the Redis keys of the bucket store that hold the key's state, whatever the algorithm */
        List<String> stateKeys(String key) {
            try (RedisClient jedis = RedisClient.builder()
                    .hostAndPort(REDIS.server().hostAndPort())
                    .build()) {
                return new ArrayList<>(jedis.keys(prefix + ":*:{*" + key + "}*"));
            }
        }

        @Override
        public void close() {
            limiter.close();
            limits.close();
        }
    }

    private static int allowed(Guard guard, String apiKey, int calls) {
        int allowed = 0;
        for (int i = 0; i < calls; i++) {
            allowed += guard.acquire(client(apiKey)).permitted() ? 1 : 0;
        }
        return allowed;
    }

    /**
     * What the admin operations do to a client, through the address given: calls allowed until the first
     * rejection; after a reset, whether the next call passes; with 2/1h set after a reset, calls allowed of 6; on plan
     * {@code tiny} (1/1h) after a reset, calls allowed of 6.
     */
    private static List<Object> story(App app, Rule rule, Guard guard, String apiKey, String address) {
        List<Object> story = new ArrayList<>();
        int before = 0;
        while (before < 10 && guard.acquire(client(apiKey)).permitted()) {
            before++;
        }
        story.add(before);
        app.admin().reset(rule.name(), address, "ops");
        story.add(guard.acquire(client(apiKey)).outcome());
        app.admin().reset(rule.name(), address, "ops");
        app.admin().setLimits(rule.name(), address, "2/1h", "ops");
        story.add(allowed(guard, apiKey, 6));
        app.admin().reset(rule.name(), address, "ops");
        app.admin().assignPlan(rule.name(), address, "tiny", "ops");
        story.add(allowed(guard, apiKey, 6));
        return story;
    }

    @Test
    void theListedHashReachesTheClientsStateInEveryAlgorithmAsAShortKeysAddressDoes() {
        try (App app = App.start()) {
            for (Algorithm algorithm : Algorithm.values()) {
                Rule rule = Rule.builder("api-" + algorithm)
                        .key("header:X-Api-Key")
                        .limits("3/1h")
                        .algorithm(algorithm)
                        .build();
                Guard guard = app.limiter().guard(rule);
                String apiKey = API_KEY + algorithm;
                String key = guard.acquire(client(apiKey)).verdicts().get(0).key();
                assertThat(key)
                        .as("the key the limiter counts by")
                        .startsWith(KeyExpressions.HASH_PREFIX)
                        .isEqualTo(KeyExpressions.bounded(apiKey));
                String address = LimitAdmin.address(key);
                assertThat(address).as("the address a listing gives").isEqualTo(key);
                String hex = key.substring(KeyExpressions.HASH_PREFIX.length());
                guard.acquire(client(apiKey));
                guard.acquire(client(apiKey));
                assertThat(app.stateKeys(hex))
                        .as("%s: the client's state is in Redis", algorithm)
                        .isNotEmpty();
                app.admin().reset(rule.name(), address, "ops");
                assertThat(app.stateKeys(hex))
                        .as("%s: every Redis key of the client's state is gone", algorithm)
                        .isEmpty();

                List<Object> shortKey = story(app, rule, guard, "short-" + algorithm, "short-" + algorithm);
                List<Object> hashed = story(app, rule, guard, apiKey, address);

                assertThat(hashed)
                        .as("%s: through the hash (short key: %s)", algorithm, shortKey)
                        .isEqualTo(shortKey);
                assertThat(hashed.get(1))
                        .as("%s: unblocked by the reset", algorithm)
                        .isEqualTo(Outcome.ALLOWED);
                if (algorithm != Algorithm.LEAKY_BUCKET) {
                    // A leaky bucket lets one call through at a time, evenly spaced, whatever its limits.
                    assertThat(hashed)
                            .as("%s: 3 of 3/1h, then 2 of 6 on 2/1h, 1 of 6 on 1/1h", algorithm)
                            .containsExactly(3, Outcome.ALLOWED, 2, 1);
                }
                assertThat(app.admin().get(rule.name(), address).orElseThrow().key())
                        .isEqualTo(key);
            }
        }
    }

    @Test
    void aResetThroughTheListedHashGivesBackAConcurrencyRulesLeases() {
        try (App app = App.start()) {
            Rule slow =
                    Rule.builder("slow").key("header:X-Api-Key").concurrency(2).build();
            Guard guard = app.limiter().guard(slow);
            Decision one = guard.acquire(client(API_KEY));
            Decision two = guard.acquire(client(API_KEY));
            assertThat(one.permitted()).isTrue();
            assertThat(two.permitted()).isTrue();
            Decision third = guard.acquire(client(API_KEY));
            assertThat(third.outcome()).as("two calls in flight already").isEqualTo(Outcome.REJECTED);

            app.admin().reset("slow", LimitAdmin.address(third.verdicts().get(0).key()), "ops");

            assertThat(guard.acquire(client(API_KEY)).outcome())
                    .as("the leases are gone")
                    .isEqualTo(Outcome.ALLOWED);
        }
    }

    @Test
    void aTildeAddressNoKeyCanBeIsRefusedByEveryChangeNotAnsweredAsDone() {
        try (App app = App.start()) {
            Rule rule =
                    Rule.builder("api").key("header:X-Api-Key").limits("2/1h").build();
            Guard guard = app.limiter().guard(rule);
            String key = guard.acquire(client(API_KEY)).verdicts().get(0).key();
            String hex = key.substring(KeyExpressions.HASH_PREFIX.length());
            KeyOperations operations = new KeyOperations(app.admin(), (r, k) -> {});
            String[] notKeys = {
                KeyExpressions.HASH_PREFIX + hex.toUpperCase(Locale.ROOT),
                KeyExpressions.HASH_PREFIX + hex.substring(1),
                KeyExpressions.HASH_PREFIX + hex + "0",
                KeyExpressions.HASH_PREFIX + "not-a-hash",
                KeyExpressions.HASH_PREFIX,
                KeyExpressions.SHARED_MISSING_KEY
            };
            for (String address : notKeys) {
                Object[][] changes = {{"5/1s", null, null}, {null, "tiny", null}, {null, null, true}};
                for (Object[] change : changes) {
                    KeyOperations.Answer answer =
                            operations.change("api", address, change[0], change[1], change[2], "ops");
                    assertThat(answer.status())
                            .as("%s %s: %s", address, Arrays.toString(change), answer.body())
                            .isEqualTo(400);
                    assertThat((String) answer.body().get("message"))
                            .as(address)
                            .contains("no key of rule 'api'")
                            .contains("the address a listing gives");
                }
                assertThatThrownBy(() -> app.admin().reset("api", address, "ops"))
                        .as(address)
                        .isInstanceOf(IllegalArgumentException.class);
            }
            assertThat(app.admin().list("api", null, 100).entries())
                    .as("nothing was stored")
                    .isEmpty();

            Rule shared = Rule.builder("shared")
                    .key("header:X-Api-Key")
                    .limits("1/1h")
                    .onMissingKey(MissingKeyPolicy.SHARED)
                    .build();
            Guard sharedGuard = app.limiter().guard(shared);
            RequestContext anonymous = RequestContext.builder().build();
            assertThat(sharedGuard.acquire(anonymous).permitted()).isTrue();
            assertThat(sharedGuard.acquire(anonymous).permitted()).isFalse();
            app.admin().reset("shared", KeyExpressions.SHARED_MISSING_KEY, "ops");
            assertThat(sharedGuard.acquire(anonymous).permitted())
                    .as("the shared bucket of calls without a key " + "is one the rule counts by")
                    .isTrue();
        }
    }

    /**
     * Entries written behind the store's back under fields no client's calls read (a hash in upper case, the key in
     * full) are listed and shown with a problem saying so, not with limits that look applied; they can be deleted.
     */
    @Test
    void anEntryNoClientReadsIsListedWithAProblemNotWithLimitsThatLookApplied() {
        try (App app = App.start()) {
            Rule rule =
                    Rule.builder("api").key("header:X-Api-Key").limits("2/1h").build();
            app.limiter().guard(rule);
            String hash = KeyExpressions.bounded(API_KEY);
            byte[] ruleHash = (app.prefix() + ":{limits}:rule:api").getBytes(StandardCharsets.UTF_8);
            String upper = hash.toUpperCase(Locale.ROOT).replace("~SHA256:", KeyExpressions.HASH_PREFIX);
            try (RedisClient jedis = RedisClient.builder()
                    .hostAndPort(REDIS.server().hostAndPort())
                    .build()) {
                for (String field : new String[] {upper, API_KEY}) {
                    jedis.hset(
                            ruleHash,
                            field.getBytes(StandardCharsets.UTF_8),
                            "limits\t9/1h\tother-tool\t1".getBytes(StandardCharsets.UTF_8));
                }
            }
            app.admin().setLimits("api", hash, "4/1h", "ops");

            List<RedisLimitProvider.Entry> listed =
                    app.admin().list("api", null, 100).entries();

            assertThat(listed).hasSize(3);
            for (RedisLimitProvider.Entry e : listed) {
                if (e.key().equals(hash)) {
                    assertThat(e.problem()).isNull();
                    assertThat(e.limits()).hasToString("[4/1h]");
                    continue;
                }
                assertThat(e.problem()).as(e.key()).contains("no client gets these limits");
                assertThat(e.limits()).as(e.key()).isEmpty();
                assertThat(app.admin().get("api", e.address()).orElseThrow().problem())
                        .isEqualTo(e.problem());
                assertThat(app.admin().remove("api", e.address(), "ops")).isTrue();
            }
            assertThat(listed)
                    .filteredOn(e -> e.address().startsWith(LimitAdmin.STORED_PREFIX))
                    .extracting(RedisLimitProvider.Entry::problem)
                    .singleElement()
                    .asString()
                    .contains(hash);
            assertThat(app.admin().list("api", null, 100).entries())
                    .extracting(RedisLimitProvider.Entry::key)
                    .containsExactly(hash);
        }
    }

    @Test
    void aLongKeyInFullStillReachesTheHash() {
        try (App app = App.start()) {
            Rule rule =
                    Rule.builder("api").key("header:X-Api-Key").limits("2/1h").build();
            Guard guard = app.limiter().guard(rule);
            assertThat(allowed(guard, API_KEY, 3)).isEqualTo(2);
            app.admin().reset("api", API_KEY, "ops");
            assertThat(allowed(guard, API_KEY, 1)).isEqualTo(1);
            app.admin().setLimits("api", API_KEY, "5/1h", "ops");
            assertThat(app.admin()
                            .get("api", KeyExpressions.bounded(API_KEY))
                            .orElseThrow()
                            .limits()
                            .toString())
                    .contains("5/1h");
        }
    }
}
