package io.github.ratelimit.config;

import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.JedisBucketStore;

/** Builds the Redis store from settings. A class of its own, loaded only when the Redis store is built. */
final class JedisStoreFactory {

    private JedisStoreFactory() {
    }

    static BucketStore create(RedisSettings s, io.github.bucket4j.TimeMeter clock) {
        JedisBucketStore.Builder b = JedisBucketStore.builder().keyPrefix(s.keyPrefix())
                .commandTimeout(s.commandTimeout()).connectTimeout(s.connectTimeout()).poolSize(s.poolSize())
                .autoPipelining(s.autoPipelining());
        if (s.url() != null) {
            b.url(s.url());
        } else if (s.sentinelMaster() != null) {
            b.sentinel(s.sentinelMaster(), s.sentinelNodes());
        } else {
            b.cluster(s.clusterNodes());
        }
        if (s.username() != null || s.password() != null) {
            b.credentials(s.username(), s.password());
        }
        if (clock != null) {
            b.timeMeter(clock);
        }
        return b.ssl(s.ssl()).build();
    }
}
