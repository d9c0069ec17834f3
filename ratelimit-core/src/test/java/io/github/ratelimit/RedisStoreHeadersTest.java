package io.github.ratelimit;

import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.extension.RegisterExtension;

class RedisStoreHeadersTest extends HeadersContract {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @Override
    protected BucketStore newStore(ManualClock clock) {
        // What the headers say is the point here, not timeouts: a loaded machine must not fail a call open.
        return JedisBucketStore.builder()
                .url(redis.uri())
                .keyPrefix("test-" + UUID.randomUUID())
                .commandTimeout(Duration.ofSeconds(5))
                .timeMeter(clock)
                .build();
    }
}
