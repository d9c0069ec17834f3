package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Decision.Verdict;
import io.github.ratelimit.RateLimitHeaders.HeaderStyle;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.RateLimitFields;
import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RateLimitHeadersTest {

    private final ManualClock clock = new ManualClock();
    private final RateLimiter limiter =
            RateLimiter.builder().timeMeter(clock).waiter(clock).build();

    private static Map<String, String> headers(Decision d, HeaderStyle... styles) {
        Map<String, String> headers = new LinkedHashMap<>();
        RateLimitHeaders.write(
                d,
                styles.length == 0 ? EnumSet.noneOf(HeaderStyle.class) : EnumSet.copyOf(List.of(styles)),
                (name, value) -> assertThat(headers.put(name, value))
                        .as("header %s written once", name)
                        .isNull());
        // Whatever is written must parse as the draft's structured fields.
        if (headers.containsKey("RateLimit-Policy")) {
            RateLimitFields.parse(headers.get("RateLimit-Policy"), "q", "w");
            RateLimitFields.parse(headers.get("RateLimit"), "r", "t");
        }
        return headers;
    }

    private static Map<String, Map<String, Long>> policy(Decision d) {
        return RateLimitFields.parse(headers(d, HeaderStyle.IETF_DRAFT_09).get("RateLimit-Policy"), "q", "w");
    }

    private static Map<String, Map<String, Long>> current(Decision d) {
        return RateLimitFields.parse(headers(d, HeaderStyle.IETF_DRAFT_09).get("RateLimit"), "r", "t");
    }

    @Test
    void writesClassicHeadersForTheBindingWindow() {
        Guard guard =
                limiter.guard(Rule.builder("search").limits("5/1s", "100/1m").build());
        guard.acquire(RequestContext.empty());
        Decision d = guard.acquire(RequestContext.empty());
        assertThat(headers(d, HeaderStyle.X_RATELIMIT))
                .containsExactly(
                        Map.entry("X-RateLimit-Limit", "5"),
                        Map.entry("X-RateLimit-Remaining", "3"),
                        Map.entry("X-RateLimit-Reset", "1"));
    }

    @Test
    void writesIetfDraftFieldsWithOneItemPerWindow() {
        Guard guard =
                limiter.guard(Rule.builder("search").limits("5/1s", "100/1m").build());
        Decision d = guard.acquire(RequestContext.empty());
        assertThat(headers(d, HeaderStyle.IETF_DRAFT_09))
                .containsExactly(
                        Map.entry("RateLimit-Policy", "\"search-1s\";q=5;w=1, \"search-1m\";q=100;w=60"),
                        Map.entry("RateLimit", "\"search-1s\";r=4;t=1, \"search-1m\";r=99;t=1"));
    }

    @Test
    void writesAnHonestRetryAfterOnRejection() {
        Guard guard = limiter.guard(Rule.builder("login").limits("3/1m").build());
        for (int i = 0; i < 3; i++) {
            guard.acquire(RequestContext.empty());
        }
        clock.advance(Duration.ofSeconds(5));
        Decision d = guard.acquire(RequestContext.empty());
        // One token per 20 s; 5 s have passed.
        assertThat(headers(d, HeaderStyle.X_RATELIMIT, HeaderStyle.IETF_DRAFT_09))
                .containsEntry("Retry-After", "15")
                .containsEntry("X-RateLimit-Remaining", "0")
                .containsEntry("X-RateLimit-Reset", "15");
        assertThat(current(d)).containsExactly(Map.entry("login-1m", Map.of("r", 0L, "t", 15L)));
        clock.advance(Duration.ofSeconds(15));
        assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
    }

    @Test
    void slidingWindowsReportWhatTheyCountAndWhenTheyEmpty() {
        Guard log = limiter.guard(Rule.builder("log")
                .limits("3/1m")
                .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                .build());
        for (int i = 0; i < 3; i++) {
            log.acquire(RequestContext.empty());
            clock.advance(Duration.ofSeconds(10));
        }
        // Calls at 0, 10 and 20 s; now 30 s: the next one fits when the call at 0 leaves, in 30 s; the window is
        // empty when the call at 20 s leaves, in 50 s.
        Decision rejected = log.acquire(RequestContext.empty());
        assertThat(headers(rejected, HeaderStyle.X_RATELIMIT, HeaderStyle.IETF_DRAFT_09))
                .containsEntry("Retry-After", "30")
                .containsEntry("X-RateLimit-Remaining", "0")
                .containsEntry("RateLimit-Policy", "\"log-1m\";q=3;w=60");
        assertThat(current(rejected)).containsExactly(Map.entry("log-1m", Map.of("r", 0L, "t", 30L)));
        clock.advance(Duration.ofSeconds(30));
        Decision next = log.acquire(RequestContext.empty());
        assertThat(next.outcome()).isEqualTo(Outcome.ALLOWED);
        assertThat(current(next)).containsExactly(Map.entry("log-1m", Map.of("r", 0L, "t", 60L)));

        Guard counter = limiter.guard(Rule.builder("counter")
                .limits("10/1s")
                .algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
                .build());
        clock.advance(Duration.ofMillis(1_000 - clock.currentTimeNanos() / 1_000_000 % 1_000)); // a whole second
        for (int i = 0; i < 4; i++) {
            counter.acquire(RequestContext.empty());
        }
        clock.advance(Duration.ofMillis(1_500)); // the 4 weigh 2 half-way through the next second
        assertThat(current(counter.acquire(RequestContext.empty())))
                .containsExactly(Map.entry("counter-1s", Map.of("r", 7L, "t", 2L)));
    }

    @Test
    void writesOnlyRetryAfterWhenNoBucketWasConsulted() {
        Guard guard =
                limiter.guard(Rule.builder("me").key("user").limits("3/1m").build());
        assertThat(headers(guard.acquire(RequestContext.empty()), HeaderStyle.values()))
                .containsExactly(Map.entry("Retry-After", "1"));
    }

    @Test
    void reportsTwoDecisionsOnOneCallTogether() {
        Decision url =
                limiter.guard(Rule.builder("site").limits("50/1s").build()).acquire(RequestContext.empty());
        Decision method =
                limiter.guard(Rule.builder("hello").limits("5/1s").build()).acquire(RequestContext.empty());
        Decision both = url.combine(method);
        assertThat(both.verdicts()).extracting(Verdict::rule).containsExactly("site", "hello");
        assertThat(headers(both, HeaderStyle.X_RATELIMIT)).containsEntry("X-RateLimit-Limit", "5");
        assertThat(url.combine(Decision.unlimited())).isSameAs(url);
    }

    @Test
    void writesNothingForAnUnlimitedCall() {
        assertThat(headers(Decision.unlimited(), HeaderStyle.values())).isEmpty();
    }

    @Test
    void roundsRetryAfterUpToWholeSecondsAndAtLeastOne() {
        Verdict v = new Verdict("r", "k", Mode.HARD, Outcome.REJECTED, Basis.BUCKET, List.of(), 1);
        assertThat(RateLimitHeaders.retryAfterSeconds(new Decision(Outcome.REJECTED, List.of(v), 0, 1)))
                .isEqualTo(1);
        assertThat(RateLimitHeaders.retryAfterSeconds(new Decision(Outcome.REJECTED, List.of(v), 0, 1_000_000_001L)))
                .isEqualTo(2);
        assertThat(RateLimitHeaders.retryAfterSeconds(new Decision(Outcome.REJECTED, List.of(v), 0, 0)))
                .isEqualTo(1);
    }

    @Test
    void onARejectionTheBindingItemsResetIsTheRetryAfter() {
        Guard guard =
                limiter.guard(Rule.builder("search").limits("5/1s", "100/1m").build());
        for (int i = 0; i < 5; i++) {
            guard.acquire(RequestContext.empty());
        }
        Decision d = guard.acquire(RequestContext.empty());
        assertThat(d.outcome()).isEqualTo(Outcome.REJECTED);
        // One token per 200 ms for the 1 s window; the 1 m window, 5 short, is full again in 3 s.
        assertThat(headers(d, HeaderStyle.values()))
                .containsEntry("Retry-After", "1")
                .containsEntry("X-RateLimit-Reset", "1");
        assertThat(current(d))
                .containsExactly(
                        Map.entry("search-1s", Map.of("r", 0L, "t", 1L)),
                        Map.entry("search-1m", Map.of("r", 95L, "t", 3L)));
    }

    @Test
    void advertisesABurstWithTheWindowThatRefillsIt() {
        Guard guard =
                limiter.guard(Rule.builder("bursty").limits("5/1s burst=20").build());
        Decision d = guard.acquire(RequestContext.empty());
        // 20 at once, refilled at 5 per second in 4 s: the quota holds the 19 left, at the rule's rate.
        assertThat(policy(d)).containsExactly(Map.entry("bursty-1s", Map.of("q", 20L, "w", 4L)));
        assertThat(current(d)).containsExactly(Map.entry("bursty-1s", Map.of("r", 19L, "t", 1L)));
        assertThat(headers(d, HeaderStyle.X_RATELIMIT))
                .containsEntry("X-RateLimit-Limit", "20")
                .containsEntry("X-RateLimit-Remaining", "19");
        // 7 refill in 1.4 s: 2 s hold 10 at 5 per second.
        Decision odd = limiter.guard(
                        Rule.builder("odd-burst").limits("5/1s burst=7").build())
                .acquire(RequestContext.empty());
        assertThat(policy(odd)).containsExactly(Map.entry("odd-burst-1s", Map.of("q", 10L, "w", 2L)));
        assertThat(headers(odd, HeaderStyle.X_RATELIMIT)).containsEntry("X-RateLimit-Limit", "10");
        // A leaky bucket (one at a time, 200 ms apart) still advertises its rate.
        Decision leaky = limiter.guard(
                        Rule.builder("leaky").limits("5/1s burst=1").build())
                .acquire(RequestContext.empty());
        assertThat(policy(leaky)).containsExactly(Map.entry("leaky-1s", Map.of("q", 5L, "w", 1L)));
        assertThat(current(leaky)).containsExactly(Map.entry("leaky-1s", Map.of("r", 0L, "t", 1L)));
        assertThat(headers(leaky, HeaderStyle.X_RATELIMIT)).containsEntry("X-RateLimit-Limit", "5");
    }

    @Test
    void advertisesPeriodsThatAreNotWholeSecondsAtTheirRealRate() {
        Decision halfSecond =
                limiter.guard(Rule.builder("fast").limits("2/500ms").build()).acquire(RequestContext.empty());
        assertThat(policy(halfSecond)).containsExactly(Map.entry("fast-500ms", Map.of("q", 4L, "w", 1L)));
        assertThat(headers(halfSecond, HeaderStyle.X_RATELIMIT))
                .as("the quota the policy states")
                .containsEntry("X-RateLimit-Limit", "4")
                .containsEntry("X-RateLimit-Remaining", "1");
        Decision odd =
                limiter.guard(Rule.builder("odd").limits("10/1500ms").build()).acquire(RequestContext.empty());
        // 10 per 1.5 s is 13.3 per 2 s: a client sending 13 every 2 s is never refused.
        assertThat(policy(odd)).containsExactly(Map.entry("odd-1500ms", Map.of("q", 13L, "w", 2L)));
        Decision slow =
                limiter.guard(Rule.builder("slow").limits("3/1h").build()).acquire(RequestContext.empty());
        assertThat(policy(slow)).containsExactly(Map.entry("slow-1h", Map.of("q", 3L, "w", 3600L)));
    }

    @Test
    void shadowRulesStayOutOfTheHeaders() {
        Guard guard = limiter.guard(
                Rule.builder("trial").limits("1/1m").mode(Mode.SHADOW).build(),
                Rule.builder("enforced").limits("100/1m").build());
        guard.acquire(RequestContext.empty());
        Decision d = guard.acquire(RequestContext.empty());
        assertThat(d.verdicts()).extracting(Verdict::outcome).containsExactly(Outcome.SHADOW_REJECTED, Outcome.ALLOWED);
        assertThat(headers(d, HeaderStyle.values()))
                .containsEntry("X-RateLimit-Remaining", "98")
                .containsEntry("X-RateLimit-Limit", "100")
                .doesNotContainKey("Retry-After");
        assertThat(policy(d)).containsOnlyKeys("enforced-1m");
        assertThat(current(d)).containsOnlyKeys("enforced-1m");

        Guard onlyShadow = limiter.guard(
                Rule.builder("trial-only").limits("1/1m").mode(Mode.SHADOW).build());
        onlyShadow.acquire(RequestContext.empty());
        assertThat(headers(onlyShadow.acquire(RequestContext.empty()), HeaderStyle.values()))
                .isEmpty();
    }
}
