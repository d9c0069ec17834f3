package io.github.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.spring.boot.autoconfigure.RateLimitGatewayAutoConfiguration;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.RateLimitFields;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpHeaders;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Spring Cloud Gateway's {@code RequestRateLimiter} filter backed by the engine, over real HTTP through a real
 * gateway to a real upstream, buckets in this JVM ({@link GatewayRedisTest} on Redis). The URL rule {@code api}
 * (the library's WebFlux filter) and the routes' gateway rules decide the same requests: each counts each request once.
 */
@Tag("gateway")
class GatewayRateLimiterTest {

    private static final ManualClock CLOCK = new ManualClock();

    private static Upstream upstream;
    private static ConfigurableApplicationContext gateway;
    private static WebTestClient client;

    @BeforeAll
    static void start() {
        upstream = Upstream.start();
        gateway = GatewayApps.start(
                ClockedApp.class,
                upstream,
                "ratelimit.store=local",
                "ratelimit.rules[2].name=api",
                "ratelimit.rules[2].paths=/api/hello",
                "ratelimit.rules[2].key=ip",
                "ratelimit.rules[2].limits=100/1m");
        client = GatewayApps.client(gateway);
    }

    @AfterAll
    static void stop() {
        if (gateway != null) {
            gateway.close();
        }
        upstream.close();
    }

    /** The gateway, with the limiter's clock in the test's hands. */
    @SpringBootConfiguration
    static class ClockedApp extends GatewayApps.App {

        @Bean
        ManualClock rateLimitTimeMeter() {
            return CLOCK;
        }
    }

    @Test
    void theGatewaysFilterUsesTheEngineByDefault() {
        RequestRateLimiterGatewayFilterFactory factory = gateway.getBean(RequestRateLimiterGatewayFilterFactory.class);
        assertThat(factory.getDefaultRateLimiter())
                .isSameAs(gateway.getBean(RateLimitGatewayAutoConfiguration.LIMITER_BEAN));
    }

    /**
     * hello allows 5 a second per address, api 100 a minute: the clock stands still, so exactly 5 pass; a second
     * later hello passes again. api, the WebFlux filter's URL rule on the same path, counts each request once.
     */
    @Test
    void aRouteDecidesItsRuleWithTheLibrarysHeadersAndEachRuleCountsARequestOnce() {
        for (int allowed = 1; allowed <= 5; allowed++) {
            EntityExchangeResult<String> answer = get("/api/hello", null);
            assertThat(answer.getStatus().value()).isEqualTo(200);
            assertThat(answer.getResponseBody()).isEqualTo("upstream /api/hello");
            HttpHeaders headers = answer.getResponseHeaders();
            assertThat(headers.get("X-RateLimit-Limit")).containsExactly("5");
            assertThat(headers.get("X-RateLimit-Remaining")).containsExactly(String.valueOf(5 - allowed));
            Map<String, Map<String, Long>> items = RateLimitFields.parse(headers.getFirst("RateLimit"), "r", "t");
            assertThat(items.get("hello-1s").get("r")).isEqualTo(5 - allowed);
            assertThat(items.get("api-1m").get("r")).isEqualTo(100 - allowed);
        }
        for (int rejected = 1; rejected <= 2; rejected++) {
            EntityExchangeResult<String> answer = get("/api/hello", null);
            assertThat(answer.getStatus().value()).isEqualTo(429);
            HttpHeaders headers = answer.getResponseHeaders();
            assertThat(headers.get("Retry-After")).containsExactly("1");
            assertThat(headers.get("X-RateLimit-Remaining")).containsExactly("0");
            assertThat(headers.getFirst("RateLimit-Policy")).contains("\"hello-1s\";q=5;w=1");
            Map<String, Map<String, Long>> items = RateLimitFields.parse(headers.getFirst("RateLimit"), "r", "t");
            assertThat(items.get("hello-1s").get("r")).isZero();
            // The URL rule let the request through to the gateway, which refused it: counted by api once.
            assertThat(items.get("api-1m").get("r")).isEqualTo(100 - 5 - rejected);
        }
        CLOCK.advance(Duration.ofSeconds(1));
        assertThat(get("/api/hello", null).getStatus().value()).isEqualTo(200);
    }

    @Test
    void aRouteNamesItsRulesAndTheGatewaysKeyIsAKey() {
        for (int i = 0; i < 3; i++) {
            assertThat(get("/api/tenants/x", "acme").getStatus().value()).isEqualTo(200);
        }
        EntityExchangeResult<String> rejected = get("/api/tenants/x", "acme");
        assertThat(rejected.getStatus().value()).isEqualTo(429);
        assertThat(rejected.getResponseHeaders().getFirst("RateLimit-Policy")).contains("\"per-tenant-1m\";q=3");
        assertThat(get("/api/tenants/x", "globex").getStatus().value()).isEqualTo(200);
        // No key from the route's KeyResolver: the gateway denies it (its deny-empty-key default), before the limiter.
        assertThat(get("/api/tenants/x", null).getStatus().value()).isEqualTo(403);
    }

    private static EntityExchangeResult<String> get(String path, String tenant) {
        return client.get()
                .uri(path)
                .headers(h -> {
                    if (tenant != null) {
                        h.set("X-Tenant", tenant);
                    }
                })
                .exchange()
                .expectBody(String.class)
                .returnResult();
    }
}
