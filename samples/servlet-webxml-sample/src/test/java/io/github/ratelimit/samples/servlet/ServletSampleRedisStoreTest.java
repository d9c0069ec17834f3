package io.github.ratelimit.samples.servlet;

import io.github.ratelimit.testing.redis.RedisServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;

/** The same suite with the buckets in a real Redis, switched by two context-params. */
class ServletSampleRedisStoreTest extends ServletSampleContract {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @Override
    protected Map<String, String> storeParams() {
        return Map.of("ratelimit.store", "redis", "ratelimit.redis.url", redis.uri(),
                "ratelimit.redis.key-prefix", uniquePrefix());
    }
}
