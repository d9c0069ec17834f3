package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Limit;
import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.MapLimitProvider;
import io.github.ratelimit.testing.CapturedLog;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A plan's limits changed at run time through {@link LimitAdmin}: checked as at start-up against the rules that may
 * use it, applied wherever the plan is used (keys assigned it in configuration, keys assigned it in Redis, calls
 * naming it), kept in Redis for every instance, and garbage stored in their place ignored.
 */
class PlanChangeTest {

    private static final Rule API =
            Rule.builder("api").key("header:X-Client").limits("1/1h").build();
    private static final Rule LOG = Rule.builder("log")
            .key("header:X-Client")
            .limits("5/1m")
            .algorithm(Algorithm.SLIDING_WINDOW_LOG)
            .build();

    @RegisterExtension
    static final LimitStoreRedis REDIS = new LimitStoreRedis();

    /** Plan gold, 2/1h; key alice assigned it, as {@code ratelimit.keys} does. */
    private static MapLimitProvider keys() {
        return MapLimitProvider.builder()
                .plan("gold", "2/1h")
                .plan("free", "1/1h")
                .assign("header:X-Client:alice", "gold")
                .build();
    }

    /** A limiter whose calls name their plan in X-Plan, for the rules given, as {@code ratelimit.plan-from} does. */
    private static RateLimiter limiter(LimitProvider provider, MapLimitProvider keys, Set<String> planRules) {
        return RateLimiter.builder()
                .limitProvider(provider, Duration.ofMinutes(10))
                .planFrom("header:X-Plan", keys.plans(), planRules)
                .planHeaderTrusted(true)
                .build();
    }

    private static RequestContext client(String id, String plan) {
        RequestContext.Builder b = RequestContext.builder().header("X-Client", id);
        return (plan == null ? b : b.header("X-Plan", plan)).build();
    }

    /** @return how many of n calls of the client the guard allows */
    private static int allowed(Guard guard, String client, String plan, int n) {
        int allowed = 0;
        for (int i = 0; i < n; i++) {
            if (guard.acquire(client(client, plan)).outcome() == Outcome.ALLOWED) {
                allowed++;
            }
        }
        return allowed;
    }

    @Test
    void withoutALimitStoreAChangeReachesAssignedKeysAndCallsNamingThePlanAndADeleteTakesItBack() {
        MapLimitProvider keys = keys();
        try (CapturedLog audit = CapturedLog.of("io.github.ratelimit.limits");
                RateLimiter limiter = limiter(keys, keys, Set.of("api"))) {
            Guard guard = limiter.guard(API);
            LimitAdmin admin = LimitAdmin.of(limiter, null);
            assertThat(allowed(guard, "alice", null, 3)).isEqualTo(2);
            assertThat(allowed(guard, "p", "gold", 3)).isEqualTo(2);

            LimitAdmin.PlanLimits changed = admin.changePlan("gold", "4/1h", "ops");

            assertThat(changed.limits()).containsExactly(Limit.parse("4/1h"));
            assertThat(changed.configuredLimits()).containsExactly(Limit.parse("2/1h"));
            assertThat(changed.changed()).isTrue();
            assertThat(changed.everyInstance()).isFalse();
            assertThat(changed.changedBy()).isEqualTo("ops");
            assertThat(changed.changedAt()).isNotNull();
            // Buckets under the old limits take the new ones additively: capacity 2 -> 4 gains 2, the spent stays.
            assertThat(allowed(guard, "alice", null, 5)).isEqualTo(2);
            assertThat(allowed(guard, "p", "gold", 5)).isEqualTo(2);
            assertThat(allowed(guard, "q", "gold", 5)).isEqualTo(4);
            assertThat(allowed(guard, "r", "free", 3)).as("another plan").isEqualTo(1);
            assertThat(admin.planLimits())
                    .extracting(LimitAdmin.PlanLimits::plan, LimitAdmin.PlanLimits::changed)
                    .containsExactly(
                            org.assertj.core.groups.Tuple.tuple("free", false),
                            org.assertj.core.groups.Tuple.tuple("gold", true));

            assertThat(admin.restorePlan("gold", "ops")).isTrue();
            assertThat(admin.restorePlan("gold", "ops")).isFalse();
            assertThat(admin.planLimits("gold").changed()).isFalse();
            assertThat(allowed(guard, "s", "gold", 5)).isEqualTo(2);
            assertThat(audit.messages())
                    .contains(
                            "Plan 'gold' changed to limits 4/1h in this instance only (no limit store) by 'ops'",
                            "Plan 'gold' back to its configured limits in this instance by 'ops'");
        }
    }

