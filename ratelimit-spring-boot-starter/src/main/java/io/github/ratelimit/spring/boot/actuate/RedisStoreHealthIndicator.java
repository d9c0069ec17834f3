package io.github.ratelimit.spring.boot.actuate;

import io.github.ratelimit.internal.admin.AdminViews;
import io.github.ratelimit.redis.JedisBucketStore;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * Health of the Redis bucket store, from its circuit breaker: {@code UP} while closed, {@link #DEGRADED} while
 * open or probing (rules then decide by their store-failure policies). Costs no Redis call.
 *
 * <p>{@code DEGRADED} is not in Spring Boot's default status order, so the application's health stays
 * {@code UP}: an instance that keeps serving under fail-open is not pulled out of its load balancer because Redis
 * is away. To make it count, give a health group (or the whole endpoint) an order that knows it, e.g.
 * {@code management.endpoint.health.group.ratelimit.include=rateLimitStore},
 * {@code ...group.ratelimit.status.order=down,degraded,up} and
 * {@code ...group.ratelimit.status.http-mapping.degraded=503}.
 */
public final class RedisStoreHealthIndicator implements HealthIndicator {

    /** The store's status while Redis is unreachable: the application serves, rules decide without Redis. */
    static final Status DEGRADED = new Status(
            AdminViews.DEGRADED, "Redis is unreachable; rate-limit rules decide by their store-failure policies");

    private final JedisBucketStore store;

    public RedisStoreHealthIndicator(JedisBucketStore store) {
        this.store = store;
    }

    @Override
    public Health health() {
        JedisBucketStore.Stats stats = store.stats();
        Health.Builder builder = AdminViews.UP.equals(AdminViews.status(stats)) ? Health.up() : Health.status(DEGRADED);
        return builder.withDetails(AdminViews.healthDetails(stats)).build();
    }
}
