package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.StoreFailurePolicy;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.testing.redis.RedisServer;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.time.Duration;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.SetParams;

/**
 * Blocks on the Redis store ({@code docs/blocking.md}): kept in Redis for every instance, lifted by a reset through any
 * of them, answered by the instance that knows of them without Redis during the block, garbage never obeyed, and a
 * failing Redis handled by the rule's failure policy.
 */
class RedisBlockTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final Duration BLOCK = Duration.ofMinutes(1);

    private final String prefix = "test-" + UUID.randomUUID();
    private final JedisBucketStore storeA = store(redis.uri());
    private final JedisBucketStore storeB = store(redis.uri());
    private final RateLimiter limiterA = RateLimiter.builder().store(storeA).build();
    private final RateLimiter limiterB = RateLimiter.builder().store(storeB).build();
    private final Jedis admin = new Jedis(redis.server().host(), redis.server().port());

    private JedisBucketStore store(String uri) {
        return JedisBucketStore.builder().url(uri).keyPrefix(prefix).build();
    }

    @AfterEach
    void close() {
        limiterA.close();
        limiterB.close();
        storeA.close();
        storeB.close();
        admin.close();
    }

    private static Rule rule() {
        return Rule.builder("api").key("user").limits("1/1m").blockFor(BLOCK).build();
    }

    private static RequestContext user(String name) {
        return RequestContext.builder().principal(name).build();
    }

    private byte[] blockKey(String user) {
        return RedisKeys.blockKey(prefix, new BucketStore.Key("api", user));
    }

    private static Basis basis(Decision d) {
        return d.binding().basis();
    }

    @Test
    void keyRefusedThroughOneInstanceIsBlockedOnTheOtherForTheRemainingTime() {
        Guard a = limiterA.guard(rule());
        Guard b = limiterB.guard(rule());
        assertThat(storeA.keepsBlocks()).isTrue();
        assertThat(a.acquire(user("alice")).permitted()).isTrue();
        Decision refused = a.acquire(user("alice"));
        assertThat(refused.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(basis(refused)).isEqualTo(Basis.BUCKET);
        assertThat(refused.retryAfterNanos()).as("the block starts").isEqualTo(BLOCK.toNanos());
        long ttl = admin.pttl(blockKey("alice"));
        assertThat(ttl).isBetween(BLOCK.toMillis() - 5_000, BLOCK.toMillis());

        Decision elsewhere = b.acquire(user("alice"));
        assertThat(basis(elsewhere)).as("the other instance sees the block").isEqualTo(Basis.BLOCKED);
        assertThat(elsewhere.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(elsewhere.retryAfterNanos())
                .as("for what is left of it")
                .isBetween(BLOCK.minusSeconds(5).toNanos(), BLOCK.toNanos());
        assertThat(b.acquire(user("bob")).permitted())
                .as("another key is not blocked")
                .isTrue();

        Decision again = a.acquire(user("alice"));
        assertThat(basis(again)).isEqualTo(Basis.BLOCKED);
        assertThat(admin.pttl(blockKey("alice")))
                .as("a refusal during the block does not extend it")
                .isLessThanOrEqualTo(ttl);
    }

    @Test
    void instanceThatKnowsOfABlockRefusesItsFloodWithoutAskingRedisMoreThanOnceASecond() {
        Guard a = limiterA.guard(rule());
        a.acquire(user("alice"));
        assertThat(basis(a.acquire(user("alice")))).isEqualTo(Basis.BUCKET);
        long before = redis.server().commandCalls("pttl");
        long started = System.nanoTime();
        for (int i = 0; i < 200; i++) {
            assertThat(basis(a.acquire(user("alice")))).isEqualTo(Basis.BLOCKED);
        }
        long seconds = Duration.ofNanos(System.nanoTime() - started).toSeconds();
        assertThat(redis.server().commandCalls("pttl") - before)
                .as("block checks sent to Redis for 200 blocked calls in %d s", seconds)
                .isLessThanOrEqualTo(seconds + 1);
    }

    @Test
    void resetThroughOneInstanceLiftsTheBlockOnTheOtherWithinASecond() {
        Guard a = limiterA.guard(rule());
        Guard b = limiterB.guard(rule());
        a.acquire(user("alice"));
        a.acquire(user("alice"));
        assertThat(basis(b.acquire(user("alice")))).isEqualTo(Basis.BLOCKED);

        limiterA.reset("api", "alice");
        assertThat(admin.exists(blockKey("alice"))).isFalse();
        assertThat(a.acquire(user("alice")).permitted())
                .as("lifted at once on the instance that reset it")
                .isTrue();
        long resetAt = System.nanoTime();
        Awaitility.await()
                .atMost(Duration.ofSeconds(3))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> basis(b.acquire(user("alice"))) != Basis.BLOCKED);
        assertThat(Duration.ofNanos(System.nanoTime() - resetAt))
                .as("seen by the other within the recheck interval")
                // The recheck interval (1 s), plus a poll and a decision on a busy machine.
                .isLessThan(Duration.ofSeconds(2));
    }

    @Test
    void blockKeyWithoutExpiryIsDeletedNotObeyed() {
        admin.set(blockKey("alice"), "1".getBytes());
        assertGarbageIgnored();
    }

    @Test
    void blockKeyOfAnotherTypeIsDeletedNotObeyed() {
        admin.lpush(blockKey("alice"), "x".getBytes());
        admin.pexpire(blockKey("alice"), 30_000);
        assertGarbageIgnored();
    }

    @Test
    void blockKeyLivingLongerThanAnyBlockIsDeletedNotObeyed() {
        admin.set(
                blockKey("alice"),
                "1".getBytes(),
                SetParams.setParams().px(Duration.ofDays(30).toMillis()));
        assertGarbageIgnored();
    }

    @Test
    void garbageUnderTheBlockKeyDoesNotStopABlockFromStarting() {
        Guard a = limiterA.guard(rule());
        assertThat(a.acquire(user("alice")).permitted()).isTrue();
        admin.set(blockKey("alice"), "garbage".getBytes());
        Decision refused = a.acquire(user("alice"));
        assertThat(basis(refused)).isEqualTo(Basis.BUCKET);
        assertThat(refused.retryAfterNanos()).isEqualTo(BLOCK.toNanos());
        assertThat(admin.pttl(blockKey("alice"))).isBetween(BLOCK.toMillis() - 5_000, BLOCK.toMillis());
        assertThat(storeA.stats().repairs()).isPositive();
    }

    private void assertGarbageIgnored() {
        Guard a = limiterA.guard(rule());
        Decision d = a.acquire(user("alice"));
        assertThat(d.permitted()).as("garbage blocks nothing").isTrue();
        assertThat(basis(d)).isEqualTo(Basis.BUCKET);
        assertThat(admin.exists(blockKey("alice"))).as("and is deleted").isFalse();
        assertThat(storeA.stats().repairs()).isEqualTo(1);
        Decision refused = a.acquire(user("alice"));
        assertThat(refused.retryAfterNanos()).as("a block starts as usual").isEqualTo(BLOCK.toNanos());
        assertThat(basis(a.acquire(user("alice")))).isEqualTo(Basis.BLOCKED);
    }

    @Test
    void pausedOrKilledRedisDuringTheBlockCheckAppliesTheRulesFailurePolicy() {
        try (RedisServer own = RedisServer.start();
                JedisBucketStore store = store(own.uri().toString());
                RateLimiter limiter = RateLimiter.builder().store(store).build()) {
            Guard closed = limiter.guard(Rule.builder("closed")
                    .key("user")
                    .limits("5/1m")
                    .blockFor(BLOCK)
                    .onStoreFailure(StoreFailurePolicy.FAIL_CLOSED)
                    .build());
            Guard open = limiter.guard(Rule.builder("open")
                    .key("user")
                    .limits("5/1m")
                    .blockFor(BLOCK)
                    .onStoreFailure(StoreFailurePolicy.FAIL_OPEN)
                    .build());
            Guard fallback = limiter.guard(Rule.builder("fallback")
                    .key("user")
                    .limits("1/1m")
                    .blockFor(BLOCK)
                    .onStoreFailure(StoreFailurePolicy.LOCAL_FALLBACK)
                    .build());
            assertThat(basis(closed.acquire(user("alice")))).isEqualTo(Basis.BUCKET);

            own.pause();
            try {
                long started = System.nanoTime();
                assertThat(basis(closed.acquire(user("alice")))).isEqualTo(Basis.FAIL_CLOSED);
                assertThat(basis(open.acquire(user("alice")))).isEqualTo(Basis.FAIL_OPEN);
                assertThat(Duration.ofNanos(System.nanoTime() - started))
                        .as("each waits the command timeout at most, never for Redis")
                        .isLessThan(Duration.ofSeconds(1));
            } finally {
                own.resume();
            }
            Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> basis(closed.acquire(user("bob"))) == Basis.BUCKET);

            own.kill();
            Decision first = fallback.acquire(user("alice"));
            assertThat(basis(first)).isEqualTo(Basis.FALLBACK_BUCKET);
            assertThat(first.permitted()).isTrue();
            Decision refused = fallback.acquire(user("alice"));
            assertThat(basis(refused)).isEqualTo(Basis.FALLBACK_BUCKET);
            assertThat(refused.retryAfterNanos())
                    .as("the local fallback blocks the key itself")
                    .isEqualTo(BLOCK.toNanos());
            assertThat(basis(fallback.acquire(user("alice")))).isEqualTo(Basis.BLOCKED);
            assertThat(basis(closed.acquire(user("carol")))).isEqualTo(Basis.FAIL_CLOSED);
        }
    }
}
