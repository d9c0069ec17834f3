package io.github.ratelimit;

import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.store.LocalBucketStore;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Plans chosen by the call ({@code ratelimit.plan-from}): a key with no entry of its own gets the limits of the plan
 * its call names, on the rules the plans are for; stored entries win; an unknown plan is the rule's own limits. On the
 * local store and on a real Redis.
 */
class RequestPlansTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final Map<String, List<Limit>> PLANS = Map.of(
            "free", List.of(Limit.parse("2/1m")), "pro", List.of(Limit.parse("10/1m")));

    private final ManualClock clock = new ManualClock();
    private final List<RateLimiter> limiters = new ArrayList<>();

    @AfterEach
    void close() {
        limiters.forEach(RateLimiter::close);
    }

    private RateLimiter limiter(String store, Set<String> rules, LimitProvider provider) {
        RateLimiter.Builder b = RateLimiter.builder().timeMeter(clock).waiter(clock)
                .planFrom("header:X-Plan", PLANS, rules)
                .store("redis".equals(store)
                        ? JedisBucketStore.builder().url(redis.uri()).keyPrefix("plans-" + UUID.randomUUID())
                                .commandTimeout(Duration.ofSeconds(5)).timeMeter(clock).build()
                        : LocalBucketStore.builder().timeMeter(clock).build());
        if (provider != null) {
            b.limitProvider(provider, Duration.ofMinutes(1));
        }
        RateLimiter limiter = b.build();
        limiters.add(limiter);
        return limiter;
    }

    private static RequestContext call(String user, String plan) {
        RequestContext.Builder b = RequestContext.builder().principal(user).remoteAddress("192.0.2.1");
        return plan == null ? b.build() : b.header("X-Plan", plan).build();
    }

    private static int admitted(Guard guard, RequestContext call) {
        int n = 0;
        while (guard.acquire(call).permitted()) {
            n++;
            if (n > 1000) {
                throw new AssertionError("never rejected");
            }
        }
        return n;
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void theCallsPlanGivesItsKeyThePlansLimits(String store) {
        Guard api = limiter(store, Set.of(), null).guard(Rule.builder("api").key("user").limits("5/1m").build());
        assertThat(admitted(api, call("alice", "pro"))).isEqualTo(10);
        assertThat(admitted(api, call("bob", "free"))).isEqualTo(2);
        assertThat(admitted(api, call("carol", null))).as("no plan: the rule's own").isEqualTo(5);
        assertThat(admitted(api, call("dave", "platinum"))).as("an unknown plan: the rule's own").isEqualTo(5);
        Decision d = api.acquire(call("erin", "pro"));
        assertThat(d.verdicts().get(0).windows().get(0).limit()).as("the headers show the plan").isEqualTo(10);
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void storedEntriesWinAndOtherRulesKeepTheirOwn(String store) {
        LimitProvider provider = LimitProvider.builder().limits("user:alice", "3/1m")
                .limits("user:bob", "5/1m").build();
        RateLimiter limiter = limiter(store, Set.of(), provider);
        Guard api = limiter.guard(Rule.builder("api").key("user").limits("5/1m").build());
        Guard site = limiter.guard(Rule.builder("site").key("ip").limits("4/1m").build());
        assertThat(admitted(api, call("alice", "pro"))).as("alice's own entry").isEqualTo(3);
        assertThat(admitted(api, call("bob", "pro"))).as("bob's own entry, though it equals the rule's")
                .isEqualTo(5);
        assertThat(admitted(site, call("bob", "pro"))).as("not keyed by user").isEqualTo(4);
    }

    @Test
    void thePlanRulesNameWhichRulesPlansAreFor() {
        RateLimiter limiter = limiter("local", Set.of("site"), null);
        Guard api = limiter.guard(Rule.builder("api").key("user").limits("5/1m").build());
        Guard site = limiter.guard(Rule.builder("site").key("ip").limits("4/1m").build());
        assertThat(admitted(api, call("alice", "pro"))).isEqualTo(5);
        assertThat(admitted(site, call("alice", "pro"))).isEqualTo(10);
    }

    /** A refund has no call to read the plan from: it must not put the key back on the rule's own limits. */
    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void refundsKeepTheKeysPlan(String store) {
        Guard logins = limiter(store, Set.of(), null).guard(Rule.builder("logins").key("user").limits("5/1m")
                .count(Rule.Counted.FAILURES).build());
        for (int i = 0; i < 30; i++) {
            Decision d = logins.acquire(call("alice", "pro"));
            assertThat(d.permitted()).isTrue();
            logins.completed(d, false);
        }
        for (int i = 0; i < 10; i++) {
            logins.completed(logins.acquire(call("alice", "pro")), true);
        }
        assertThat(logins.acquire(call("alice", "pro")).outcome()).as("10 failures of the plan's 10")
                .isEqualTo(Outcome.REJECTED);
    }

    @Test
    void aPlanARuleCannotUseFailsWhenTheRuleIsRegistered() {
        RateLimiter limiter = RateLimiter.builder().timeMeter(clock)
                .planFrom("header:X-Plan", Map.of("huge", List.of(Limit.parse("20000/1m"))), Set.of()).build();
        limiters.add(limiter);
        assertThatThrownBy(() -> limiter.guard(Rule.builder("log").key("user").limits("10/1m")
                .algorithm(Algorithm.SLIDING_WINDOW_LOG).build()))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("rule 'log': plan 'huge'").hasMessageContaining("ratelimit.plan-rules");
        assertThatThrownBy(() -> RateLimiter.builder().planFrom("headr:X-Plan", PLANS, Set.of()).build())
                .isInstanceOf(InvalidRateLimitConfigurationException.class).hasMessageContaining("headr:X-Plan");
    }
}
