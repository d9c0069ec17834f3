package io.github.ratelimit.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.bucket.AllowedVerdict;
import io.github.ratelimit.testing.ManualClock;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A call one rule decides and a local bucket allows at once takes the path with no bookkeeping
 * ({@link DefaultRateLimiter#decideAlone}); its decision must be the general path's, value for value. Two limiters
 * on one manual clock make the same calls: one takes the short path, the other cannot (an exempt range, which no
 * caller is in, sends every call down the general path). Each has a clock of its own, moved alike (a SOFT call's wait
 * moves its limiter's clock, by the same delay on both when the decisions agree).
 */
class DecideAloneTest {

    static Stream<Arguments> rules() {
        return Stream.of(
                Arguments.of(Algorithm.TOKEN_BUCKET, Mode.HARD, new String[] {"5/1s"}),
                Arguments.of(Algorithm.TOKEN_BUCKET, Mode.HARD, new String[] {"3/1s", "10/1m burst=12"}),
                Arguments.of(Algorithm.TOKEN_BUCKET, Mode.SHADOW, new String[] {"4/1s", "20/1m"}),
                Arguments.of(Algorithm.TOKEN_BUCKET, Mode.SOFT, new String[] {"4/1s"}),
                Arguments.of(Algorithm.FIXED_WINDOW, Mode.HARD, new String[] {"5/1s", "30/1m"}),
                Arguments.of(Algorithm.LEAKY_BUCKET, Mode.HARD, new String[] {"5/1s"}));
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("rules")
    void givesTheGeneralPathsDecisionValueForValue(Algorithm algorithm, Mode mode, String[] limits) {
        ManualClock clock = new ManualClock();
        ManualClock generalClock = new ManualClock();
        try (RateLimiter alone =
                        RateLimiter.builder().timeMeter(clock).waiter(clock).build();
                RateLimiter general = RateLimiter.builder()
                        .timeMeter(generalClock)
                        .waiter(generalClock)
                        .exempt(List.of("198.51.100.0/24"))
                        .build()) {
            Rule.Builder rule = Rule.builder("api")
                    .key("ip")
                    .limits(limits)
                    .algorithm(algorithm)
                    .mode(mode);
            if (mode == Mode.SOFT) {
                rule.maxDelay(Duration.ofMillis(1));
            }
            Guard fast = alone.guard(rule.build());
            Guard slow = general.guard(rule.build());
            Random random = new Random(7);
            int allowed = 0;
            int other = 0;
            for (int i = 0; i < 400; i++) {
                RequestContext call = RequestContext.builder()
                        .remoteAddress("203.0.113." + random.nextInt(3))
                        .build();
                Decision a = fast.acquire(call);
                Decision b = slow.acquire(call);
                assertThat(a).as("call %d", i).isEqualTo(b);
                assertThat(a.verdicts()).as("call %d", i).isEqualTo(b.verdicts());
                assertThat(a).hasToString(b.toString()).hasSameHashCodeAs(b);
                if (a.outcome() == Decision.Outcome.ALLOWED) {
                    assertThat(a.verdicts()).as("the short path's list").isInstanceOf(AllowedVerdict.class);
                    assertThat(b.verdicts()).as("the general path's list").isNotInstanceOf(AllowedVerdict.class);
                    allowed++;
                } else {
                    other++;
                }
                assertThat(clock.currentTimeNanos()).isEqualTo(generalClock.currentTimeNanos());
                Duration step = Duration.ofMillis(random.nextInt(10) == 0 ? 180 : 7);
                clock.advance(step);
                generalClock.advance(step);
            }
            assertThat(allowed).as("calls allowed").isGreaterThan(20);
            assertThat(other).as("calls not allowed at once").isGreaterThan(20);
        }
    }

    /** A call the short path cannot decide goes on with the key it resolved: the resolver runs once per call. */
    @Test
    void resolvesTheKeyOncePerCallWhicheverPathDecides() {
        AtomicInteger resolutions = new AtomicInteger();
        ManualClock clock = new ManualClock();
        try (RateLimiter limiter = RateLimiter.builder()
                .timeMeter(clock)
                .waiter(clock)
                .keyResolver("tenant", context -> {
                    resolutions.incrementAndGet();
                    return context.header("X-Tenant");
                })
                .observer((rules, context) -> (decision, failure) -> {})
                .build()) {
            Guard guard = limiter.guard(
                    Rule.builder("api").key("tenant").limits("1/1m").build());
            RequestContext tenant =
                    RequestContext.builder().header("X-Tenant", "acme").build();
            RequestContext anonymous = RequestContext.builder().build();

            assertThat(guard.acquire(tenant).outcome()).isEqualTo(Decision.Outcome.ALLOWED);
            assertThat(guard.acquire(tenant).outcome()).isEqualTo(Decision.Outcome.REJECTED);
            assertThat(guard.acquireAsync(tenant).join().outcome()).isEqualTo(Decision.Outcome.REJECTED);
            assertThat(guard.acquire(anonymous).outcome())
                    .as("a missing key, rejected by default")
                    .isEqualTo(Decision.Outcome.REJECTED);

            assertThat(resolutions).as("resolver calls for four calls").hasValue(4);
        }
    }
}
