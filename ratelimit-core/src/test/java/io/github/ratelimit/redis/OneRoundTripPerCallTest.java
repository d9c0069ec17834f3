package io.github.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import redis.clients.jedis.Jedis;

/**
 * A call that meets several rules on Redis sends their scripts in one pipeline: one round trip per call, not per
 * rule, whatever the algorithm; a rule that rejects it costs one more, to give the others their tokens back.
 */
class OneRoundTripPerCallTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
    void threeRulesShareOneRoundTrip(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        try (JedisBucketStore store = JedisBucketStore.builder()
                .url(redis.uri())
                .keyPrefix("p" + UUID.randomUUID().toString().substring(0, 8))
                .timeMeter(clock)
                .build()) {
            threeRulesByOneKeyShareOneRoundTrip(
                    store, clock, algorithm, key -> new Jedis(redis.server().hostAndPort()));
        }
    }

    /**
     * Three rules that count by one key: each call's three scripts reach Redis in one round trip, counted by the store
     * and by the server that holds the key ({@code INFO stats}'s reads: one per call); a rejected call costs one more
     * per rule that gives its token back.
     *
     * @param node a connection to the server that holds a Redis key (on a Cluster, its slot's node)
     */
    static void threeRulesByOneKeyShareOneRoundTrip(
            JedisBucketStore store, ManualClock clock, Algorithm algorithm, Function<byte[], Jedis> node) {
        try (RateLimiter limiter = RateLimiter.builder()
                .store(store)
                .timeMeter(clock)
                .waiter(clock)
                .build()) {
            List<Rule> rules = List.of(
                    Rule.builder("site")
                            .key("user")
                            .limits("100/1m")
                            .algorithm(algorithm)
                            .build(),
                    Rule.builder("api")
                            .key("user")
                            .limits("50/1m")
                            .algorithm(algorithm)
                            .build(),
                    Rule.builder("hello")
                            .key("user")
                            .limits("5/1m")
                            .algorithm(algorithm)
                            .build());
            Guard guard = limiter.guard(rules.toArray(Rule[]::new));
            RequestContext alice = RequestContext.builder().principal("alice").build();
            assertThat(guard.acquire(alice).permitted()).isTrue(); // the connections are open now
            // The store's start-up look for keys of an earlier layout is over: its reads count in no call.
            org.awaitility.Awaitility.await().until(() -> store.keyMigration().finished());
            JedisBucketStore.Stats before = store.stats();
            try (Jedis admin = node.apply(store.redisKey(new BucketStore.Key("site", "alice"), algorithm))) {
                long reads = reads(admin);
                for (int i = 0; i < 4; i++) {
                    assertThat(guard.acquire(alice).permitted()).isTrue();
                }
                // One read of each call's three scripts, and one of the second INFO itself.
                assertThat(reads(admin) - reads).as("reads on the server").isEqualTo(4 + 1);
            }
            JedisBucketStore.Stats after = store.stats();
            assertThat(after.roundTrips() - before.roundTrips()).as("scripts").isEqualTo(12);
            assertThat(after.pipelines() - before.pipelines()).as("round trips").isEqualTo(4);

            Decision rejected = guard.acquire(alice);
            assertThat(rejected.outcome()).isEqualTo(Outcome.REJECTED);
            JedisBucketStore.Stats last = store.stats();
            assertThat(last.pipelines() - after.pipelines())
                    .as("round trips of a rejected call: the decision, then the two refunds")
                    .isEqualTo(3);
            // Neither of the other rules kept the rejected call's token.
            assertThat(limiter.guard(rules.get(1))
                            .acquire(alice)
                            .verdicts()
                            .get(0)
                            .windows()
                            .get(0)
                            .remaining())
                    .isEqualTo(44);
        }
    }

    /** @return the server's {@code total_reads_processed}: a read of what a connection sent, however many commands */
    private static long reads(Jedis server) {
        for (String line : server.info("stats").split("\r?\n")) {
            if (line.startsWith("total_reads_processed:")) {
                return Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        throw new AssertionError("no total_reads_processed in INFO stats");
    }

    /** A concurrency rule's take travels with the other rules' scripts; its give-back, after the call, is one more. */
    @org.junit.jupiter.api.Test
    void aConcurrencyRuleTakesItsSlotInTheSameRoundTrip() {
        ManualClock clock = new ManualClock();
        try (JedisBucketStore store = JedisBucketStore.builder()
                        .url(redis.uri())
                        .keyPrefix("p" + UUID.randomUUID().toString().substring(0, 8))
                        .timeMeter(clock)
                        .build();
                RateLimiter limiter = RateLimiter.builder()
                        .store(store)
                        .timeMeter(clock)
                        .waiter(clock)
                        .build()) {
            Guard guard = limiter.guard(
                    Rule.builder("site").key("user").limits("100/1m").build(),
                    Rule.builder("slow").key("user").concurrency(2).build());
            RequestContext alice = RequestContext.builder().principal("alice").build();
            JedisBucketStore.Stats before = store.stats();
            Decision d = guard.acquire(alice);
            assertThat(d.permitted()).isTrue();
            JedisBucketStore.Stats decided = store.stats();
            assertThat(decided.roundTrips() - before.roundTrips()).as("scripts").isEqualTo(2);
            assertThat(decided.pipelines() - before.pipelines())
                    .as("round trips")
                    .isEqualTo(1);
            guard.completed(d, false, 200);
            assertThat(store.stats().pipelines() - decided.pipelines())
                    .as("the give-back")
                    .isEqualTo(1);
        }
    }
}
