package io.github.ratelimit.spring.boot.charging;

import io.github.ratelimit.testing.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@link ChargingOverHttpContract} on a real Redis server. */
class RedisChargingOverHttpTest extends ChargingOverHttpContract {

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
