package io.github.ratelimit.redis;

import static io.github.ratelimit.redis.JedisBucketStore.BreakerState.CLOSED;
import static io.github.ratelimit.redis.JedisBucketStore.BreakerState.HALF_OPEN;
import static io.github.ratelimit.redis.JedisBucketStore.BreakerState.OPEN;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class CircuitBreakerTest {

    private static final long MS = 1_000_000L;

    private final AtomicLong now = new AtomicLong(1_000 * MS);
    private final CircuitBreaker breaker = new CircuitBreaker(5, 250 * MS, 1_000 * MS, now::get);

    private void fail(int times) {
        for (int i = 0; i < times; i++) {
            breaker.onFailure(breaker.tryAcquire());
        }
    }

    @Test
    void staysClosedWhenOneStallFailsEveryCallInFlightAtOnce() {
        long epoch = breaker.tryAcquire();
        for (int i = 0; i < 8; i++) {
            breaker.onFailure(epoch); // eight calls time out together
        }
        assertThat(breaker.state()).isEqualTo(CLOSED);
        now.addAndGet(60 * MS);
        breaker.onSuccess(breaker.tryAcquire());
        assertThat(breaker.consecutiveFailures()).isZero();
    }

    @Test
    void opensWhenFailuresKeepComingForTheMinimumStreak() {
        fail(5);
        assertThat(breaker.state()).isEqualTo(CLOSED);
        now.addAndGet(249 * MS);
        fail(1);
        assertThat(breaker.state()).isEqualTo(CLOSED);
        now.addAndGet(1 * MS);
        fail(1);
        assertThat(breaker.state()).isEqualTo(OPEN);
        assertThat(breaker.tryAcquire()).isEqualTo(CircuitBreaker.REFUSED);
    }

    @Test
    void letsOneProbeThroughAfterTheOpenPeriodAndClosesOnItsSuccess() {
        fail(5);
        now.addAndGet(250 * MS);
        fail(1);
        now.addAndGet(999 * MS);
        assertThat(breaker.tryAcquire()).isEqualTo(CircuitBreaker.REFUSED);
        now.addAndGet(1 * MS);
        long probe = breaker.tryAcquire();
        assertThat(probe).isNotEqualTo(CircuitBreaker.REFUSED);
        assertThat(breaker.state()).isEqualTo(HALF_OPEN);
        assertThat(breaker.tryAcquire()).as("one probe at a time").isEqualTo(CircuitBreaker.REFUSED);
        breaker.onSuccess(probe);
        assertThat(breaker.state()).isEqualTo(CLOSED);
    }

    @Test
    void reopensWhenTheProbeFails() {
        fail(5);
        now.addAndGet(250 * MS);
        fail(1);
        now.addAndGet(1_000 * MS);
        long probe = breaker.tryAcquire();
        breaker.onFailure(probe);
        assertThat(breaker.state()).isEqualTo(OPEN);
        assertThat(breaker.tryAcquire()).isEqualTo(CircuitBreaker.REFUSED);
    }

    @Test
    void ignoresLateReportsFromCallsThatStartedBeforeTheStateChanged() {
        long before = breaker.tryAcquire(); // a slow call starts
        fail(5);
        now.addAndGet(250 * MS);
        fail(1);
        assertThat(breaker.state()).isEqualTo(OPEN);
        breaker.onSuccess(before); // ...and returns late
        assertThat(breaker.state()).as("a stale success does not close it").isEqualTo(OPEN);

        now.addAndGet(1_000 * MS);
        long probe = breaker.tryAcquire();
        breaker.onSuccess(probe);
        breaker.onFailure(before); // a stale failure does not count against the new epoch
        assertThat(breaker.state()).isEqualTo(CLOSED);
        assertThat(breaker.consecutiveFailures()).isZero();
    }

    @Test
    void replacesAProbeThatNeverReports() {
        fail(5);
        now.addAndGet(250 * MS);
        fail(1);
        now.addAndGet(1_000 * MS);
        breaker.tryAcquire(); // the probe is lost
        now.addAndGet(1_000 * MS);
        long next = breaker.tryAcquire();
        assertThat(next).isNotEqualTo(CircuitBreaker.REFUSED);
        breaker.onSuccess(next);
        assertThat(breaker.state()).isEqualTo(CLOSED);
    }

    @Test
    void saysWithoutChangingAnythingWhetherACallWouldBeRefused() {
        assertThat(breaker.refusesNow()).isFalse();
        fail(5);
        now.addAndGet(250 * MS);
        fail(1);
        assertThat(breaker.state()).isEqualTo(OPEN);
        assertThat(breaker.refusesNow()).isTrue();
        now.addAndGet(1_000 * MS);
        // Time for a probe: the check lets the call on, and only tryAcquire starts the probe.
        assertThat(breaker.refusesNow()).isFalse();
        assertThat(breaker.state()).isEqualTo(OPEN);
        assertThat(breaker.tryAcquire()).isNotEqualTo(CircuitBreaker.REFUSED);
        assertThat(breaker.state()).isEqualTo(HALF_OPEN);
        assertThat(breaker.refusesNow())
                .as("other calls while the probe is out")
                .isTrue();
    }
}
