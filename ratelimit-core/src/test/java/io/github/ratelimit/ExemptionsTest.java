package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.internal.metrics.MicrometerMetrics;
import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.store.LocalBucketStore;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.RedisClient;

/**
 * Exemptions: client addresses no rule limits ({@code ratelimit.exempt}), and key values or addresses one rule never
 * limits ({@code ratelimit.rules[i].exempt}); exempt calls ask no store and are counted with basis {@code exempt}.
 * On the local store and on a real Redis.
 */
class ExemptionsTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private final ManualClock clock = new ManualClock();
    private final List<RateLimiter> limiters = new ArrayList<>();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private String prefix;

    @AfterEach
    void close() {
        limiters.forEach(RateLimiter::close);
    }

    private RateLimiter.Builder builder(String store) {
        prefix = "exempt-" + UUID.randomUUID();
        RateLimiter.Builder b = RateLimiter.builder()
                .timeMeter(clock)
                .waiter(clock)
                .clientIpResolver(
                        ClientIpResolver.builder().trustedProxies("127.0.0.1").build())
                .listener(new MicrometerMetrics(registry));
        return b.store(
                "redis".equals(store)
                        ? JedisBucketStore.builder()
                                .url(redis.uri())
                                .keyPrefix(prefix)
                                .commandTimeout(Duration.ofSeconds(5))
                                .timeMeter(clock)
                                .build()
                        : LocalBucketStore.builder().timeMeter(clock).build());
    }

    private RateLimiter build(RateLimiter.Builder b) {
        RateLimiter limiter = b.build();
        limiters.add(limiter);
        return limiter;
    }

    private static RequestContext from(String address) {
        return RequestContext.builder().remoteAddress(address).build();
    }

    /** Through the trusted proxy 127.0.0.1, as a load balancer forwards a client. */
    private static RequestContext forwarded(String client) {
        return RequestContext.builder()
                .remoteAddress("127.0.0.1")
                .header("X-Forwarded-For", client)
                .build();
    }

    private long keysInRedis() {
        try (RedisClient jedis =
                RedisClient.builder().hostAndPort(redis.server().hostAndPort()).build()) {
            return jedis.keys(prefix + ":*:{*").size(); // the rules' state, not the store's layout mark
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void exemptClientsPassEveryRuleWithoutAskingTheStore(String store) {
        RateLimiter limiter = build(builder(store).exempt(List.of("10.0.0.0/8", "192.0.2.7", "2001:db8::1/128")));
        Guard guard = limiter.guard(
                Rule.builder("api").key("ip").limits("1/1h").build(),
                Rule.builder("site").key("global").limits("1/1h").build());
        for (int i = 0; i < 50; i++) {
            for (RequestContext exempt :
                    List.of(from("10.1.2.3"), from("192.0.2.7"), forwarded("10.9.9.9"), from("2001:db8::1"))) {
                Decision d = guard.acquire(exempt);
                assertThat(d.outcome()).isEqualTo(Outcome.ALLOWED);
                assertThat(d.verdicts()).hasSize(2).allSatisfy(v -> {
                    assertThat(v.basis()).isEqualTo(Basis.EXEMPT);
                    assertThat(v.windows()).as("no window is claimed").isEmpty();
                });
            }
        }
        if (store.equals("redis")) {
            assertThat(keysInRedis()).as("no exempt call reached Redis").isZero();
        }
        assertThat(guard.acquire(from("198.51.100.1")).permitted()).isTrue();
        assertThat(guard.acquire(from("198.51.100.2")).outcome())
                .as("site is spent")
                .isEqualTo(Outcome.REJECTED);
        assertThat(registry.get("ratelimit.requests")
                        .tag("rule", "api")
                        .tag("basis", "exempt")
                        .counter()
                        .count())
                .isEqualTo(200);
    }

    @Test
    void onlyTheClientAsTheTrustedProxiesTellItIsExempt() {
        RateLimiter limiter = build(builder("local").exempt(List.of("10.0.0.0/8", "2001:db8::1/128")));
        Guard guard = limiter.guard(Rule.builder("api").key("ip").limits("1/1h").build());
        RequestContext spoofed = RequestContext.builder()
                .remoteAddress("198.51.100.9")
                .header("X-Forwarded-For", "10.0.0.1")
                .build();
        assertThat(guard.acquire(spoofed).verdicts().get(0).basis())
                .as("an untrusted peer's header is not read")
                .isEqualTo(Basis.BUCKET);
        assertThat(guard.acquire(spoofed).outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(guard.acquire(forwarded("10.0.0.1, 198.51.100.8"))
                        .verdicts()
                        .get(0)
                        .basis())
                .as("the client is the first untrusted hop from the right")
                .isEqualTo(Basis.BUCKET);
        assertThat(guard.acquire(from("2001:db8::2")).verdicts().get(0).basis())
                .as("a /128 is one address, though ip keys group IPv6 by /64")
                .isEqualTo(Basis.BUCKET);
        assertThat(guard.acquire(RequestContext.builder().build())
                        .verdicts()
                        .get(0)
                        .basis())
                .as("no address, no exemption")
                .isEqualTo(Basis.KEY_MISSING);
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aRuleNeverLimitsItsExemptKeys(String store) {
        RateLimiter limiter = build(builder(store)
                .exempt("per-user", List.of("alice", "ops-bot"))
                .exempt("per-client", List.of("10.0.0.0/8", "carol")));
        Rule perUser = Rule.builder("per-user").key("user").limits("1/1h").build();
        Rule perClient =
                Rule.builder("per-client").key("user|ip").limits("1/1h").build();
        Guard users = limiter.guard(perUser);
        for (int i = 0; i < 20; i++) {
            assertThat(users.acquire(RequestContext.builder().principal("alice").build())
                            .verdicts()
                            .get(0)
                            .basis())
                    .isEqualTo(Basis.EXEMPT);
        }
        assertThat(users.acquire(RequestContext.builder().principal("bob").build())
                        .permitted())
                .isTrue();
        assertThat(users.acquire(RequestContext.builder().principal("bob").build())
                        .outcome())
                .isEqualTo(Outcome.REJECTED);
        Guard both = limiter.guard(perUser, perClient);
        RequestContext internal = RequestContext.builder()
                .principal("dave")
                .remoteAddress("10.2.3.4")
                .build();
        Decision first = both.acquire(internal);
        assertThat(first.verdicts()).extracting(Decision.Verdict::basis).containsExactly(Basis.BUCKET, Basis.EXEMPT);
        assertThat(both.acquire(internal).outcome())
                .as("per-user still limits dave")
                .isEqualTo(Outcome.REJECTED);
        RequestContext carol = RequestContext.builder()
                .principal("carol")
                .remoteAddress("198.51.100.3")
                .build();
        assertThat(limiter.guard(perClient).acquire(carol).verdicts().get(0).basis())
                .as("'carol' is no key of user|ip (those are tagged: user=carol)")
                .isEqualTo(Basis.BUCKET);
    }

    @Test
    void badEntriesFailWithMessagesThatSayWhere() {
        assertThatThrownBy(() -> build(builder("local").exempt(List.of("10.0.0.300"))))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("exempt address '10.0.0.300'");
        assertThatThrownBy(() -> build(builder("local").exempt(List.of("10.0.0.1/33"))))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("prefix length");
        RateLimiter limiter =
                build(builder("local").exempt("api", List.of("10.0.0.1/99")).exempt("users", List.of(" ")));
        assertThatThrownBy(() -> limiter.guard(
                        Rule.builder("api").key("ip").limits("1/1h").build()))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("rule 'api': exempt address '10.0.0.1/99'");
        assertThatThrownBy(() -> limiter.guard(
                        Rule.builder("users").key("user").limits("1/1h").build()))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("rule 'users': exempt")
                .hasMessageContaining("empty");
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 10_001; i++) {
            many.add("user-" + i);
        }
        RateLimiter heavy = build(builder("local").exempt("big", many));
        assertThatThrownBy(() -> heavy.guard(
                        Rule.builder("big").key("user").limits("1/1h").build()))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("10001 entries");
    }
}
