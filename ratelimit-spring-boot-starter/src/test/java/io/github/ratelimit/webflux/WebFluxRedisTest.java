package io.github.ratelimit.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.testing.redis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A WebFlux application whose buckets live in a real Redis server: Jedis blocks, so decisions run on the store's
 * own bounded scheduler, never on an event loop, and a Redis that stops answering holds no event loop either.
 */
@org.junit.jupiter.api.TestMethodOrder(org.junit.jupiter.api.MethodOrderer.OrderAnnotation.class)
class WebFluxRedisTest {

    private static RedisServer redis;
    private static ConfigurableApplicationContext context;
    private static WebTestClient client;
    /** Every thread a decision was made on, and whether it was a non-blocking (event-loop) thread. */
    private static final Set<String> DECIDING_THREADS = ConcurrentHashMap.newKeySet();

    private static final Set<Boolean> ON_EVENT_LOOP = ConcurrentHashMap.newKeySet();

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
        context = WebFluxApps.start(
                App.class,
                "ratelimit.redis.url=" + redis.uri(),
                "ratelimit.redis.command-timeout=2s",
                "ratelimit.rules[0].name=wfr-global",
                "ratelimit.rules[0].paths=/wfr/limited",
                "ratelimit.rules[0].key=global",
                "ratelimit.rules[0].limits=3/1m");
        client = WebFluxApps.client(context);
    }

    @AfterAll
    static void stop() {
        if (context != null) {
            context.close();
        }
        redis.close();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Handlers.class)
    static class App {
        @Bean
        RateLimiter.Listener threadRecorder() {
            return decision -> {
                DECIDING_THREADS.add(Thread.currentThread().getName());
                ON_EVENT_LOOP.add(Schedulers.isInNonBlockingThread());
            };
        }
    }

    @RestController
    static class Handlers {
        @GetMapping("/wfr/limited")
        Mono<String> limited() {
            return Mono.just("limited");
        }

        @RateLimit(name = "wfr-handler", perMinute = 2)
        @GetMapping("/wfr/annotated")
        Mono<String> annotated() {
            return Mono.just("annotated");
        }

        /** Returns its result: decided by the filter off the event loop, not a second time at the call. */
        @RateLimit(name = "wfr-plain", perMinute = 2)
        @GetMapping("/wfr/plain")
        String plain() {
            return "plain";
        }

        @GetMapping("/wfr/free")
        Mono<String> free() {
            return Mono.just("free");
        }
    }

    @Test
    @org.junit.jupiter.api.Order(1)
    void decisionsAreSharedInRedisAndMadeOffTheEventLoop() {
        for (int i = 0; i < 3; i++) {
            client.get()
                    .uri("/wfr/limited")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody()
                    .returnResult();
        }
        client.get()
                .uri("/wfr/limited")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectHeader()
                .exists("Retry-After")
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wfr/annotated")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wfr/annotated")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wfr/annotated")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wfr/plain")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wfr/plain")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult();
        client.get()
                .uri("/wfr/plain")
                .exchange()
                .expectStatus()
                .isEqualTo(429)
                .expectBody()
                .returnResult();
        try (var jedis = new redis.clients.jedis.Jedis(redis.host(), redis.port())) {
            assertThat(jedis.keys("*wfr-global*"))
                    .as("the URL rule's bucket is in Redis")
                    .isNotEmpty();
            assertThat(jedis.keys("*wfr-handler*"))
                    .as("the handler's bucket is in Redis")
                    .isNotEmpty();
        }
        assertThat(ON_EVENT_LOOP).containsOnly(false);
        assertThat(DECIDING_THREADS)
                .isNotEmpty()
                .allSatisfy(name -> assertThat(name).startsWith("ratelimit-store"));
    }

    /** Until a store thread of this JVM is inside Jedis, waiting for the frozen Redis to answer. */
    private static void awaitDecisionWaitingOnRedis() throws InterruptedException {
        org.awaitility.Awaitility.await("a decision in Redis on a store thread")
                .atMost(java.time.Duration.ofSeconds(10))
                .pollInterval(java.time.Duration.ofMillis(5))
                .until(() -> Thread.getAllStackTraces().entrySet().stream()
                        .anyMatch(thread -> thread.getKey().getName().startsWith("ratelimit-store")
                                && java.util.Arrays.stream(thread.getValue())
                                        .anyMatch(frame -> frame.getClassName().startsWith("redis.clients.jedis"))));
    }

    @Test
    @org.junit.jupiter.api.Order(2)
    void aRedisThatStopsAnsweringHoldsNoEventLoop() throws Exception {
        WebTestClient slow =
                client.mutate().responseTimeout(Duration.ofSeconds(30)).build();
        // The first test left the key rejected, and the store remembers that for a second without asking Redis: a
        // reset forgets it, so these requests ask the frozen Redis.
        context.getBean(RateLimiter.class).reset("wfr-global", io.github.ratelimit.internal.KeyResolvers.GLOBAL_KEY);
        redis.pause();
        List<CompletableFuture<Integer>> limited = new ArrayList<>();
        try {
            for (int i = 0; i < 8; i++) {
                limited.add(CompletableFuture.supplyAsync(() -> slow.get()
                        .uri("/wfr/limited")
                        .header("X-I", "1")
                        .exchange()
                        .expectBody(String.class)
                        .returnResult()
                        .getStatus()
                        .value()));
            }
            awaitDecisionWaitingOnRedis();
            List<Integer> free = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                free.add(client.get()
                        .uri("/wfr/free")
                        .exchange()
                        .expectBody(String.class)
                        .returnResult()
                        .getStatus()
                        .value());
            }
            long stillWaiting = limited.stream().filter(f -> !f.isDone()).count();
            assertThat(free).containsOnly(200);
            assertThat(stillWaiting)
                    .as("the unlimited endpoint answered while decisions waited on Redis")
                    .isGreaterThan(0);
        } finally {
            redis.resume();
        }
        for (CompletableFuture<Integer> f : limited) {
            // Fail-open (the default policy) once the command times out, or 429 if Redis answered after the resume.
            assertThat(f.get(30, TimeUnit.SECONDS)).isIn(200, 429);
        }
    }
}
