package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Limit;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.testing.CapturedLog;
import io.github.ratelimit.testing.redis.RedisServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;

/**
 * A rule's own limits and mode changed at run time through {@link LimitAdmin}: checked as at start-up, applied to
 * the limiter's decisions (keys with limits of their own keep them), kept in Redis for every instance, and garbage
 * stored in their place ignored with the configured values deciding.
 */
class RuleChangeTest {

    private static final Rule API =
            Rule.builder("api").key("header:X-Client").limits("1/1h").build();
    private static final Rule LOG = Rule.builder("log")
            .key("header:X-Client")
            .limits("5/1m")
            .algorithm(Algorithm.SLIDING_WINDOW_LOG)
            .build();
    private static final Rule SOFT = Rule.builder("soft")
            .key("header:X-Client")
            .limits("5/1m")
            .mode(Mode.SOFT)
            .maxDelay(Duration.ofSeconds(1))
            .build();

    @RegisterExtension
    static final LimitStoreRedis REDIS = new LimitStoreRedis();

    private static RequestContext client(String id) {
        return RequestContext.builder().header("X-Client", id).build();
    }

    private static RateLimiter limiter(RedisLimitProvider store) {
        return RateLimiter.builder()
                .limitProvider(store, Duration.ofMinutes(10))
                .build();
    }

    /** @return how many of n calls of the client the guard allows */
    private static int allowed(Guard guard, String client, int n) {
        int allowed = 0;
        for (int i = 0; i < n; i++) {
            if (guard.acquire(client(client)).outcome() == Outcome.ALLOWED) {
                allowed++;
            }
        }
        return allowed;
    }

    @Test
    void withoutALimitStoreAChangeAppliesToThisLimiterAndADeleteTakesItBack() {
        try (RateLimiter limiter = RateLimiter.builder().build()) {
            Guard guard = limiter.guard(API);
            LimitAdmin admin = LimitAdmin.of(limiter, null);
            assertThat(allowed(guard, "a", 2)).isEqualTo(1);

            LimitAdmin.RuleLimits changed = admin.changeRule("api", "3/1h", null, "ops");

            assertThat(changed.limits()).containsExactly(Limit.parse("3/1h"));
            assertThat(changed.configuredLimits()).containsExactly(Limit.parse("1/1h"));
            assertThat(changed.changed()).isTrue();
            assertThat(changed.everyInstance()).isFalse();
            assertThat(changed.changedBy()).isEqualTo("ops");
            assertThat(changed.changedAt()).isNotNull();
            // The bucket under the old limits takes the new ones additively: capacity 1 -> 3 gains 2, the spent stays.
            assertThat(allowed(guard, "a", 5)).isEqualTo(2);
            assertThat(allowed(guard, "b", 5)).isEqualTo(3);
            assertThat(limiter.rules()).containsExactly(API); // the rule as configured is still what it lists

            assertThat(admin.restoreRule("api", "ops")).isTrue();
            assertThat(admin.restoreRule("api", "ops")).isFalse();
            assertThat(admin.ruleLimits("api").changed()).isFalse();
            assertThat(allowed(guard, "c", 3)).isEqualTo(1);
        }
    }

    @Test
    void aChangeMadeBeforeTheRuleIsFirstUsedAppliesFromItsFirstCall() {
        try (RateLimiter limiter = RateLimiter.builder().build()) {
            LimitAdmin admin = LimitAdmin.of(limiter, null, List.of(API));
            admin.changeRule("api", "2/1h", null, "ops");
            assertThat(allowed(limiter.guard(API), "a", 4)).isEqualTo(2);
        }
    }

