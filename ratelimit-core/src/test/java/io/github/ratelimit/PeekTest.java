package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.store.LocalBucketStore;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.RedisClient;

/**
 * {@link Guard#peek}: what deciding a call would give now, without deciding it. Nothing is taken (in Redis, no key's
 * bytes change), no listener hears of it; SOFT rules say their wait; exemptions and too-large calls answer as a
 * decision would. On the local store and a real Redis. (Every algorithm, every store: {@code BucketStoreContract}.)
 */
class PeekTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private final ManualClock clock = new ManualClock();
    private final List<RateLimiter> limiters = new ArrayList<>();
    private final AtomicInteger heard = new AtomicInteger();
    private String prefix;

    @AfterEach
    void close() {
        limiters.forEach(RateLimiter::close);
    }

    private RateLimiter limiter(String store) {
        prefix = "peek-" + UUID.randomUUID();
        RateLimiter limiter = RateLimiter.builder()
                .timeMeter(clock)
                .waiter(clock)
                .listener(d -> heard.incrementAndGet())
                .exempt(List.of("10.0.0.0/8"))
                .store(
                        "redis".equals(store)
                                ? JedisBucketStore.builder()
                                        .url(redis.uri())
                                        .keyPrefix(prefix)
                                        .commandTimeout(Duration.ofSeconds(5))
                                        .timeMeter(clock)
                                        .build()
                                : LocalBucketStore.builder().timeMeter(clock).build())
                .build();
        limiters.add(limiter);
        return limiter;
    }

    private static RequestContext from(String address) {
        return RequestContext.builder().remoteAddress(address).build();
    }

    /** Every key of this test's rules in Redis, with its bytes (and, for sorted sets and hashes, members and fields). */
    private TreeMap<String, String> redisContents() {
        TreeMap<String, String> all = new TreeMap<>();
        try (RedisClient jedis =
                RedisClient.builder().hostAndPort(redis.server().hostAndPort()).build()) {
            Set<String> keys = jedis.keys(prefix + ":*:{*"); // the rules' state, not the store's layout mark
            for (String key : keys) {
                String type = jedis.type(key);
                all.put(
                        key,
                        switch (type) {
                            case "zset" -> jedis.zrangeWithScores(key, 0, -1).toString();
                            case "hash" -> new TreeMap<>(jedis.hgetAll(key)).toString();
                            default ->
                                java.util.Arrays.toString(
                                        jedis.get(key.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
                        });
            }
        }
        return all;
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aPeekChangesNothingAndNoListenerHearsOfIt(String store) {
        RateLimiter limiter = limiter(store);
        Guard guard = limiter.guard(
                Rule.builder("tb").key("ip").limits("3/1m").build(),
                Rule.builder("log")
                        .key("ip")
                        .limits("5/1m")
                        .algorithm(Algorithm.SLIDING_WINDOW_LOG)
                        .build(),
                Rule.builder("counter")
                        .key("ip")
                        .limits("5/1m")
                        .algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
                        .build());
        RequestContext client = from("192.0.2.1");
        assertThat(guard.acquire(client).permitted()).isTrue();
        clock.advance(Duration.ofSeconds(1));
        int before = heard.get();
        TreeMap<String, String> contents = store.equals("redis") ? redisContents() : null;
        for (int i = 0; i < 20; i++) {
            Decision peek = guard.peek(client);
            assertThat(peek.outcome()).isEqualTo(Outcome.ALLOWED);
            assertThat(peek.verdicts())
                    .extracting(v -> v.windows().get(0).remaining())
                    .containsExactly(2L, 4L, 4L);
        }
        assertThat(heard.get()).as("no listener hears a peek").isEqualTo(before);
        if (contents != null) {
            assertThat(contents).hasSize(3);
            assertThat(redisContents()).as("no key of Redis changed").isEqualTo(contents);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aSoftRuleSaysItsWaitAndAnExemptClientPasses(String store) {
        RateLimiter limiter = limiter(store);
        Guard soft = limiter.guard(Rule.builder("soft")
                .key("ip")
                .limits("2/1s")
                .mode(Mode.SOFT)
                .maxDelay(Duration.ofSeconds(2))
                .build());
        RequestContext client = from("192.0.2.2");
        soft.acquire(client);
        soft.acquire(client);
        Decision peek = soft.peek(client);
        assertThat(peek.outcome()).isEqualTo(Outcome.DELAYED);
        assertThat(peek.delayNanos()).isEqualTo(Duration.ofMillis(500).toNanos());
        Decision exempt = soft.peek(from("10.1.1.1"));
        assertThat(exempt.outcome()).isEqualTo(Outcome.ALLOWED);
        assertThat(exempt.verdicts().get(0).basis()).isEqualTo(Basis.EXEMPT);
        Guard batch =
                limiter.guard(Rule.builder("batch").key("ip").limits("10/1m").build());
        assertThat(batch.peek(client, 7).verdicts().get(0).windows().get(0).remaining())
                .isEqualTo(10);
        assertThatThrownBy(() -> batch.peek(client, 11)).isInstanceOf(CallTooLargeException.class);
        assertThatThrownBy(() -> batch.peek(client, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
