package io.github.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.testing.redis.RedisServer;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import redis.clients.jedis.Jedis;

/**
 * The gateway's limiter with the store the rest of the starter uses: a real Redis server named by
 * {@code ratelimit.redis.url}. Buckets are Redis keys, so every gateway instance on that Redis shares them.
 */
@Tag("gateway")
class GatewayRedisTest {

    private static RedisServer redis;
    private static Upstream upstream;
    private static ConfigurableApplicationContext gateway;
    private static WebTestClient client;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
        upstream = Upstream.start();
        gateway = GatewayApps.start(
                GatewayApps.App.class,
                upstream,
                "ratelimit.redis.url=" + redis.uri(),
                "ratelimit.redis.command-timeout=2s");
        client = GatewayApps.client(gateway);
    }

    @AfterAll
    static void stop() {
        if (gateway != null) {
            gateway.close();
        }
        upstream.close();
        redis.close();
    }

    @Test
    void aRoutesRuleCountsInRedis() {
        for (int i = 1; i <= 3; i++) {
            EntityExchangeResult<String> allowed = get("acme");
            assertThat(allowed.getStatus().value()).isEqualTo(200);
            assertThat(allowed.getResponseBody()).isEqualTo("upstream /api/tenants/x");
            assertThat(allowed.getResponseHeaders().get("X-RateLimit-Remaining"))
                    .containsExactly(String.valueOf(3 - i));
        }
        EntityExchangeResult<String> rejected = get("acme");
        assertThat(rejected.getStatus().value()).isEqualTo(429);
        assertThat(rejected.getResponseHeaders().getFirst("Retry-After")).isNotNull();
        assertThat(rejected.getResponseHeaders().getFirst("RateLimit-Policy")).contains("\"per-tenant-1m\";q=3");
        assertThat(get("globex").getStatus().value()).isEqualTo(200);
        try (Jedis jedis = new Jedis(redis.host(), redis.port())) {
            Set<String> keys = jedis.keys("*");
            assertThat(keys).anyMatch(k -> k.contains("per-tenant") && k.contains("acme"));
            assertThat(keys).anyMatch(k -> k.contains("per-tenant") && k.contains("globex"));
        }
    }

    private static EntityExchangeResult<String> get(String tenant) {
        return client.get()
                .uri("/api/tenants/x")
                .header("X-Tenant", tenant)
                .exchange()
                .expectBody(String.class)
                .returnResult();
    }
}
