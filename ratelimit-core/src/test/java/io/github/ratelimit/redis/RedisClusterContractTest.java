package io.github.ratelimit.redis;

import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.BucketStoreContract;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisCluster;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

class RedisClusterContractTest extends BucketStoreContract {

    private static RedisCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = RedisCluster.start(3, 0);
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @Override
    protected BucketStore newStore(ManualClock clock) {
        return JedisBucketStore.builder()
                .cluster(cluster.nodes().stream().map(Object::toString).toList())
                .keyPrefix("test-" + UUID.randomUUID())
                .timeMeter(clock)
                .build();
    }
}