    @Test
    void unknownPlansAndLimitsARuleCannotUseAreRefusedWithTheMessageOfStartUp() {
        MapLimitProvider keys = keys();
        try (RateLimiter limiter = limiter(keys, keys, Set.of("log"))) {
            Guard guard = limiter.guard(LOG);
            LimitAdmin admin = LimitAdmin.of(limiter, null);
            String atStartUp = startUpMessage("3/1h burst=50");

            assertThatThrownBy(() -> admin.changePlan("gold", "3/1h burst=50", "ops"))
                    .isInstanceOf(InvalidRateLimitConfigurationException.class)
                    .hasMessage(atStartUp);
            assertThatThrownBy(() -> admin.changePlan("gold", "1/0s", "ops"))
                    .isInstanceOf(InvalidRateLimitConfigurationException.class)
                    .hasMessageContaining("1/0s");
            assertThatThrownBy(() -> admin.changePlan("platinum", "9/1h", "ops"))
                    .isInstanceOf(LimitAdmin.UnknownPlanException.class)
                    .hasMessage("plan 'platinum' is not known; known plans: [free, gold]");
            assertThat(admin.planLimits("gold").changed()).isFalse();
            assertThat(allowed(guard, "p", "gold", 3)).isEqualTo(2);
        }
    }

    /** The provider itself refuses limits no rule could use, which every instance would otherwise read as garbage. */
    @Test
    void theProviderRefusesLimitsNoRuleCanUseAndStoresNothing() {
        try (RedisLimitProvider provider = REDIS.store(LimitStoreRedis.prefix())) {
            assertThatThrownBy(() -> provider.changePlan(
                            "gold",
                            List.of(io.github.ratelimit.Limit.parse("10/1m"), io.github.ratelimit.Limit.parse("20/1m")),
                            "ops"))
                    .isInstanceOf(InvalidRateLimitConfigurationException.class)
                    .hasMessageContaining("limits of plan 'gold'");
            assertThat(provider.changedPlan("gold")).isNull();
        }
    }

    /** @return the message a limiter whose plan gold has these limits gets at start-up for rule log */
    private static String startUpMessage(String limits) {
        MapLimitProvider bad = MapLimitProvider.builder().plan("gold", limits).build();
        try (RateLimiter limiter = limiter(bad, bad, Set.of("log"))) {
            limiter.guard(LOG);
        } catch (InvalidRateLimitConfigurationException e) {
            return e.getMessage();
        }
        throw new AssertionError("no exception");
    }

    private static RedisLimitProvider store(String prefix, MapLimitProvider keys) {
        RedisLimitProvider.Builder b = RedisLimitProvider.builder()
                .client(REDIS.client())
                .keyPrefix(prefix)
                .defaults(keys)
                .refreshInterval(Duration.ofHours(1));
        keys.plans().forEach(b::plan);
        RedisLimitProvider store = b.build();
        Awaitility.await("the scheduled first refresh")
                .atMost(Duration.ofSeconds(10))
                .until(() -> store.refreshes() >= 1);
        return store;
    }

