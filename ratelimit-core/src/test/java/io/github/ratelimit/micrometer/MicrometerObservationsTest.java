package io.github.ratelimit.micrometer;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.testing.ManualClock;
import io.micrometer.observation.tck.TestObservationRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A plain-Java application observes its decisions through the public API alone: {@code MicrometerObservations.of}
 * handed to {@code RateLimiter.builder().observer}, recorded by Micrometer's own test registry.
 */
class MicrometerObservationsTest {

    private static RequestContext user(String name) {
        return RequestContext.builder().principal(name).build();
    }

    @Test
    void aLimiterBuiltWithItMakesEachObservedDecisionAnObservationOfTheRegistry() {
        TestObservationRegistry registry = TestObservationRegistry.create();
        try (RateLimiter limiter = RateLimiter.builder()
                .observer(MicrometerObservations.of(registry))
                .build()) {
            Guard guard =
                    limiter.guard(Rule.builder("api").key("user").limits("1/1h").build());
            assertThat(guard.acquire(user("alice")).permitted()).isTrue();
            assertThat(registry)
                    .as("allowed at once by a local bucket: not observed")
                    .doesNotHaveAnyObservation();

            assertThat(guard.acquire(user("alice")).permitted()).isFalse();
            assertThat(registry)
                    .hasNumberOfObservationsEqualTo(1)
                    .hasSingleObservationThat()
                    .hasNameEqualTo(MicrometerObservations.NAME)
                    .hasContextualNameEqualTo("ratelimit.decision")
                    .hasLowCardinalityKeyValue("rule", "api")
                    // Set as the observation stops: the decision's end was observed.
                    .hasLowCardinalityKeyValue("outcome", "rejected")
                    .hasLowCardinalityKeyValue("basis", "bucket")
                    .doesNotHaveHighCardinalityKeyValueWithKey("key");
        }
    }

    @Test
    void aSoftWaitIsObservedUntilTheCallMayGoOn() {
        TestObservationRegistry registry = TestObservationRegistry.create();
        ManualClock clock = new ManualClock();
        try (RateLimiter limiter = RateLimiter.builder()
                .timeMeter(clock)
                .waiter(clock)
                .observer(MicrometerObservations.of(registry))
                .build()) {
            Guard guard = limiter.guard(Rule.builder("soft")
                    .key("user")
                    .limits("1/1m")
                    .mode(Mode.SOFT)
                    .maxDelay(Duration.ofMinutes(2))
                    .build());
            guard.acquire(user("bob"));
            Decision delayed = guard.acquire(user("bob"));
            assertThat(delayed.outcome()).isEqualTo(Decision.Outcome.DELAYED);
            assertThat(registry).hasSingleObservationThat().hasLowCardinalityKeyValue("outcome", "delayed");
        }
    }

    @Test
    void refusesNoRegistry() {
        assertThatNullPointerException().isThrownBy(() -> MicrometerObservations.of(null));
    }
}
