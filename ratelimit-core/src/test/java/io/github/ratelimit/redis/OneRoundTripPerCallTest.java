package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.util.UUID;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A call that meets several rules on Redis sends their scripts in one pipeline: one round trip per call, not per
 * rule, whatever the algorithm; a rule that rejects it costs one more, to give the others their tokens back.
 */
class OneRoundTripPerCallTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
    void threeRulesShareOneRoundTrip(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        try (JedisBucketStore store = JedisBucketStore.builder()
                        .url(redis.uri())
                        .keyPrefix("p" + UUID.randomUUID().toString().substring(0, 8))
                        .timeMeter(clock)
                        .build();
                RateLimiter limiter = RateLimiter.builder()
                        .store(store)
                        .timeMeter(clock)
                        .waiter(clock)
                        .build()) {
            Guard guard = limiter.guard(
                    Rule.builder("site")
                            .key("user")
                            .limits("100/1m")
                            .algorithm(algorithm)
                            .build(),
                    Rule.builder("api")
                            .key("user")
                            .limits("50/1m")
                            .algorithm(algorithm)
                            .build(),
                    Rule.builder("hello")
                            .key("user")
                            .limits("5/1m")
                            .algorithm(algorithm)
                            .build());
            RequestContext alice = RequestContext.builder().principal("alice").build();
            JedisBucketStore.Stats before = store.stats();
            for (int i = 0; i < 5; i++) {
                assertThat(guard.acquire(alice).permitted()).isTrue();
            }
            JedisBucketStore.Stats after = store.stats();
            assertThat(after.roundTrips() - before.roundTrips()).as("scripts").isEqualTo(15);
            assertThat(after.pipelines() - before.pipelines()).as("round trips").isEqualTo(5);

            Decision rejected = guard.acquire(alice);
            assertThat(rejected.outcome()).isEqualTo(Outcome.REJECTED);
            JedisBucketStore.Stats last = store.stats();
            assertThat(last.pipelines() - after.pipelines())
                    .as("round trips of a rejected call: the decision, then " + "the two refunds")
                    .isEqualTo(3);
            // Neither of the other rules kept the rejected call's token.
            assertThat(limiter.guard(Rule.builder("api")
                                    .key("user")
                                    .limits("50/1m")
                                    .algorithm(algorithm)
                                    .build())
                            .acquire(alice)
                            .verdicts()
                            .get(0)
                            .windows()
                            .get(0)
                            .remaining())
                    .isEqualTo(44);
        }
    }

    /** A concurrency rule's take travels with the other rules' scripts; its give-back, after the call, is one more. */
    @org.junit.jupiter.api.Test
    void aConcurrencyRuleTakesItsSlotInTheSameRoundTrip() {
        ManualClock clock = new ManualClock();
        try (JedisBucketStore store = JedisBucketStore.builder()
                        .url(redis.uri())
                        .keyPrefix("p" + UUID.randomUUID().toString().substring(0, 8))
                        .timeMeter(clock)
                        .build();
                RateLimiter limiter = RateLimiter.builder()
                        .store(store)
                        .timeMeter(clock)
                        .waiter(clock)
                        .build()) {
            Guard guard = limiter.guard(
                    Rule.builder("site").key("user").limits("100/1m").build(),
                    Rule.builder("slow").key("user").concurrency(2).build());
            RequestContext alice = RequestContext.builder().principal("alice").build();
            JedisBucketStore.Stats before = store.stats();
            Decision d = guard.acquire(alice);
            assertThat(d.permitted()).isTrue();
            JedisBucketStore.Stats decided = store.stats();
            assertThat(decided.roundTrips() - before.roundTrips()).as("scripts").isEqualTo(2);
            assertThat(decided.pipelines() - before.pipelines())
                    .as("round trips")
                    .isEqualTo(1);
            guard.completed(d, false, 200);
            assertThat(store.stats().pipelines() - decided.pipelines())
                    .as("the give-back")
                    .isEqualTo(1);
        }
    }
}
