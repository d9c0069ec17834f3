package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.testing.ManualClock;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A call another layer refused after a guard let it through gets every token back. */
class RefundTest {

    private final ManualClock clock = new ManualClock();
    private final RateLimiter limiter =
            RateLimiter.builder().timeMeter(clock).waiter(clock).build();

    @AfterEach
    void close() {
        limiter.close();
    }

    @Test
    void aRefundedCallCostsEveryRuleNothing() {
        Guard guard = limiter.guard(
                Rule.builder("per-ip").key("ip").limits("3/1h").build(),
                Rule.builder("global").limits("5/1h").build());
        RequestContext client =
                RequestContext.builder().remoteAddress("203.0.113.7").build();
        for (int i = 0; i < 20; i++) {
            Decision d = guard.acquire(client);
            assertThat(d.permitted()).as("refunded call %d", i).isTrue();
            guard.refund(d);
        }
        for (int i = 0; i < 3; i++) {
            assertThat(guard.acquire(client).permitted()).isTrue();
        }
        Decision fourth = guard.acquire(client);
        assertThat(fourth.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(fourth.binding().rule()).isEqualTo("per-ip");
        // The rejected call took nothing, so refunding it returns nothing: the global rule still has 2.
        guard.refund(fourth);
        Guard global = limiter.guard(Rule.builder("global").limits("5/1h").build());
        assertThat(global.acquire(RequestContext.empty()).permitted()).isTrue();
        assertThat(global.acquire(RequestContext.empty()).permitted()).isTrue();
        assertThat(global.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.REJECTED);
    }

    @Test
    void aDelayedCallsReservationIsReturned() {
        Guard guard = limiter.guard(Rule.builder("soft")
                .limits("1/1s")
                .mode(Mode.SOFT)
                .maxDelay(Duration.ofSeconds(10))
                .build());
        assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
        var second = guard.acquireAsync(RequestContext.empty());
        assertThat(second).as("waits out its reservation of the next second").isNotDone();
        clock.advance(Duration.ofSeconds(1));
        Decision delayed = second.join();
        assertThat(delayed.outcome()).isEqualTo(Outcome.DELAYED);
        guard.refund(delayed);
        assertThat(guard.acquireAsync(RequestContext.empty()).getNow(null))
                .as("the refunded reservation lets the next call go at once")
                .isNotNull()
                .extracting(Decision::outcome)
                .isEqualTo(Outcome.ALLOWED);
    }
}
