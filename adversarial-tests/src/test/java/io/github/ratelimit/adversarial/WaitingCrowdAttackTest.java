package io.github.ratelimit.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Mode;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A legal but heavy configuration, as an adversary would use it: a thousand clients at once on one
 * sliding-counter key of {@code 1/10ms}, SOFT, with a thousand waiting places. Before, each of the thousand
 * reservations made the counter's script longer (up to 58.7 ms a call), the command timeout tripped, the breaker
 * opened and most decisions were admitted by the fail-open policy. Now each script's work is bounded by the rule
 * (a counter key holds delayed calls in at most 64 intervals, and the rule's maxDelay is checked against that at
 * start-up), so over real HTTP every one of the thousand is decided by its bucket, the admitted stay within the
 * limit over the time the decisions took plus the longest delay, and Redis never fails.
 */
class WaitingCrowdAttackTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private Target target;

    @AfterEach
    void stop() throws Exception {
        if (target != null) {
            target.close();
        }
    }

    @Test
    void aThousandClientsWaitingOnOneCounterKeyGetNoMoreThanTheLimitAndNothingFailsOpen() throws Exception {
        Duration maxDelay = Duration.ofMillis(640);
        target = Target.builder(StoreKind.REDIS, redis)
                .rule(UrlRule.of(
                        Rule.builder("crowd")
                                .key("ip")
                                .limits("1/10ms")
                                .algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
                                .mode(Mode.SOFT)
                                .maxDelay(maxDelay)
                                .maxWaiting(1000)
                                .build(),
                        List.of("/api/**"),
                        Set.of()))
                .start();
        ExecutorService executor = Executors.newFixedThreadPool(8);
        HttpClient client = HttpClient.newBuilder()
                .executor(executor)
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10))
                .build();
        try {
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + target.port() + "/api/x"))
                    .timeout(Duration.ofSeconds(60))
                    .build();
            long started = System.nanoTime();
            List<CompletableFuture<HttpResponse<Void>>> responses = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                responses.add(client.sendAsync(request, HttpResponse.BodyHandlers.discarding()));
            }
            // Every request decided: rejected ones answered, delayed ones waiting on the limiter's clock.
            await().atMost(Duration.ofSeconds(60))
                    .until(() ->
                            responses.stream().filter(CompletableFuture::isDone).count()
                                            + target.clock().pendingTimers()
                                    == 1000);
            long decidingMillis = (System.nanoTime() - started) / 1_000_000;
            target.clock().advance(Duration.ofSeconds(1));
            CompletableFuture.allOf(responses.toArray(CompletableFuture[]::new)).get();

            Map<Integer, Long> statuses = responses.stream()
                    .map(CompletableFuture::join)
                    .collect(Collectors.groupingBy(HttpResponse::statusCode, Collectors.counting()));
            assertThat(statuses.keySet()).as("statuses %s", statuses).containsOnly(200, 429);
            // One call per 10 ms interval at the very most, over the time the decisions took and the longest delay.
            long bound = (decidingMillis + maxDelay.toMillis()) / 10 + 2;
            assertThat(statuses.get(200))
                    .as("admitted of 1000 in %d ms (bound %d)", decidingMillis, bound)
                    .isPositive()
                    .isLessThanOrEqualTo(bound);
            assertThat(target.reachedTotal()).isEqualTo(statuses.get(200).intValue());
            assertThat(target.redisStore().stats().failures())
                    .as("Redis failures")
                    .isZero();
            assertThat(target.redisStore().stats().shortCircuited())
                    .as("calls the open breaker refused")
                    .isZero();
        } finally {
            executor.shutdownNow();
        }
    }
}