    @Test
    void inRedisAChangeReachesEveryInstanceWhereverThePlanIsUsed() {
        String prefix = LimitStoreRedis.prefix();
        MapLimitProvider keysA = keys();
        MapLimitProvider keysB = keys();
        try (CapturedLog audit = CapturedLog.of("io.github.ratelimit.limits");
                RedisLimitProvider storeA = store(prefix, keysA);
                RedisLimitProvider storeB = store(prefix, keysB);
                RateLimiter a = limiter(storeA, keysA, Set.of("api"));
                RateLimiter b = limiter(storeB, keysB, Set.of("api"))) {
            Guard guardA = a.guard(API);
            Guard guardB = b.guard(API);
            LimitAdmin admin = LimitAdmin.of(a, storeA);
            storeA.assignPlan(API, "bob", "gold", "ops"); // a key on the plan in Redis
            storeB.refresh();
            assertThat(allowed(guardB, "bob", null, 3)).isEqualTo(2);

            LimitAdmin.PlanLimits changed = admin.changePlan("gold", "3/1h", "alice");

            assertThat(changed.everyInstance()).isTrue();
            assertThat(allowed(guardA, "alice", null, 5))
                    .as("at once where it was made")
                    .isEqualTo(3);
            storeB.refresh(); // what B's refresh thread does every interval
            assertThat(allowed(guardB, "alice", null, 5)).as("ratelimit.keys").isEqualTo(3);
            assertThat(allowed(guardB, "bob", null, 5))
                    .as("assigned in Redis, bucket kept")
                    .isEqualTo(1);
            assertThat(allowed(guardB, "p", "gold", 5)).as("plan-from").isEqualTo(3);
            LimitAdmin.PlanLimits seenByB = LimitAdmin.of(b, storeB).planLimits("gold");
            assertThat(seenByB.changedBy()).isEqualTo("alice");
            assertThat(seenByB.limits()).containsExactly(Limit.parse("3/1h"));
            assertThat(storeB.get("api", "bob").orElseThrow().limits()).containsExactly(Limit.parse("3/1h"));

            assertThat(admin.restorePlan("gold", "bob")).isTrue();
            storeB.refresh();
            assertThat(allowed(guardB, "q", "gold", 5)).isEqualTo(2);
            assertThat(audit.messages())
                    .contains(
                            "Plan 'gold' changed to limits 3/1h by 'alice'",
                            "Plan 'gold' back to its configured limits by 'bob'");
        }
    }

    @Test
    void garbageStoredInPlaceOfAChangeIsIgnoredAndTheConfiguredLimitsDecide() {
        String[] garbage = {
            "garbage",
            "plan\t\tx\t1",
            "plan\t99999999999999999999999/1s\tx\t1",
            "plan\t1/1s,1/1s\tx\t1",
            "plan\t" + "1/1s,".repeat(2000) + "\tx\t1",
            "plan\t2/1m\tx\t1\textra"
        };
        for (String value : garbage) {
            String prefix = LimitStoreRedis.prefix();
            REDIS.client()
                    .hset(
                            (prefix + ":{limits}:plans").getBytes(StandardCharsets.UTF_8),
                            "gold".getBytes(StandardCharsets.UTF_8),
                            value.getBytes(StandardCharsets.UTF_8));
            MapLimitProvider keys = keys();
            try (RedisLimitProvider store = store(prefix, keys);
                    RateLimiter limiter = limiter(store, keys, Set.of("api"))) {
                Guard guard = limiter.guard(API);
                assertThat(allowed(guard, "alice", null, 4)).as(value).isEqualTo(2);
                assertThat(allowed(guard, "p", "gold", 4)).as(value).isEqualTo(2);
                LimitAdmin.PlanLimits shown = LimitAdmin.of(limiter, store).planLimits("gold");
                assertThat(shown.problem()).as(value).isNotNull();
                assertThat(shown.limits()).as(value).containsExactly(Limit.parse("2/1h"));
            }
        }
        String prefix = LimitStoreRedis.prefix();
        REDIS.client().set(prefix + ":{limits}:plans", "not a hash");
        MapLimitProvider keys = keys();
        try (RedisLimitProvider store = store(prefix, keys);
                RateLimiter limiter = limiter(store, keys, Set.of("api"))) {
            Guard guard = limiter.guard(API);
            assertThat(allowed(guard, "p", "gold", 4)).isEqualTo(2);
            LimitAdmin.of(limiter, store).changePlan("gold", "3/1h", "ops");
            assertThat(allowed(guard, "q", "gold", 5))
                    .as("the next change replaces the garbage")
                    .isEqualTo(3);
            assertThat(store.repairs()).isEqualTo(1);
        }
    }
}
