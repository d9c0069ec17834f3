package io.github.ratelimit.spring.boot.autoconfigure;

import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.redis.LimitAdmin;
import io.github.ratelimit.spring.boot.actuate.RateLimitKeysEndpoint;
import io.github.ratelimit.spring.boot.actuate.RateLimitsEndpoint;
import io.github.ratelimit.spring.boot.actuate.RateLimitsEndpointProperties;
import io.github.ratelimit.spring.boot.actuate.RateLimitsEndpointWebExtension;
import io.github.ratelimit.spring.boot.actuate.RedisStoreHealthIndicator;
import io.github.ratelimit.spring.boot.actuate.RejectedKeys;
import io.github.ratelimit.spring.boot.actuate.StoreLatency;
import io.github.ratelimit.store.BucketStore;
import java.util.OptionalDouble;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Spring Boot Actuator: the {@code ratelimits} endpoint (rules, store, most-rejected keys), the {@code ratelimitkeys}
 * endpoint (per-key limits and resets), and the store's health.
 */
@AutoConfiguration(after = {RateLimitAutoConfiguration.class, RateLimitLimitStoreAutoConfiguration.class})
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
public final class RateLimitActuatorAutoConfiguration {

    /** The ratelimits and ratelimitkeys endpoints, and the rejected-keys summary the first shows. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(
            name = {
                "org.springframework.boot.actuate.endpoint.annotation.Endpoint",
                "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint"
            })
    @EnableConfigurationProperties(RateLimitsEndpointProperties.class)
    static class EndpointConfiguration {

        @Bean
        RejectedKeys rateLimitRejectedKeys() {
            return new RejectedKeys(1000);
        }

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnAvailableEndpoint
        RateLimitsEndpoint rateLimitsEndpoint(
                RateLimiter limiter,
                BucketStore store,
                RejectedKeys rejected,
                RateLimitsEndpointProperties properties,
                ObjectProvider<StoreLatency> latency,
                ObjectProvider<LimitAdmin> admin) {
            // Asked at each read: the metrics' bean may come from an auto-configuration after this one.
            RateLimitsEndpoint endpoint =
                    new RateLimitsEndpoint(limiter, store, rejected, properties.getShowValues(), percentile -> {
                        StoreLatency metrics = latency.getIfAvailable();
                        return metrics == null ? OptionalDouble.empty() : metrics.percentileMillis(percentile);
                    });
            endpoint.setAdmin(admin::getIfAvailable);
            return endpoint;
        }

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnBean(RateLimitsEndpoint.class)
        @ConditionalOnAvailableEndpoint(exposure = EndpointExposure.WEB)
        RateLimitsEndpointWebExtension rateLimitsEndpointWebExtension(
                RateLimitsEndpoint endpoint,
                RateLimitsEndpointProperties properties,
                ObjectProvider<LimitAdmin> admin) {
            return new RateLimitsEndpointWebExtension(
                    endpoint, properties.getShowValues(), properties.getRoles(), admin.getIfAvailable());
        }

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnAvailableEndpoint(exposure = EndpointExposure.WEB)
        RateLimitKeysEndpoint rateLimitKeysEndpoint(LimitAdmin admin) {
            return new RateLimitKeysEndpoint(admin);
        }
    }

    /**
     * The store's health: {@code UP}, or {@code DEGRADED} while Redis is unreachable and rules decide by their
     * failure policies. Boot's default status order does not know {@code DEGRADED}, so it leaves the application's
     * health {@code UP}: an instance serving under fail-open stays in its load balancer. A health group that orders
     * it makes it count (docs/spring-boot.md).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(
            name = {"org.springframework.boot.health.contributor.HealthIndicator", "redis.clients.jedis.UnifiedJedis"})
    static class HealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "rateLimitStoreHealthIndicator")
        HealthIndicator rateLimitStoreHealthIndicator(BucketStore store) {
            return store instanceof JedisBucketStore redis
                    ? new RedisStoreHealthIndicator(redis)
                    : () -> Health.up().withDetail("store", "local").build();
        }
    }
}