    @Test
    void limitsAreRefusedWithTheMessageTheyGetAtStartUp() {
        try (RateLimiter limiter = RateLimiter.builder().build()) {
            limiter.guard(API, LOG, SOFT);
            LimitAdmin admin = LimitAdmin.of(limiter, null);
            for (String limits : List.of("3/1h burst=50", "5/1s,10/1s", "10001/1h")) {
                String atStartUp = catchMessage(() -> LOG.withLimits(LimitEntries.parse(limits)));
                assertThatThrownBy(() -> admin.changeRule("log", limits, null, "ops"))
                        .as(limits)
                        .isInstanceOf(InvalidRateLimitConfigurationException.class)
                        .hasMessage(atStartUp);
            }
            assertThatThrownBy(() -> admin.changeRule("api", "1/0s", null, "ops"))
                    .isInstanceOf(InvalidRateLimitConfigurationException.class)
                    .hasMessageContaining("1/0s");
            assertThatThrownBy(() -> admin.changeRule("api", null, "SOFT", "ops"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("from HARD to SOFT")
                    .hasMessageContaining("only HARD and SHADOW change into each other");
            assertThatThrownBy(() -> admin.changeRule("soft", null, "SHADOW", "ops"))
                    .hasMessageContaining("from SOFT to SHADOW");
            assertThatThrownBy(() -> admin.changeRule("api", null, "LOUD", "ops"))
                    .hasMessageContaining("give HARD or SHADOW");
            assertThatThrownBy(() -> admin.changeRule("api", null, null, "ops")).hasMessageContaining("nothing");
            assertThatThrownBy(() -> admin.changeRule("nope", "1/1s", null, "ops"))
                    .isInstanceOf(LimitAdmin.UnknownRuleException.class);
            assertThat(admin.ruleLimits("log").changed()).isFalse();
            assertThat(allowed(limiter.guard(LOG), "a", 7)).isEqualTo(5);
        }
    }

    private static String catchMessage(Runnable r) {
        try {
            r.run();
        } catch (InvalidRateLimitConfigurationException e) {
            return e.getMessage();
        }
        throw new AssertionError("no exception");
    }

    @Test
    void hardToShadowAndBackIsSafe() {
        try (RateLimiter limiter = RateLimiter.builder().build()) {
            Guard guard = limiter.guard(API);
            LimitAdmin admin = LimitAdmin.of(limiter, null);
            admin.changeRule("api", null, "shadow", "ops");
            guard.acquire(client("a"));
            assertThat(guard.acquire(client("a")).outcome()).isEqualTo(Outcome.SHADOW_REJECTED);
            admin.restoreRule("api", "ops");
            assertThat(guard.acquire(client("a")).outcome()).isEqualTo(Outcome.REJECTED);
        }
    }

    @Test
    void inRedisAChangeReachesEveryInstanceAndIsAudited() {
        String prefix = LimitStoreRedis.prefix();
        try (CapturedLog audit = CapturedLog.of("io.github.ratelimit.limits");
                RedisLimitProvider storeA = REDIS.store(prefix);
                RedisLimitProvider storeB = REDIS.store(prefix);
                RateLimiter a = limiter(storeA);
                RateLimiter b = limiter(storeB)) {
            Guard guardA = a.guard(API);
            Guard guardB = b.guard(API);
            LimitAdmin admin = LimitAdmin.of(a, storeA);
            storeA.setLimits(API, "own", List.of(Limit.parse("5/1h")), "ops"); // a key's own limits win over the rule's

            LimitAdmin.RuleLimits changed = admin.changeRule("api", "3/1h", null, "alice");

            assertThat(changed.everyInstance()).isTrue();
            assertThat(allowed(guardA, "x", 5)).isEqualTo(3); // at once where it was made
            storeB.refresh(); // what B's refresh thread does every interval
            assertThat(allowed(guardB, "y", 5)).isEqualTo(3);
            assertThat(LimitAdmin.of(b, storeB).ruleLimits("api").changedBy()).isEqualTo("alice");
            storeB.setLimits(API, "own", List.of(Limit.parse("5/1h")), "ops");
            assertThat(allowed(guardB, "own", 7)).isEqualTo(5);

            assertThat(admin.restoreRule("api", "bob")).isTrue();
            storeB.refresh();
            assertThat(allowed(guardB, "z", 3)).isEqualTo(1);
            assertThat(audit.messages())
                    .contains(
                            "Rule 'api' changed to limits 3/1h mode HARD by 'alice'",
                            "Rule 'api' back to its configured limits and mode by 'bob'");
        }
    }

    @Test
    void garbageStoredInPlaceOfAChangeIsIgnoredAndTheConfiguredLimitsDecide() {
        String[] garbage = {
            "garbage",
            "rule\t\t\tx\t1",
            "rule\t99999999999999999999999/1s\t\tx\t1",
            "rule\t5/1m burst=9\t\tx\t1",
            "rule\t1/1s,1/1s\t\tx\t1",
            "rule\t\tBOGUS\tx\t1",
            "rule\t\tSOFT\tx\t1",
            "rule\t" + "1/1s,".repeat(2000) + "\t\tx\t1",
            "rule\t2/1m\t\tx\t1\textra"
        };
        for (String value : garbage) {
            String prefix = LimitStoreRedis.prefix();
            REDIS.client()
                    .hset(
                            (prefix + ":{limits}:rules").getBytes(StandardCharsets.UTF_8),
                            "log".getBytes(StandardCharsets.UTF_8),
                            value.getBytes(StandardCharsets.UTF_8));
            try (RedisLimitProvider store = REDIS.store(prefix);
                    RateLimiter limiter = limiter(store)) {
                assertThat(allowed(limiter.guard(LOG), "a", 7)).as(value).isEqualTo(5);
                LimitAdmin.RuleLimits shown = LimitAdmin.of(limiter, store).ruleLimits("log");
                assertThat(shown.problem()).as(value).isNotNull();
                assertThat(shown.limits()).as(value).containsExactly(Limit.parse("5/1m"));
            }
        }
    }

    @Test
    void whileRedisIsDownAChangeKeepsApplyingAndNewChangesFailAsTheStoreFailing() {
        try (RedisServer own = RedisServer.start();
                RedisClient c = RedisClient.builder()
                        .hostAndPort(new HostAndPort(own.host(), own.port()))
                        .clientConfig(DefaultJedisClientConfig.builder()
                                .socketTimeoutMillis(50)
                                .build())
                        .build();
                RedisLimitProvider store = RedisLimitProvider.builder()
                        .client(c)
                        .refreshInterval(Duration.ofHours(1))
                        .build();
                RateLimiter limiter = limiter(store)) {
            store.refresh();
            Guard guard = limiter.guard(API);
            LimitAdmin admin = LimitAdmin.of(limiter, store);
            admin.changeRule("api", "3/1h", null, "ops");
            own.pause();
            try {
                store.refresh(); // fails: the store has lost track of Redis
                assertThat(allowed(guard, "a", 5)).as("the change last read").isEqualTo(3);
                assertThatThrownBy(() -> admin.changeRule("api", "9/1h", null, "ops"))
                        .isInstanceOf(RateLimitStoreException.class);
                assertThatThrownBy(() -> admin.restoreRule("api", "ops")).isInstanceOf(RateLimitStoreException.class);
                assertThat(admin.ruleLimits("api").limits()).containsExactly(Limit.parse("3/1h"));
            } finally {
                own.resume();
            }
            // Redis answers again: every answer is read again, the rule's change included. A write that timed out
            // may have reached Redis all the same (it ran once Redis resumed), so what decides is what Redis holds.
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> {
                store.refresh(); // the first after a pause may fail on a broken connection: Redis is then read again
                String stored = c.hget("ratelimit:{limits}:rules", "api");
                return stored != null
                        && stored.startsWith(
                                "rule\t" + admin.ruleLimits("api").limits().get(0) + "\t");
            });
            LimitAdmin.RuleLimits now = admin.ruleLimits("api");
            assertThat(now.limits()).isIn(List.of(Limit.parse("3/1h")), List.of(Limit.parse("9/1h")));
            assertThat(allowed(guard, "b", 12))
                    .isEqualTo((int) now.limits().get(0).capacity());
        }
    }

    @Test
    void aHashOfAnotherTypeIsIgnoredThenReplacedByTheNextChange() {
        String prefix = LimitStoreRedis.prefix();
        REDIS.client().set(prefix + ":{limits}:rules", "not a hash");
        try (RedisLimitProvider store = REDIS.store(prefix);
                RateLimiter limiter = limiter(store)) {
            Guard guard = limiter.guard(API);
            assertThat(allowed(guard, "a", 2)).isEqualTo(1);
            LimitAdmin.of(limiter, store).changeRule("api", "4/1h", null, "ops");
            assertThat(allowed(guard, "b", 6)).isEqualTo(4);
            assertThat(store.repairs()).isEqualTo(1);
        }
    }
}
