package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.RateLimitHeaders.HeaderStyle;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.RateLimitFields;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What the rate-limit headers tell a client, run against every store (local, Redis) for every algorithm and each
 * header style: a {@code RateLimit} item never says more remains than its {@code RateLimit-Policy} quota;
 * {@code X-RateLimit-Limit} is the quota the policy states for the window the classic headers describe; and a
 * window that is full says {@code t=0}, also when what filled it is a refund (another rule rejected the call).
 * Time is a manual clock shared by the limiter and the store.
 */
abstract class HeadersContract {

    protected final ManualClock clock = new ManualClock();
    private final List<RateLimiter> limiters = new ArrayList<>();
    private RateLimiter limiter;

    /**
     * @return a store, empty for this test, whose buckets use {@code clock}
     */
    protected abstract BucketStore newStore(ManualClock clock);

    @AfterEach
    void closeAll() {
        limiters.forEach(RateLimiter::close);
    }

    private RateLimiter limiter() {
        if (limiter == null) {
            limiter = RateLimiter.builder()
                    .store(newStore(clock))
                    .timeMeter(clock)
                    .waiter(clock)
                    .build();
            limiters.add(limiter);
        }
        return limiter;
    }

    /** Each algorithm with limits of whole, fractional and sub-second periods; the token bucket with bursts. */
    static Stream<Arguments> limits() {
        List<Arguments> cases = new ArrayList<>();
        for (Algorithm algorithm : Algorithm.values()) {
            if (algorithm == Algorithm.LEAKY_BUCKET) {
                continue; // holds one token whatever the limit: LeakyBucketTest
            }
            for (String limit : List.of("2/500ms", "10/1500ms", "3/1m", "4/1s, 30/1m")) {
                cases.add(Arguments.of(algorithm, limit));
            }
        }
        for (String limit : List.of("5/1s burst=20", "5/1s burst=7", "5/1s burst=1", "5/1s burst=20, 100/1m")) {
            cases.add(Arguments.of(Algorithm.TOKEN_BUCKET, limit));
        }
        return cases.stream();
    }

    /** The headers of one decision, each style written on its own. */
    private record Written(
            Map<String, String> classic,
            Map<String, Map<String, Long>> policy,
            Map<String, Map<String, Long>> current,
            String retryAfter) {

        static Written of(Decision d) {
            Map<String, String> classic = write(d, EnumSet.of(HeaderStyle.X_RATELIMIT));
            Map<String, String> ietf = write(d, EnumSet.of(HeaderStyle.IETF_DRAFT_09));
            assertThat(ietf.get("Retry-After")).isEqualTo(classic.get("Retry-After"));
            return new Written(
                    classic,
                    RateLimitFields.parse(ietf.get("RateLimit-Policy"), "q", "w"),
                    RateLimitFields.parse(ietf.get("RateLimit"), "r", "t"),
                    classic.get("Retry-After"));
        }

        private static Map<String, String> write(Decision d, Set<HeaderStyle> styles) {
            Map<String, String> headers = new LinkedHashMap<>();
            RateLimitHeaders.write(
                    d,
                    styles,
                    (name, value) -> assertThat(headers.put(name, value)).isNull());
            return headers;
        }

        long classic(String name) {
            return Long.parseLong(classic.get(name));
        }
    }

