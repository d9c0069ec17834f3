package io.github.ratelimit.spring.boot.concurrency;

import io.github.ratelimit.testing.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@link ConcurrencyOverHttpContract} on a real Redis server: every slot is a lease there. */
class RedisConcurrencyOverHttpTest extends ConcurrencyOverHttpContract {

    private static final RedisServer REDIS = RedisServer.start();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("ratelimit.redis.url", () -> REDIS.uri().toString());
        registry.add("ratelimit.redis.command-timeout", () -> "2s");
    }

    @AfterAll
    static void stopRedis() {
        REDIS.close();
    }
}
