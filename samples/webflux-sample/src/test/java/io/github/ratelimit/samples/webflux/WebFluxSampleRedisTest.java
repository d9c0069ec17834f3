package io.github.ratelimit.samples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.testing.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Two instances of the sample, each started with the one property that puts its buckets in a real Redis server:
 * a user's limit is shared, whichever instance serves the request.
 */
class WebFluxSampleRedisTest {

    private static RedisServer redis;
    private static ConfigurableApplicationContext first;
    private static ConfigurableApplicationContext second;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
        first = SpringApplication.run(
                WebFluxSampleApplication.class, "--server.port=0", "--ratelimit.redis.url=" + redis.uri());
        second = SpringApplication.run(
                WebFluxSampleApplication.class, "--server.port=0", "--ratelimit.redis.url=" + redis.uri());
    }

    @AfterAll
    static void stop() {
        if (first != null) {
            first.close();
        }
        if (second != null) {
            second.close();
        }
        redis.close();
    }

    @Test
    void twoInstancesShareAUsersLimitThroughRedis() {
        WebTestClient a = WebFluxSampleTest.clientOf(first);
        WebTestClient b = WebFluxSampleTest.clientOf(second);
        a.get()
                .uri("/api/me")
                .headers(h -> h.setBasicAuth("bob", "bob"))
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        b.get()
                .uri("/api/me")
                .headers(h -> h.setBasicAuth("bob", "bob"))
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        a.get()
                .uri("/api/me")
                .headers(h -> h.setBasicAuth("bob", "bob"))
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        b.get()
                .uri("/api/me")
                .headers(h -> h.setBasicAuth("bob", "bob"))
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectBody()
                .returnResult();
        a.get()
                .uri("/api/me")
                .headers(h -> h.setBasicAuth("bob", "bob"))
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectBody()
                .returnResult();
        try (var jedis = new redis.clients.jedis.Jedis(redis.host(), redis.port())) {
            assertThat(jedis.keys("*me*"))
                    .as("the 'me' rule's bucket is in Redis")
                    .isNotEmpty();
        }
    }

    @Test
    void softDelaysWorkOnRedisToo() {
        // The export rule allows 2 per second: the third and fourth pass only because they waited their turn.
        WebTestClient a = WebFluxSampleTest.clientOf(first);
        for (int i = 0; i < 4; i++) {
            a.get()
                    .uri("/api/export")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody()
                    .returnResult();
        }
    }
}
