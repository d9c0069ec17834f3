package io.github.ratelimit.store;

import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.util.UUID;

class RedisStandaloneContractTest extends BucketStoreContract {

    private static RedisServer redis;

    @BeforeAll
    static void startRedis() {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    @Override
    protected BucketStore newStore(ManualClock clock) {
        return JedisBucketStore.builder().url(redis.uri().toString()).keyPrefix("test-" + UUID.randomUUID())
                .timeMeter(clock).build();
    }
}
