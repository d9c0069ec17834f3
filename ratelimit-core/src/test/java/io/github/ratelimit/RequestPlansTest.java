package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.store.LocalBucketStore;
import io.github.ratelimit.testing.CapturedLog;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Plans chosen by the call ({@code ratelimit.plan-from}): a key with no entry of its own gets the limits of the plan
 * its call names, on the rules the plans are for; stored entries win; an unknown plan is the rule's own limits. On the
 * local store and on a real Redis.
 */
class RequestPlansTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final Map<String, List<Limit>> PLANS =
            Map.of("free", List.of(Limit.parse("2/1m")), "pro", List.of(Limit.parse("10/1m")));

    private final ManualClock clock = new ManualClock();
    private final List<RateLimiter> limiters = new ArrayList<>();

    @AfterEach
    void close() {
        limiters.forEach(RateLimiter::close);
    }

    /** The gateway that sets X-Plan: the calls of most tests come from it. */
    private static final String GATEWAY = "192.0.2.1";

    private RateLimiter limiter(String store, Set<String> rules, LimitProvider provider) {
        return limiter(
                store,
                rules,
                provider,
                ClientIpResolver.builder().trustedProxies(GATEWAY).build(),
                false);
    }

    private RateLimiter limiter(
            String store, Set<String> rules, LimitProvider provider, ClientIpResolver clientIp, boolean headerTrusted) {
        RateLimiter.Builder b = RateLimiter.builder()
                .timeMeter(clock)
                .waiter(clock)
                .clientIpResolver(clientIp)
                .planHeaderTrusted(headerTrusted)
                .planFrom("header:X-Plan", PLANS, rules)
                .store(
                        "redis".equals(store)
                                ? JedisBucketStore.builder()
                                        .url(redis.uri())
                                        .keyPrefix("plans-" + UUID.randomUUID())
                                        .commandTimeout(Duration.ofSeconds(5))
                                        .timeMeter(clock)
                                        .build()
                                : LocalBucketStore.builder().timeMeter(clock).build());
        if (provider != null) {
            b.limitProvider(provider, Duration.ofMinutes(1));
        }
        RateLimiter limiter = b.build();
        limiters.add(limiter);
        return limiter;
    }

    private static RequestContext call(String user, String plan) {
        RequestContext.Builder b = RequestContext.builder().principal(user).remoteAddress(GATEWAY);
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
        Guard api = limiter(store, Set.of(), null)
                .guard(Rule.builder("api").key("user").limits("5/1m").build());
        assertThat(admitted(api, call("alice", "pro"))).isEqualTo(10);
        assertThat(admitted(api, call("bob", "free"))).isEqualTo(2);
        assertThat(admitted(api, call("carol", null)))
                .as("no plan: the rule's own")
                .isEqualTo(5);
        assertThat(admitted(api, call("dave", "platinum")))
                .as("an unknown plan: the rule's own")
                .isEqualTo(5);
        Decision d = api.acquire(call("erin", "pro"));
        assertThat(d.verdicts().get(0).windows().get(0).limit())
                .as("the headers show the plan")
                .isEqualTo(10);
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void storedEntriesWinAndOtherRulesKeepTheirOwn(String store) {
        LimitProvider provider = LimitProvider.builder()
                .limits("user:alice", "3/1m")
                .limits("user:bob", "5/1m")
                .build();
        RateLimiter limiter = limiter(store, Set.of(), provider);
        Guard api = limiter.guard(Rule.builder("api").key("user").limits("5/1m").build());
        Guard site = limiter.guard(Rule.builder("site").key("ip").limits("4/1m").build());
        assertThat(admitted(api, call("alice", "pro"))).as("alice's own entry").isEqualTo(3);
        assertThat(admitted(api, call("bob", "pro")))
                .as("bob's own entry, though it equals the rule's")
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
        Guard logins = limiter(store, Set.of(), null)
                .guard(Rule.builder("logins")
                        .key("user")
                        .limits("5/1m")
                        .count(Rule.Counted.FAILURES)
                        .build());
        for (int i = 0; i < 30; i++) {
            Decision d = logins.acquire(call("alice", "pro"));
            assertThat(d.permitted()).isTrue();
            logins.completed(d, false);
        }
        for (int i = 0; i < 10; i++) {
            logins.completed(logins.acquire(call("alice", "pro")), true);
        }
        assertThat(logins.acquire(call("alice", "pro")).outcome())
                .as("10 failures of the plan's 10")
                .isEqualTo(Outcome.REJECTED);
    }

    @Test
    void aPlanARuleCannotUseFailsWhenTheRuleIsRegistered() {
        RateLimiter limiter = RateLimiter.builder()
                .timeMeter(clock)
                .planHeaderTrusted(true)
                .planFrom("header:X-Plan", Map.of("huge", List.of(Limit.parse("20000/1m"))), Set.of())
                .build();
        limiters.add(limiter);
        assertThatThrownBy(() -> limiter.guard(Rule.builder("log")
                        .key("user")
                        .limits("10/1m")
                        .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                        .build()))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("rule 'log': plan 'huge'")
                .hasMessageContaining("ratelimit.plan-rules");
        assertThatThrownBy(() -> RateLimiter.builder()
                        .planFrom("headr:X-Plan", PLANS, Set.of())
                        .build())
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("headr:X-Plan");
    }

    /** An anonymous call from its own address, naming a plan itself, or through a proxy that names it. */
    private static RequestContext anonymous(String peer, String forwardedFor, String plan) {
        RequestContext.Builder b = RequestContext.builder().remoteAddress(peer).header("X-Plan", plan);
        return forwardedFor == null
                ? b.build()
                : b.header("X-Forwarded-For", forwardedFor).build();
    }

    /**
     * Anyone can send X-Plan: from a client that is no trusted proxy it names no plan (the rule's own limits apply),
     * from a trusted proxy it is the gateway's word.
     */
    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aPlanHeaderIsBelievedOnlyFromATrustedProxy(String store) {
        RateLimiter limiter = limiter(
                store,
                Set.of("site"),
                null,
                ClientIpResolver.builder().trustedProxies("10.0.0.0/8").build(),
                false);
        Guard site = limiter.guard(Rule.builder("site").key("ip").limits("5/1m").build());
        assertThat(admitted(site, anonymous("203.0.113.7", null, "pro")))
                .as("a client naming its own plan")
                .isEqualTo(5);
        assertThat(admitted(site, anonymous("203.0.113.8", "198.51.100.1", "pro")))
                .as("a client forwarding for another, naming a plan")
                .isEqualTo(5);
        assertThat(admitted(site, anonymous("10.0.0.1", "203.0.113.9", "pro")))
                .as("through the trusted proxy")
                .isEqualTo(10);
        assertThat(admitted(site, anonymous("10.0.0.1", "203.0.113.10", "free")))
                .isEqualTo(2);
    }

    @Test
    void aPlanHeaderWithNoTrustedProxyStopsTheBuild() {
        assertThatThrownBy(() -> RateLimiter.builder()
                        .planFrom("header:X-Plan", PLANS, Set.of())
                        .build())
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageStartingWith("ratelimit.plan-from: 'header:X-Plan' takes the plan from the request header "
                        + "X-Plan, which any client can send, and no proxy is trusted to set it "
                        + "(ratelimit.trusted-proxies is empty)")
                .hasMessageContaining("List the proxies that set the header in ratelimit.trusted-proxies")
                .hasMessageContaining("ratelimit.plan-header-trusted=true")
                .hasMessageContaining("planHeaderTrusted(true)");
        assertThatThrownBy(() -> RateLimiter.builder()
                        .planFrom("custom | header:X-Plan", PLANS, Set.of())
                        .keyResolver("custom", c -> null)
                        .build())
                .as("a header among alternatives")
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("header X-Plan");
    }

    /** ratelimit.plan-header-trusted: the operator says whatever reaches the application sets the header. */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aPlanHeaderDeclaredTrustedIsBelievedFromEveryPeer(boolean proxiesListed) {
        ClientIpResolver clientIp = proxiesListed
                ? ClientIpResolver.builder().trustedProxies("10.0.0.0/8").build()
                : ClientIpResolver.direct();
        Guard site = limiter("local", Set.of("site"), null, clientIp, true)
                .guard(Rule.builder("site").key("ip").limits("5/1m").build());
        assertThat(admitted(site, anonymous("203.0.113.7", null, "pro"))).isEqualTo(10);
    }

    /** A custom resolver, or an expression of the key-resolver factory (SpEL), reads what its author chose. */
    @Test
    void planSourcesThatAreNoHeaderAtomAreNotVetted() {
        RateLimiter custom = RateLimiter.builder()
                .timeMeter(clock)
                .planFrom("plan-of", PLANS, Set.of("site"))
                .keyResolver("plan-of", c -> c.header("X-Plan"))
                .build();
        limiters.add(custom);
        Guard byCustom =
                custom.guard(Rule.builder("site").key("ip").limits("5/1m").build());
        assertThat(admitted(byCustom, anonymous("203.0.113.7", null, "pro"))).isEqualTo(10);
        RateLimiter factory = RateLimiter.builder()
                .timeMeter(clock)
                .planFrom("#plan", PLANS, Set.of("site"))
                .keyResolverFactory((expression, source) -> expression.startsWith("#") ? c -> c.header("X-Plan") : null)
                .build();
        limiters.add(factory);
        Guard byFactory =
                factory.guard(Rule.builder("site").key("ip").limits("5/1m").build());
        assertThat(admitted(byFactory, anonymous("203.0.113.7", null, "pro"))).isEqualTo(10);
    }

    private static List<String> planFromWarnings(CapturedLog log) {
        return log.messages().stream().filter(m -> m.contains("named no plan")).toList();
    }

    /**
     * A plan source that names no plan for any call of its first minute (an attribute set too late, a header no
     * trusted proxy sends) is reported once, on the limiter's clock, at the first call after that minute.
     */
    @Test
    void aPlanSourceThatNamesNoPlanInItsFirstMinuteIsReportedOnce() {
        try (CapturedLog log = CapturedLog.of("io.github.ratelimit")) {
            Guard api = limiter("local", Set.of(), null)
                    .guard(Rule.builder("api").key("user").limits("1000/1m").build());
            clock.advance(Duration.ofHours(3)); // the minute starts with the first call, not with the limiter
            api.acquire(call("alice", null));
            clock.advance(Duration.ofSeconds(59));
            api.acquire(userFromPeer("bob", "203.0.113.7", "pro"));
            assertThat(planFromWarnings(log))
                    .as("59 s, and a plan from a peer that is no trusted proxy")
                    .isEmpty();
            clock.advance(Duration.ofSeconds(1));
            api.acquire(call("carol", null));
            assertThat(planFromWarnings(log))
                    .singleElement()
                    .asString()
                    .startsWith("ratelimit.plan-from 'header:X-Plan' named no plan for any call in its first minute")
                    .contains("run before the rate-limit filter (Spring Boot: order -99, ratelimit.filter.order)")
                    .contains("believed only from ratelimit.trusted-proxies");
            clock.advance(Duration.ofMinutes(5));
            api.acquire(call("dave", null));
            api.acquire(call("erin", "pro"));
            assertThat(planFromWarnings(log)).as("once").hasSize(1);
        }
    }

    @Test
    void aPlanSourceThatNamedAPlanInItsFirstMinuteIsNeverReported() {
        try (CapturedLog log = CapturedLog.of("io.github.ratelimit")) {
            Guard api = limiter("local", Set.of(), null)
                    .guard(Rule.builder("api").key("user").limits("1000/1m").build());
            api.acquire(call("alice", null));
            clock.advance(Duration.ofSeconds(30));
            api.acquire(call("bob", "free"));
            clock.advance(Duration.ofMinutes(2));
            api.acquire(call("carol", null));
            assertThat(planFromWarnings(log)).isEmpty();
        }
    }

    /** A user's call from a peer of the test's choosing, naming a plan. */
    private static RequestContext userFromPeer(String user, String peer, String plan) {
        return RequestContext.builder()
                .principal(user)
                .remoteAddress(peer)
                .header("X-Plan", plan)
                .build();
    }
}
