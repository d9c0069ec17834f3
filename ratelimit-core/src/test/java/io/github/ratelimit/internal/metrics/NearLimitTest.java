package io.github.ratelimit.internal.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.testing.ManualClock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/** {@code ratelimit.near.limit}: permitted calls that left their key with less than a share of a window. */
class NearLimitTest {

    private final ManualClock clock = new ManualClock();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private double nearLimit(String rule) {
        Counter counter =
                registry.find("ratelimit.near.limit").tag("rule", rule).counter();
        return counter == null ? 0 : counter.count();
    }

    private static void fire(Guard guard, String user, int times) {
        for (int i = 0; i < times; i++) {
            guard.acquire(RequestContext.builder().principal(user).build());
        }
    }

    @Test
    void countsPermittedCallsThatLeftLessThanTwentyPercentByDefault() {
        try (RateLimiter limiter = RateLimiter.builder()
                .timeMeter(clock)
                .listener(new MicrometerMetrics(registry))
                .build()) {
            Guard guard = limiter.guard(
                    Rule.builder("api").key("user").limits("10/1m").build());
            fire(guard, "alice", 8);
            assertThat(nearLimit("api")).as("2 of 10 left: not below 20 %").isZero();
            fire(guard, "alice", 1);
            assertThat(nearLimit("api")).as("1 of 10 left").isEqualTo(1);
            fire(guard, "alice", 1);
            assertThat(nearLimit("api")).as("none left").isEqualTo(2);
            fire(guard, "alice", 3);
            assertThat(nearLimit("api"))
                    .as("rejected calls are counted as rejected, not near the limit")
                    .isEqualTo(2);
            assertThat(registry.get("ratelimit.requests")
                            .tags("rule", "api", "outcome", "rejected")
                            .counter()
                            .count())
                    .isEqualTo(3);
        }
    }

    @Test
    void anyWindowNearItsLimitCountsOncePerCall() {
        try (RateLimiter limiter = RateLimiter.builder()
                .timeMeter(clock)
                .listener(new MicrometerMetrics(registry, 0.5))
                .build()) {
            Guard guard = limiter.guard(
                    Rule.builder("api").key("user").limits("100/1s", "4/1m").build());
            fire(guard, "bob", 2);
            assertThat(nearLimit("api"))
                    .as("2 of 4 a minute left: not below half")
                    .isZero();
            fire(guard, "bob", 1);
            assertThat(nearLimit("api"))
                    .as("1 of 4 a minute left, though 97 of 100 a second")
                    .isEqualTo(1);
        }
    }

    @Test
    void concurrencySlotsCountToo() {
        try (RateLimiter limiter = RateLimiter.builder()
                .timeMeter(clock)
                .listener(new MicrometerMetrics(registry))
                .build()) {
            Guard guard = limiter.guard(
                    Rule.builder("slow").key("user").concurrency(5).build());
            fire(guard, "carol", 4);
            assertThat(nearLimit("slow"))
                    .as("one slot of five left: 20 %, not below")
                    .isZero();
            fire(guard, "carol", 1);
            assertThat(nearLimit("slow")).as("every slot taken").isEqualTo(1);
        }
    }

    @Test
    void refusesAShareOutOfRange() {
        for (double share : new double[] {0, -0.1, 1.5, Double.NaN}) {
            assertThatThrownBy(() -> new MicrometerMetrics(registry, share))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("near-limit share must be above 0 and at most 1");
        }
    }
}
