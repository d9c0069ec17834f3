package io.github.ratelimit;

import io.github.ratelimit.testing.ManualClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitHeadersTest {

    private final ManualClock clock = new ManualClock();
    private final RateLimiter limiter = RateLimiter.builder().timeMeter(clock).waiter(clock).build();

    private static Map<String, String> headers(Decision d, HeaderStyle... styles) {
        Map<String, String> headers = new LinkedHashMap<>();
        RateLimitHeaders.write(d, styles.length == 0 ? EnumSet.noneOf(HeaderStyle.class) : EnumSet.copyOf(List.of(styles)),
                (name, value) -> assertThat(headers.put(name, value)).as("header %s written once", name).isNull());
        return headers;
    }

    @Test
    void writesClassicHeadersForTheBindingWindow() {
        Guard guard = limiter.guard(Rule.builder("search").limits("5/1s", "100/1m").build());
        guard.acquire(RequestContext.empty());
        Decision d = guard.acquire(RequestContext.empty());
        assertThat(headers(d, HeaderStyle.X_RATELIMIT)).containsExactly(
                Map.entry("X-RateLimit-Limit", "5"),
                Map.entry("X-RateLimit-Remaining", "3"),
                Map.entry("X-RateLimit-Reset", "1"));
    }

    @Test
    void writesIetfDraftFieldsWithOneItemPerWindow() {
        Guard guard = limiter.guard(Rule.builder("search").limits("5/1s", "100/1m").build());
        Decision d = guard.acquire(RequestContext.empty());
        assertThat(headers(d, HeaderStyle.IETF_DRAFT_09)).containsExactly(
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
                .containsEntry("X-RateLimit-Reset", "55");
        clock.advance(Duration.ofSeconds(15));
        assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
    }

    @Test
    void writesOnlyRetryAfterWhenNoBucketWasConsulted() {
        Guard guard = limiter.guard(Rule.builder("me").key("user").limits("3/1m").build());
        assertThat(headers(guard.acquire(RequestContext.empty()), HeaderStyle.values()))
                .containsExactly(Map.entry("Retry-After", "1"));
    }

    @Test
    void reportsTwoDecisionsOnOneCallTogether() {
        Decision url = limiter.guard(Rule.builder("site").limits("50/1s").build()).acquire(RequestContext.empty());
        Decision method = limiter.guard(Rule.builder("hello").limits("5/1s").build()).acquire(RequestContext.empty());
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
        assertThat(RateLimitHeaders.retryAfterSeconds(new Decision(Outcome.REJECTED, List.of(v), 0, 1))).isEqualTo(1);
        assertThat(RateLimitHeaders.retryAfterSeconds(new Decision(Outcome.REJECTED, List.of(v), 0, 1_000_000_001L))).isEqualTo(2);
        assertThat(RateLimitHeaders.retryAfterSeconds(new Decision(Outcome.REJECTED, List.of(v), 0, 0))).isEqualTo(1);
    }
}
