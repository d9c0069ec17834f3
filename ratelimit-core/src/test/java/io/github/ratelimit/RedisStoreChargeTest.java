package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard.Settlement;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServer;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class RedisStoreChargeTest extends ChargeContract {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private final String prefix = "test-" + UUID.randomUUID();

    @Override
    protected BucketStore newStore(ManualClock clock) {
        return store(redis.uri().toString(), Duration.ofSeconds(5));
    }

    private BucketStore store(String url, Duration timeout) {
        return JedisBucketStore.builder()
                .url(url)
                .keyPrefix(prefix)
                .commandTimeout(timeout)
                .timeMeter(clock)
                .build();
    }

    /** Debt made through one instance is owed on the other: the charge is in Redis, not in either JVM. */
    @Test
    void debtMadeThroughOneInstanceIsSeenByAnother() {
        Guard first = limiter(newStore(clock)).guard(completions(Algorithm.TOKEN_BUCKET));
        Guard second = limiter(newStore(clock)).guard(completions(Algorithm.TOKEN_BUCKET));
        Decision d = first.acquire(ALICE);
        first.settle(d, 1200);
        Decision other = second.acquire(ALICE);
        assertThat(other.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(other.retryAfterNanos()).isEqualTo(Duration.ofMillis(12_060).toNanos());
        // Huge charges through both instances still leave at most a day of refill owed.
        first.settle(d, Long.MAX_VALUE);
        second.settle(d, Long.MAX_VALUE);
        assertThat(second.acquire(ALICE).retryAfterNanos())
                .isEqualTo(Duration.ofDays(1).plusMillis(60).toNanos());
    }

    /**
     * A paused Redis at settle time: the charge is not tried again, counted as lost, never thrown into the finished
     * call, and settling does not wait past the command timeout. The write sent before the timeout may still land
     * when Redis wakes (it then finds the state it expected): the call is charged its estimate or what it used, never
     * twice.
     */
    @Test
    void aPausedStoreLosesTheChargeWithoutThrowing() throws Exception {
        try (RedisServer own = RedisServer.start()) {
            Guard guard = limiter(store(own.uri().toString(), Duration.ofMillis(200)))
                    .guard(completions(Algorithm.TOKEN_BUCKET));
            Decision d = guard.acquire(ALICE);
            assertThat(d.outcome()).isEqualTo(Outcome.ALLOWED);
            own.pause();
            long started = System.nanoTime();
            try {
                guard.settle(d, 900);
            } finally {
                own.resume();
            }
            assertThat(System.nanoTime() - started)
                    .isLessThan(Duration.ofSeconds(2).toNanos());
            assertThat(settlements).containsExactly(Settlement.LOST);
            // Once Redis answers again (the breaker closes): the estimate, or what the call used, and no more.
            AtomicReference<Decision> fromRedis = new AtomicReference<>();
            await().atMost(Duration.ofSeconds(20)).until(() -> {
                Decision next = guard.acquire(ALICE);
                fromRedis.set(next);
                return next.verdicts().get(0).basis() == Basis.BUCKET;
            });
            assertThat(remaining(fromRedis.get())).isIn(998L, 1000L - 900 - 1);
        }
    }
}