    /**
     * Checks what every response must say, and returns the headers.
     */
    private static Written check(Decision d, Rule rule) {
        assertThat(d.verdicts())
                .as("decided on the store's buckets")
                .allSatisfy(v -> assertThat(v.basis()).isEqualTo(Basis.BUCKET));
        Written h = Written.of(d);
        assertThat(h.current.keySet()).isEqualTo(h.policy.keySet());
        h.current.forEach((item, state) -> assertThat(state.get("r"))
                .as("r of %s within q %s", item, h.policy)
                .isLessThanOrEqualTo(h.policy.get(item).get("q")));
        for (Limit limit : rule.limits()) {
            Map<String, Long> state = h.current.get(rule.name() + "-" + limit.window());
            if (state != null && state.get("r") == limit.capacity()) {
                assertThat(state.get("t"))
                        .as("a full %s window resets in 0 s", limit)
                        .isZero();
            }
        }
        // The classic headers describe one of the items: its quota, what is left of it and when it is full again
        // (on a rejection, when the call could pass, which the binding item's t says too).
        assertThat(h.policy.keySet()).anySatisfy(item -> {
            assertThat(h.classic("X-RateLimit-Limit"))
                    .isEqualTo(h.policy.get(item).get("q"));
            assertThat(h.classic("X-RateLimit-Remaining"))
                    .isEqualTo(h.current.get(item).get("r"));
            assertThat(h.classic("X-RateLimit-Reset"))
                    .isEqualTo(h.current.get(item).get("t"));
        });
        return h;
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("limits")
    void neverSaysMoreRemainsThanTheQuotaAndTheClassicLimitIsThatQuota(Algorithm algorithm, String limits) {
        Rule rule = Rule.builder("api")
                .algorithm(algorithm)
                .limits(limits.split(", "))
                .build();
        Guard guard = limiter().guard(rule);
        // Bursts and pauses of several lengths: full windows, partly used ones, rejections, refills.
        List<Long> pausesMillis = new ArrayList<>(java.util.Collections.nCopies(24, 0L));
        pausesMillis.addAll(List.of(100L, 0L, 700L, 0L, 0L, 3_000L, 0L, 250L, 0L, 0L, 60_000L, 0L, 0L, 0L));
        int rejected = 0;
        for (long pause : pausesMillis) {
            clock.advance(Duration.ofMillis(pause));
            Decision d = guard.acquire(RequestContext.empty());
            Written h = check(d, rule);
            if (d.outcome() == Outcome.REJECTED) {
                rejected++;
                assertThat(h.classic("X-RateLimit-Reset")).isEqualTo(Long.parseLong(h.retryAfter));
            }
        }
        assertThat(rejected).as("the walk reaches the limit").isPositive();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("limits")
    void aWindowThatARefundFillsAgainSaysItIsFull(Algorithm algorithm, String limits) {
        Rule rule = Rule.builder("api")
                .algorithm(algorithm)
                .limits(limits.split(", "))
                .build();
        Rule gate = Rule.builder("gate").limits("1/1h").build();
        assertThat(limiter().guard(gate).acquire(RequestContext.empty()).permitted())
                .isTrue();
        Guard both = limiter().guard(rule, gate);
        for (int i = 0; i < 3; i++) {
            // 'api' admits the call, 'gate' rejects it, and 'api' gets its token back: it is as full as before. (A
            // second apart, so that a store that remembers rejections asks again: else 'gate' decides alone.)
            Decision d = both.acquire(RequestContext.empty());
            assertThat(d.outcome()).isEqualTo(Outcome.REJECTED);
            Written h = check(d, rule);
            for (Limit limit : rule.limits()) {
                assertThat(h.current.get("api-" + limit.window()))
                        .as("%s after refund %d", limit, i)
                        .isEqualTo(Map.of("r", limit.capacity(), "t", 0L));
            }
            long reset = 3600 - i;
            assertThat(h.current.get("gate-1h")).isEqualTo(Map.of("r", 0L, "t", reset));
            assertThat(h.classic)
                    .containsEntry("X-RateLimit-Limit", "1")
                    .containsEntry("X-RateLimit-Reset", Long.toString(reset));
            clock.advance(Duration.ofMillis(1000));
        }
    }

    @Test
    void aRefundGivesBackTheTimeItsTokenTakesToRefill() {
        Rule rule = Rule.builder("api").limits("3/1m").build();
        Guard api = limiter().guard(rule);
        Decision first = api.acquire(RequestContext.empty());
        assertThat(check(first, rule).current).containsEntry("api-1m", Map.of("r", 2L, "t", 20L));
        Rule gate = Rule.builder("gate").limits("1/1h").build();
        limiter().guard(gate).acquire(RequestContext.empty());
        clock.advance(Duration.ofSeconds(5));
        // 'api' is 1 short for 15 s more; the refunded call would have made that 35 s.
        Decision refunded = limiter().guard(rule, gate).acquire(RequestContext.empty());
        assertThat(check(refunded, rule).current).containsEntry("api-1m", Map.of("r", 2L, "t", 15L));
        assertThat(check(api.acquire(RequestContext.empty()), rule).current)
                .as("what the store says next")
                .containsEntry("api-1m", Map.of("r", 1L, "t", 35L));
    }
}
