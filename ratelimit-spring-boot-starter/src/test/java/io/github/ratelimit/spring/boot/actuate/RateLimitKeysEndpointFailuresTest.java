package io.github.ratelimit.spring.boot.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.redis.LimitAdmin;
import io.github.ratelimit.redis.RedisLimitProvider;
import io.github.ratelimit.testing.redis.RedisServer;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.RedisClient;

/** What the ratelimitkeys endpoint answers when it cannot do what was asked: never a 500. */
class RateLimitKeysEndpointFailuresTest {

    @Test
    void answers503WhileRedisIsUnreachable() {
        RedisServer redis = RedisServer.start();
        try (RedisClient client = RedisClient.builder()
                        .hostAndPort(redis.hostAndPort())
                        .clientConfig(DefaultJedisClientConfig.builder()
                                .socketTimeoutMillis(100)
                                .connectionTimeoutMillis(100)
                                .build())
                        .build();
                RedisLimitProvider store =
                        RedisLimitProvider.builder().client(client).build();
                RateLimiter limiter = RateLimiter.builder().build()) {
            limiter.guard(Rule.builder("api").limits("5/1s").build());
            RateLimitKeysEndpoint endpoint = new RateLimitKeysEndpoint(LimitAdmin.of(limiter, store));
            redis.close(); // gone
            assertThat(endpoint.entry("api", "alice").getStatus())
                    .isEqualTo(WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
            assertThat(endpoint.entries("api", null, null, "10").getStatus())
                    .isEqualTo(WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
            WebEndpointResponse<Object> set = endpoint.change("api", "alice", "5/1s", null, null, SecurityContext.NONE);
            assertThat(set.getStatus()).isEqualTo(WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
            assertThat(String.valueOf(((Map<?, ?>) set.getBody()).get("message")))
                    .contains("cannot be reached");
            assertThat(endpoint.remove("api", "alice", SecurityContext.NONE).getStatus())
                    .isEqualTo(WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
            // A reset needs no limit store: the local store forgets the key.
            assertThat(endpoint.change("api", "alice", null, null, true, SecurityContext.NONE)
                            .getStatus())
                    .isEqualTo(200);
        }
    }

    @Test
    void answers404WithTheFixWhenLimitsAreNotKeptAtRunTime() {
        try (RateLimiter limiter = RateLimiter.builder().build()) {
            limiter.guard(Rule.builder("api").limits("5/1s").build());
            RateLimitKeysEndpoint endpoint = new RateLimitKeysEndpoint(LimitAdmin.of(limiter, null));
            WebEndpointResponse<Object> set = endpoint.change("api", "alice", "5/1s", null, null, SecurityContext.NONE);
            assertThat(set.getStatus()).isEqualTo(404);
            assertThat(String.valueOf(((Map<?, ?>) set.getBody()).get("message")))
                    .contains("ratelimit.limit-store.enabled=true");
            assertThat(endpoint.change("api", "alice", null, null, true, SecurityContext.NONE)
                            .getStatus())
                    .isEqualTo(200);
        }
    }
}
