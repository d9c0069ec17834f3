package io.github.ratelimit.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.bucket4j.BucketConfiguration;
import io.github.ratelimit.Algorithm;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Limit;
import io.github.ratelimit.testing.ManualClock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class LocalBucketStoreTest {

    private final ManualClock clock = new ManualClock();
    private final BucketConfiguration fivePerSecond =
            BucketConfigurations.of(List.of(Limit.parse("5/1s")), Algorithm.TOKEN_BUCKET);

    @Test
    void staysBoundedUnderAMillionDistinctKeys() {
        LocalBucketStore store = LocalBucketStore.builder()
                .maximumKeys(10_000)
                .timeMeter(clock)
                .executor(Runnable::run)
                .build();
        for (int i = 0; i < 1_000_000; i++) {
            store.bucketFor(new BucketStore.Key("flood", "key-" + i), fivePerSecond)
                    .consume(1);
        }
        store.cleanUp();
        assertThat(store.size()).isLessThanOrEqualTo(10_000);
        // The most recent keys are still tracked.
        assertThat(store.bucketFor(new BucketStore.Key("flood", "key-999999"), fivePerSecond)
                        .availableTokens())
                .isEqualTo(4);
    }

    @Test
    void returnsTheSameBucketForTheSameKey() {
        LocalBucketStore store = LocalBucketStore.builder().timeMeter(clock).build();
        LocalBucketStore.LocalBucket a = store.bucketFor(new BucketStore.Key("r", "k"), fivePerSecond);
        a.consume(5);
        assertThat(store.bucketFor(new BucketStore.Key("r", "k"), fivePerSecond).availableTokens())
                .isZero();
        assertThat(store.bucketFor(new BucketStore.Key("r", "other"), fivePerSecond)
                        .availableTokens())
                .isEqualTo(5);
        assertThat(store.bucketFor(new BucketStore.Key("other-rule", "k"), fivePerSecond)
                        .availableTokens())
                .isEqualTo(5);
    }

    @Test
    void dropsAnIdleBucketOnlyOnceItWouldBeFullAgain() {
        LocalBucketStore store = LocalBucketStore.builder()
                .timeMeter(clock)
                .executor(Runnable::run)
                .build();
        BucketConfiguration perMinute = BucketConfigurations.of(List.of(Limit.parse("60/1m")), Algorithm.TOKEN_BUCKET);
        store.bucketFor(new BucketStore.Key("r", "k"), perMinute).consume(60);
        clock.advance(Duration.ofSeconds(30));
        store.cleanUp();
        assertThat(store.size()).isEqualTo(1);
        assertThat(store.bucketFor(new BucketStore.Key("r", "k"), perMinute).availableTokens())
                .isEqualTo(30);
        clock.advance(Duration.ofSeconds(121));
        store.cleanUp();
        assertThat(store.size()).isZero();
    }

    @Test
    void keepsABucketThatOwesTokensUntilTheDebtIsRepaid() {
        LocalBucketStore store = LocalBucketStore.builder()
                .timeMeter(clock)
                .executor(Runnable::run)
                .build();
        try (io.github.ratelimit.RateLimiter limiter = io.github.ratelimit.RateLimiter.builder()
                .store(store)
                .timeMeter(clock)
                .waiter(clock)
                .build()) {
            io.github.ratelimit.Guard guard = limiter.guard(io.github.ratelimit.Rule.builder("soft")
                    .limits("1/1s")
                    .mode(io.github.ratelimit.Mode.SOFT)
                    .maxDelay(Duration.ofSeconds(20))
                    .build());
            for (int i = 0; i < 10; i++) {
                guard.acquireAsync(io.github.ratelimit.RequestContext.empty()); // nine reserved ahead: 9 s of debt
            }
            clock.advance(Duration.ofSeconds(3));
            store.cleanUp();
            io.github.ratelimit.Decision next = guard.acquire(io.github.ratelimit.RequestContext.empty());
            assertThat(next.outcome()).isEqualTo(io.github.ratelimit.Decision.Outcome.DELAYED);
            assertThat(next.delayNanos()).isEqualTo(Duration.ofSeconds(7).toNanos());
            // That call waited its 7 s; the bucket is full a second later, and then it may go (Caffeine's timer
            // wheel expires within about a second of the due time).
            store.cleanUp();
            assertThat(store.size()).isEqualTo(1);
            clock.advance(Duration.ofSeconds(3));
            store.cleanUp();
            assertThat(store.size()).isZero();
        }
    }

    @Test
    void replacesTheConfigurationOfAnExistingBucket() {
        LocalBucketStore store = LocalBucketStore.builder().timeMeter(clock).build();
        store.bucketFor(new BucketStore.Key("r", "k"), fivePerSecond).consume(2);
        BucketConfiguration tenPerSecond =
                BucketConfigurations.of(List.of(Limit.parse("10/1s")), Algorithm.TOKEN_BUCKET);
        LocalBucketStore.LocalBucket bucket = store.bucketFor(new BucketStore.Key("r", "k"), tenPerSecond);
        assertThat(bucket.availableTokens()).isEqualTo(8);
        // An equal configuration built anew is not a change.
        BucketConfiguration again = BucketConfigurations.of(List.of(Limit.parse("10/1s")), Algorithm.TOKEN_BUCKET);
        assertThat(store.bucketFor(new BucketStore.Key("r", "k"), again).availableTokens())
                .isEqualTo(8);
    }

    @Test
    void rejectsANonPositiveMaximum() {
        assertThatThrownBy(() -> LocalBucketStore.builder().maximumKeys(0))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage("local store: maximumKeys must be at least 1, but was 0. Set the most buckets to keep in "
                        + "memory, e.g. 100000.");
    }
}
