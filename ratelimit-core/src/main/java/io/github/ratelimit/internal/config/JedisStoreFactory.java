package io.github.ratelimit.internal.config;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.internal.MapLimitProvider;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.redis.RedisLimitProvider;
import io.github.ratelimit.store.BucketStore;
import java.time.Duration;

/** Builds the Redis store from settings. A class of its own, loaded only when the Redis store is built. */
final class JedisStoreFactory {

    private JedisStoreFactory() {}

    static BucketStore create(RedisSettings s, TimeMeter clock) {
        JedisBucketStore.Builder b = JedisBucketStore.builder()
                .keyPrefix(s.keyPrefix())
                .commandTimeout(s.commandTimeout())
                .connectTimeout(s.connectTimeout())
                .poolSize(s.poolSize())
                .autoPipelining(s.autoPipelining())
                .migrateKeys(s.migrateKeys())
                .backgroundTimeout(s.backgroundTimeout());
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

    static LimitProvider createLimitStore(BucketStore store, MapLimitProvider defaults, Duration refreshInterval) {
        if (!(store instanceof JedisBucketStore redis)) {
            throw new InvalidRateLimitConfigurationException("ratelimit.limit-store.enabled=true "
                    + "keeps per-key limits in the store's Redis, but the store is "
                    + store.getClass().getSimpleName()
                    + ". Name a Redis server (ratelimit.redis.url, or spring.data.redis.* with the Spring Boot starter), or set "
                    + "ratelimit.limit-store.enabled=false.");
        }
        RedisLimitProvider.Builder b = RedisLimitProvider.builder()
                .client(redis.client())
                .keyPrefix(redis.keyPrefix())
                .refreshInterval(refreshInterval);
        if (defaults != null) {
            // The plans of ratelimit.plans, and ratelimit.keys for keys without an entry of their own.
            defaults.plans().forEach(b::plan);
            b.defaults(defaults);
        }
        return b.build();
    }
}
