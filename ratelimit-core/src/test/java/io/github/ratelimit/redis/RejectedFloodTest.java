package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A flood from a client already rejected costs Redis nothing: the store remembers until when Redis said the key
 * cannot pay, and answers before then itself, with the same Retry-After; it never admits what Redis would reject, and
 * forgets on a reset, a limit change or a refund. Counted in Redis's own {@code INFO commandstats}, on a real server.
 */
class RejectedFloodTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    /** Every command Redis ran, scripts' own commands included. */
    private static long commands() {
        return redis.server().commandCalls();
    }

    /** @return a store whose start-up commands (the key migration's look) are over, so they count in no flood */
    private static JedisBucketStore store(ManualClock clock) {
        JedisBucketStore store = JedisBucketStore.builder()
                .url(redis.uri())
                .keyPrefix("f" + UUID.randomUUID().toString().substring(0, 8))
                .timeMeter(clock)
                .build();
        org.awaitility.Awaitility.await().until(() -> store.keyMigration().finished());
        return store;
    }

    private static RequestContext user(String name) {
        return RequestContext.builder().principal(name).build();
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
    void aFloodFromARejectedClientCostsRedisNothingUntilItMayPayAgain(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        try (JedisBucketStore store = store(clock);
                RateLimiter limiter = RateLimiter.builder()
                        .store(store)
                        .timeMeter(clock)
                        .waiter(clock)
                        .build()) {
            Guard guard = limiter.guard(Rule.builder("api")
                    .key("user")
                    .limits("2/1m")
                    .algorithm(algorithm)
                    .build());
            assertThat(guard.acquire(user("mallory")).permitted()).isTrue();
            assertThat(guard.acquire(user("mallory")).permitted()).isTrue();
            Decision first = guard.acquire(user("mallory"));
            assertThat(first.outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(first.retryAfterNanos()).isPositive();

            long before = commands();
            int flood = 1000;
            for (int i = 0; i < flood; i++) {
                Decision d = guard.acquire(user("mallory"));
                assertThat(d.outcome()).as("call %d of the flood", i).isEqualTo(Outcome.REJECTED);
                assertThat(d.retryAfterNanos()).isEqualTo(first.retryAfterNanos());
            }
            long spent = commands() - before;
            assertThat((double) spent / flood)
                    .as("Redis commands per rejected request (%d in all)", spent)
                    .isLessThanOrEqualTo(0.05);
            assertThat(spent)
                    .as("within the second before it asks again (the clock has not moved)")
                    .isZero();

            // Half-way, the Retry-After counts down; another key is not affected.
            clock.advance(Duration.ofNanos(first.retryAfterNanos() / 2));
            assertThat(guard.acquire(user("mallory")).retryAfterNanos())
                    .isEqualTo(first.retryAfterNanos() - first.retryAfterNanos() / 2);
            assertThat(guard.acquire(user("alice")).permitted()).isTrue();

            // When Redis said it could pay, Redis is asked again, and admits.
            clock.advance(Duration.ofNanos(first.retryAfterNanos() - first.retryAfterNanos() / 2));
            long asked = commands();
            assertThat(guard.acquire(user("mallory")).permitted()).isTrue();
            assertThat(commands()).as("Redis decided the call").isGreaterThan(asked);
        }
    }

    /**
     * A call that meets several rules is decided by the one remembered rejecting it before any other is asked, so the
     * flood costs nothing whichever rule rejects it; the decision reports that rule alone.
     */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
    void aFloodRejectedByALaterRuleCostsRedisNothingEither(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        try (JedisBucketStore store = store(clock);
                RateLimiter limiter = RateLimiter.builder()
                        .store(store)
                        .timeMeter(clock)
                        .waiter(clock)
                        .build()) {
            Rule site = Rule.builder("site")
                    .key("user")
                    .limits("100/1m")
                    .algorithm(algorithm)
                    .build();
            Rule hello = Rule.builder("hello")
                    .key("user")
                    .limits("1/1m")
                    .algorithm(algorithm)
                    .build();
            Guard both = limiter.guard(site, hello);
            assertThat(both.acquire(user("mallory")).permitted()).isTrue();
            Decision first = both.acquire(user("mallory"));
            assertThat(first.outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(first.verdicts()).extracting(Decision.Verdict::rule).containsExactly("site", "hello");

            long before = commands();
            for (int i = 0; i < 1000; i++) {
                Decision d = both.acquire(user("mallory"));
                assertThat(d.outcome()).as("call %d of the flood", i).isEqualTo(Outcome.REJECTED);
                assertThat(d.verdicts()).extracting(Decision.Verdict::rule).containsExactly("hello");
                assertThat(d.retryAfterNanos()).isEqualTo(first.retryAfterNanos());
            }
            assertThat(commands() - before).as("Redis commands for the flood").isZero();
            // 'site' paid for the first call only: the rejected one got its token back.
            assertThat(limiter.guard(site)
                            .acquire(user("mallory"))
                            .verdicts()
                            .get(0)
                            .windows()
                            .get(0)
                            .remaining())
                    .isEqualTo(98);
        }
    }

    @Test
    void aResetOrALimitChangeMakesItAskRedisAtOnce() {
        ManualClock clock = new ManualClock();
        try (JedisBucketStore store = store(clock);
                RateLimiter limiter = RateLimiter.builder()
                        .store(store)
                        .timeMeter(clock)
                        .waiter(clock)
                        .build()) {
            Guard guard =
                    limiter.guard(Rule.builder("api").key("user").limits("1/1h").build());
            assertThat(guard.acquire(user("bob")).permitted()).isTrue();
            assertThat(guard.acquire(user("bob")).permitted()).isFalse();

            limiter.reset("api", "bob");
            assertThat(guard.acquire(user("bob")).permitted())
                    .as("after a reset")
                    .isTrue();
            assertThat(guard.acquire(user("bob")).permitted()).isFalse();

            // A limit change reaches the store as limitsChanged (from a LimitProvider): the next call asks Redis.
            store.limitsChanged(new BucketStore.Key("api", "bob"));
            long before = commands();
            assertThat(guard.acquire(user("bob")).permitted()).isFalse();
            assertThat(commands()).as("Redis was asked after the change").isGreaterThan(before);
        }
    }

    /**
     * A SOFT call is answered from memory only while the remembered wait is longer than it may wait; once it may wait
     * the rest out, Redis reserves its place.
     */
    @Test
    void aSoftCallThatMayWaitTheRestOutIsReservedByRedis() {
        ManualClock clock = new ManualClock();
        try (JedisBucketStore store = store(clock);
                RateLimiter limiter = RateLimiter.builder()
                        .store(store)
                        .timeMeter(clock)
                        .waiter(clock)
                        .build()) {
            Guard soft = limiter.guard(Rule.builder("api")
                    .key("user")
                    .limits("1/1m")
                    .mode(Mode.SOFT)
                    .maxDelay(Duration.ofSeconds(30))
                    .build());
            assertThat(soft.acquire(user("carol")).permitted()).isTrue();
            assertThat(soft.acquire(user("carol")).outcome())
                    .as("a minute to wait, 30 s allowed")
                    .isEqualTo(Outcome.REJECTED);
            long before = commands();
            assertThat(soft.acquire(user("carol")).outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(commands()).as("answered from memory").isEqualTo(before);

            clock.advance(Duration.ofSeconds(40));
            Decision waited = soft.acquire(user("carol"));
            assertThat(waited.outcome()).isEqualTo(Outcome.DELAYED);
            assertThat(waited.delayNanos()).isEqualTo(Duration.ofSeconds(20).toNanos());
            assertThat(commands()).as("Redis reserved the call").isGreaterThan(before);
        }
    }
}
