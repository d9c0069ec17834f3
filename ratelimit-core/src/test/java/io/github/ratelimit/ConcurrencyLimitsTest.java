package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.store.LocalBucketStore;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Concurrency rules: at most N calls per key in flight, a slot held from the decision until the call ends
 * ({@link Guard#completed}) or is given back ({@link Guard#refund}, a later rule's rejection, a cancelled wait). HARD
 * rejects a call with no free slot; SOFT waits for one up to its maxDelay. On the local store and on a real Redis.
 */
class ConcurrencyLimitsTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private final ManualClock clock = new ManualClock();
    private final List<RateLimiter> limiters = new ArrayList<>();
    private final String prefix = "slots-" + UUID.randomUUID();

    @AfterEach
    void close() {
        limiters.forEach(RateLimiter::close);
    }

    private RateLimiter limiter(String store, boolean manual, RateLimiter.Listener... listeners) {
        RateLimiter.Builder b = RateLimiter.builder();
        if (manual) {
            b.timeMeter(clock).waiter(clock);
        }
        for (RateLimiter.Listener l : listeners) {
            b.listener(l);
        }
        JedisBucketStore.Builder redisStore =
                JedisBucketStore.builder().url(redis.uri()).keyPrefix(prefix).commandTimeout(Duration.ofSeconds(5));
        LocalBucketStore.Builder localStore = LocalBucketStore.builder();
        if (manual) {
            redisStore.timeMeter(clock);
            localStore.timeMeter(clock);
        }
        b.store("redis".equals(store) ? redisStore.build() : localStore.build());
        RateLimiter limiter = b.build();
        limiters.add(limiter);
        return limiter;
    }

    private static final RequestContext ALICE =
            RequestContext.builder().remoteAddress("203.0.113.9").build();
    private static final RequestContext BOB =
            RequestContext.builder().remoteAddress("198.51.100.7").build();

    private static Rule slow(Mode mode, Duration maxDelay) {
        Rule.Builder b = Rule.builder("slow").key("ip").concurrency(2).mode(mode);
        return (maxDelay == null ? b : b.maxDelay(maxDelay)).build();
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aKeyHasAtMostItsSlotsInFlightAndAnEndedCallFreesOne(String store) {
        Guard guard = limiter(store, true).guard(slow(Mode.HARD, null));
        assertThat(guard.settlesOnCompletion())
                .as("every call must say when it ends")
                .isTrue();
        Decision first = guard.acquire(ALICE);
        Decision second = guard.acquire(ALICE);
        assertThat(first.outcome()).isEqualTo(Outcome.ALLOWED);
        assertThat(second.outcome()).isEqualTo(Outcome.ALLOWED);
        assertThat(second.verdicts().get(0).windows()).containsExactly(Decision.Window.concurrency(2, 2));
        Decision third = guard.acquire(ALICE);
        assertThat(third.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(third.retryAfterNanos())
                .as("nothing says when a call ends: a second")
                .isEqualTo(1_000_000_000L);
        assertThat(third.verdicts().get(0).windows()).containsExactly(Decision.Window.concurrency(2, 2));
        assertThat(guard.acquire(BOB).permitted())
                .as("another key has slots of its own")
                .isTrue();

        // (Within a lease: on Redis a lease runs out unless renewed, which RedisSlotsTest shows.)
        clock.advance(Duration.ofSeconds(10));
        assertThat(guard.acquire(ALICE).permitted()).as("time frees no slot").isFalse();

        guard.completed(first, true, 500);
        Decision fourth = guard.acquire(ALICE);
        assertThat(fourth.permitted())
                .as("a failed call's end frees its slot too")
                .isTrue();
        assertThat(guard.acquire(ALICE).permitted()).isFalse();
        guard.refund(second);
        guard.completed(fourth, false, 200);
        assertThat(guard.acquire(ALICE).permitted()).isTrue();
        assertThat(guard.acquire(ALICE).permitted()).isTrue();
        assertThat(guard.acquire(ALICE).permitted()).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aCallAnotherRuleRejectsHoldsNoSlot(String store) {
        RateLimiter limiter = limiter(store, true);
        Guard guard = limiter.guard(List.of(
                Rule.builder("slots").key("ip").concurrency(1).build(),
                Rule.builder("rate").key("ip").limits("1/1m").build()));
        Decision first = guard.acquire(ALICE);
        assertThat(first.permitted()).isTrue();
        guard.completed(first, false, 200);
        Decision rejected = guard.acquire(ALICE);
        assertThat(rejected.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(rejected.binding().rule()).isEqualTo("rate");
        assertThat(limiter.guard(Rule.builder("slots").key("ip").concurrency(1).build())
                        .acquire(ALICE)
                        .permitted())
                .as("the rejected call gave its slot back")
                .isTrue();
    }

    /** A reset frees every slot at once; the calls in flight before it then give back nothing of the new count. */
    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void callsFromBeforeAResetGiveBackNothingOfTheSlotsAfterIt(String store) {
        RateLimiter limiter = limiter(store, true);
        Guard guard = limiter.guard(slow(Mode.HARD, null));
        Decision a = guard.acquire(ALICE);
        Decision b = guard.acquire(ALICE);
        limiter.reset("slow", "203.0.113.9");
        Decision c = guard.acquire(ALICE);
        Decision d = guard.acquire(ALICE);
        assertThat(c.permitted() && d.permitted())
                .as("the reset freed both slots")
                .isTrue();
        guard.completed(a, false, 200);
        guard.completed(b, false, 200);
        assertThat(guard.acquire(ALICE).permitted()).as("c and d still run").isFalse();
        guard.completed(c, false, 200);
        assertThat(guard.acquire(ALICE).permitted()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aCallOfManyPermitsHoldsOneSlot(String store) {
        Guard guard = limiter(store, true).guard(slow(Mode.HARD, null));
        assertThat(guard.acquire(ALICE, 1_000).permitted()).isTrue();
        assertThat(guard.acquire(ALICE, 1_000).permitted()).isTrue();
        assertThat(guard.acquire(ALICE, 1).permitted()).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aPeekSaysWhetherASlotIsFreeAndTakesNone(String store) {
        Guard guard = limiter(store, true).guard(slow(Mode.HARD, null));
        assertThat(guard.peek(ALICE).outcome()).isEqualTo(Outcome.ALLOWED);
        guard.acquire(ALICE);
        Decision peek = guard.peek(ALICE);
        assertThat(peek.outcome()).isEqualTo(Outcome.ALLOWED);
        assertThat(peek.verdicts().get(0).windows()).containsExactly(Decision.Window.concurrency(2, 1));
        guard.acquire(ALICE);
        assertThat(guard.peek(ALICE).outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(guard.peek(ALICE).outcome()).as("the peeks took nothing").isEqualTo(Outcome.REJECTED);
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void shadowRecordsTheRejectionAndLetsTheCallGo(String store) {
        Guard guard = limiter(store, true).guard(slow(Mode.SHADOW, null));
        guard.acquire(ALICE);
        guard.acquire(ALICE);
        Decision third = guard.acquire(ALICE);
        assertThat(third.outcome()).isEqualTo(Outcome.SHADOW_REJECTED);
        assertThat(third.permitted()).isTrue();
        guard.completed(third, false, 200);
    }

    /**
     * Moves the clock once a waiting call has set its next timer, and waits for the attempt that follows to end (the
     * call settled, or its next timer set): its attempts run on the limiter's threads. {@link ManualClock#advance}
     * removes the timers that came due before it returns, so each wait looks at once and then every millisecond
     * (with Awaitility's default first look after 100 ms, the forty moves of a two-second wait took eight seconds).
     */
    private void advanceWhenWaiting(CompletableFuture<Decision> call, Duration by) {
        ConditionFactory promptly = await().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1));
        promptly.until(() -> clock.pendingTimers() > 0 || call.isDone());
        clock.advance(by);
        promptly.until(() -> clock.pendingTimers() > 0 || call.isDone());
    }

    /** SOFT, on the limiter's timers: the wait ends when a slot is freed, or gives up after maxDelay. */
    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void softWaitsForASlotWithoutHoldingAThread(String store) {
        List<Decision> heard = new CopyOnWriteArrayList<>();
        Guard guard = limiter(store, true, heard::add).guard(slow(Mode.SOFT, Duration.ofSeconds(2)));
        Decision first = guard.acquire(ALICE);
        guard.acquire(ALICE);
        heard.clear();
        CompletableFuture<Decision> waiting = guard.acquireAsync(ALICE);
        assertThat(waiting).isNotDone();
        assertThat(heard)
                .as("listeners hear of a waiting call once it is settled")
                .isEmpty();
        advanceWhenWaiting(waiting, Duration.ofMillis(300));
        assertThat(waiting).as("no slot was freed").isNotDone();
        guard.completed(first, false, 200);
        advanceWhenWaiting(waiting, Duration.ofMillis(50));
        Decision got = waiting.join();
        assertThat(got.outcome()).isEqualTo(Outcome.DELAYED);
        assertThat(got.verdicts().get(0).receipt()).as("it holds a slot").isNotZero();
        assertThat(got.delayNanos())
                .isBetween(
                        Duration.ofMillis(300).toNanos(), Duration.ofMillis(350).toNanos());
        assertThat(heard).containsExactly(got);

        CompletableFuture<Decision> late = guard.acquireAsync(ALICE);
        while (!late.isDone()) {
            advanceWhenWaiting(late, Duration.ofMillis(50));
        }
        Decision gaveUp = late.join();
        assertThat(gaveUp.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(clock.now()).as("it waited its maxDelay").isAfterOrEqualTo(ManualClock.START.plusMillis(2350));
        assertThat(gaveUp.verdicts().get(0).basis()).isEqualTo(Basis.BUCKET);

        guard.completed(got, false, 200);
        CompletableFuture<Decision> cancelled = guard.acquireAsync(ALICE);
        assertThat(cancelled.join().outcome()).as("a slot was free at once").isEqualTo(Outcome.ALLOWED);
        heard.clear();
        CompletableFuture<Decision> abandoned = guard.acquireAsync(ALICE);
        assertThat(abandoned).isNotDone();
        abandoned.cancel(false);
        assertThat(heard)
                .as("listeners hear of a wait its caller gave up")
                .singleElement()
                .satisfies(d -> assertThat(d.verdicts().get(0).basis()).isEqualTo(Basis.INTERRUPTED));
        guard.completed(cancelled.join(), false, 200);
        assertThat(guard.acquire(ALICE).outcome())
                .as("the cancelled wait took no slot")
                .isEqualTo(Outcome.ALLOWED);
    }

    /**
     * A waiting call its caller completes some other way (a timeout, {@code complete}) gives back its place among the
     * waiting calls at once: with one place, the next call may wait again.
     */
    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aWaitItsCallerEndsGivesBackItsPlace(String store) {
        Guard guard = limiter(store, true)
                .guard(Rule.builder("one")
                        .key("ip")
                        .concurrency(1)
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofSeconds(10))
                        .maxWaiting(1)
                        .build());
        Decision held = guard.acquire(ALICE);
        for (int i = 0; i < 3; i++) {
            CompletableFuture<Decision> waiting = guard.acquireAsync(ALICE);
            assertThat(waiting).as("wait %d has the one place", i).isNotDone();
            waiting.completeExceptionally(new java.util.concurrent.TimeoutException("the caller's own timeout"));
        }
        guard.completed(held, false, 200);
        assertThat(guard.acquire(ALICE).outcome()).as("no wait kept a slot").isEqualTo(Outcome.ALLOWED);
    }

    /** SOFT on the calling thread, in real time: the waiting thread gets the slot its neighbour frees. */
    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void softBlocksTheCallerUntilASlotIsFree(String store) throws Exception {
        Guard guard = limiter(store, false).guard(slow(Mode.SOFT, Duration.ofSeconds(30)));
        Decision first = guard.acquire(ALICE);
        guard.acquire(ALICE);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            List<Thread> waiter = new CopyOnWriteArrayList<>();
            Future<Decision> waiting = pool.submit(() -> {
                waiter.add(Thread.currentThread());
                return guard.acquire(ALICE);
            });
            await().until(() -> !waiter.isEmpty() && waiter.get(0).getState() == Thread.State.TIMED_WAITING);
            assertThat(waiting).isNotDone();
            guard.completed(first, false, 200);
            Decision got = waiting.get();
            assertThat(got.permitted()).isTrue();
            assertThat(got.verdicts().get(0).receipt()).isNotZero();
            assertThat(guard.peek(ALICE).outcome())
                    .as("both slots are taken again")
                    .isEqualTo(Outcome.DELAYED);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aRuleOfSlotsHasNoWindowsAndSaysHowToAddARate() {
        assertThatThrownBy(() -> Rule.builder("slow")
                        .key("ip")
                        .concurrency(2)
                        .limits("5/1s")
                        .build())
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessageContaining("concurrency 2")
                .hasMessageContaining("limits [5/1s]")
                .hasMessageContaining("Declare two rules");
        assertThatThrownBy(() ->
                        Rule.builder("slow").key("ip").concurrency(2).cost(3).build())
                .hasMessageContaining("cost 3");
        assertThatThrownBy(() -> Rule.builder("slow")
                        .key("ip")
                        .concurrency(2)
                        .permits("#n")
                        .build())
                .hasMessageContaining("permits '#n'");
        assertThatThrownBy(() -> Rule.builder("slow").key("ip").concurrency(-1).build())
                .hasMessageContaining("concurrency -1 is not between 1 and 10000");
        assertThatThrownBy(
                        () -> Rule.builder("slow").key("ip").concurrency(10_001).build())
                .hasMessageContaining("concurrency 10001");
        assertThatThrownBy(() -> Rule.builder("slow")
                        .key("ip")
                        .concurrency(2)
                        .mode(Mode.SOFT)
                        .build())
                .hasMessageContaining("maxDelay");
        Rule rule = Rule.builder("slow").key("ip").concurrency(2).build();
        assertThat(rule.limits()).isEmpty();
        assertThat(rule.concurrency()).isEqualTo(2);
        assertThat(rule.toString()).contains("concurrency=2");
        assertThatThrownBy(() -> rule.withLimits(List.of(Limit.parse("5/1s"))))
                .as("per-key limits cannot turn it into a rule of windows")
                .isInstanceOf(InvalidRateLimitConfigurationException.class);
    }

    @Test
    void theHeadersAdvertiseCallsInFlight() {
        Guard guard = limiter("local", true).guard(slow(Mode.HARD, null));
        guard.acquire(ALICE);
        Map<String, String> headers = new LinkedHashMap<>();
        RateLimitHeaders.write(guard.acquire(ALICE), EnumSet.allOf(RateLimitHeaders.HeaderStyle.class), headers::put);
        assertThat(headers)
                .containsEntry("RateLimit-Policy", "\"slow-concurrency\";q=2;qu=\"concurrent-requests\"")
                .containsEntry("RateLimit", "\"slow-concurrency\";r=0")
                .containsEntry("X-RateLimit-Limit", "2")
                .containsEntry("X-RateLimit-Remaining", "0")
                .containsEntry("X-RateLimit-Reset", "0");
        headers.clear();
        RateLimitHeaders.write(guard.acquire(ALICE), EnumSet.allOf(RateLimitHeaders.HeaderStyle.class), headers::put);
        assertThat(headers)
                .containsEntry("Retry-After", "1")
                .containsEntry("X-RateLimit-Reset", "1")
                .containsEntry("RateLimit", "\"slow-concurrency\";r=0");
    }

    /** The annotation makes the same rule. */
    @Test
    void theAnnotationMakesAConcurrencyRule() throws Exception {
        class Api {
            @RateLimit(name = "export", key = "user", concurrency = 3)
            void export() {}
        }
        Rule rule = io.github.ratelimit.internal.config.RateLimitAnnotations.toRule(
                Api.class.getDeclaredMethod("export").getAnnotation(RateLimit.class),
                "x",
                "@RateLimit on Api#export()");
        assertThat(rule.concurrency()).isEqualTo(3);
        assertThat(rule.limits()).isEmpty();
    }
}
