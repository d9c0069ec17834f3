package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Redis store keeps no blocks yet ({@code docs/blocking.md}): a limiter on it refuses a rule with {@code blockFor}
 * when the rule is first used, naming the rule, the value and what to do, rather than ignore the block.
 */
class RedisBlockRefusedTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @Test
    void refusesARuleWithABlockAndTakesOneWithout() {
        JedisBucketStore store = JedisBucketStore.builder()
                .url(redis.uri())
                .keyPrefix("test-" + UUID.randomUUID())
                .build();
        assertThat(store.keepsBlocks()).isFalse();
        try (RateLimiter limiter = RateLimiter.builder().store(store).build()) {
            Rule blocking = Rule.builder("logins")
                    .source("ratelimit.rules[0]")
                    .limits("5/15m")
                    .blockFor(Duration.ofMinutes(15))
                    .build();
            assertThatThrownBy(() -> limiter.guard(blocking))
                    .isInstanceOf(InvalidRateLimitConfigurationException.class)
                    .hasMessage(
                            "ratelimit.rules[0]: blockFor needs a store that keeps blocks, and JedisBucketStore does"
                                    + " not (on Redis, blocks are not supported yet). Remove blockFor, or use the local store"
                                    + " (ratelimit.store=local).");
            assertThat(limiter.guard(blocking.toBuilder().blockFor(null).build()))
                    .isNotNull();
        }
    }
}
