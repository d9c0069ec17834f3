package io.github.ratelimit.redis;

import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.BucketStoreContract;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.util.UUID;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The contract on standalone Redis with every script sent on its own (auto-pipelining off). */
class RedisDirectContractTest extends BucketStoreContract {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @Override
    protected BucketStore newStore(ManualClock clock) {
        return JedisBucketStore.builder()
                .url(redis.uri())
                .keyPrefix("test-" + UUID.randomUUID())
                .autoPipelining(false)
                .timeMeter(clock)
                .build();
    }
}
