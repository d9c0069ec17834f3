package io.github.ratelimit.spring.boot;

import io.github.ratelimit.store.JedisBucketStore;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * Health of the Redis bucket store, from its circuit breaker: UP while closed, DOWN while open or probing (rules
 * then decide by their store-failure policies). Costs no Redis call.
 */
final class RedisStoreHealthIndicator implements HealthIndicator {

    private final JedisBucketStore store;

    RedisStoreHealthIndicator(JedisBucketStore store) {
        this.store = store;
    }

    @Override
    public Health health() {
        JedisBucketStore.Stats stats = store.stats();
        Health.Builder builder = stats.breaker() == JedisBucketStore.BreakerState.CLOSED ? Health.up() : Health.down();
        return builder.withDetail("breaker", stats.breaker()).withDetail("failures", stats.failures())
                .withDetail("shortCircuited", stats.shortCircuited()).build();
    }
}
