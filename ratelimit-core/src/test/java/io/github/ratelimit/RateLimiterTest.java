package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Decision.Verdict;
import io.github.ratelimit.Rule.LocalFirst;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.BucketStore.KeyState;
import io.github.ratelimit.store.LocalBucketStore;
import io.github.ratelimit.testing.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class RateLimiterTest {

    private final ManualClock clock = new ManualClock();
    private final List<Decision> heard = new CopyOnWriteArrayList<>();
    private RateLimiter limiter = builder().build();

    private RateLimiter.Builder builder() {
        return RateLimiter.builder().timeMeter(clock).waiter(clock).listener(heard::add);
    }

    @AfterEach
    void close() {
        limiter.close();
    }

    private static RequestContext ip(String address) {
        return RequestContext.builder().remoteAddress(address).build();
    }

    private static RequestContext user(String name) {
        return RequestContext.builder()
                .principal(name)
                .remoteAddress("192.0.2.1")
                .build();
    }

    private static List<Outcome> fire(Guard guard, RequestContext context, int times) {
        List<Outcome> outcomes = new ArrayList<>();
        for (int i = 0; i < times; i++) {
            outcomes.add(guard.acquire(context).outcome());
        }
        return outcomes;
    }

    @Nested
    class HardMode {

        @Test
        void rejectsSixthRequestWithinOneSecond() {
            Guard guard = limiter.guard(Rule.builder("api").limits("5/1s").build());
            assertThat(fire(guard, RequestContext.empty(), 6))
                    .containsExactly(
                            Outcome.ALLOWED,
                            Outcome.ALLOWED,
                            Outcome.ALLOWED,
                            Outcome.ALLOWED,
                            Outcome.ALLOWED,
                            Outcome.REJECTED);
        }

        @Test
        void enforcesEveryWindowOfOneRuleTogether() {
            Guard guard =
                    limiter.guard(Rule.builder("api").limits("5/1s", "12/1m").build());
            int allowed = 0;
            for (int second = 0; second < 4; second++) {
                for (int i = 0; i < 5; i++) {
                    if (guard.acquire(RequestContext.empty()).permitted()) {
                        allowed++;
                    }
                }
                clock.advance(Duration.ofSeconds(1));
            }
            // 5/s alone would admit 20 in four seconds; the minute window stops at 12.
            assertThat(allowed).isEqualTo(12);
            Decision d = guard.acquire(RequestContext.empty());
            assertThat(d.outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(d.bindingWindow().name()).isEqualTo("1m");
            // 12 per minute is one token every 5 s; it is t=4s now.
            assertThat(d.retryAfterNanos()).isEqualTo(Duration.ofSeconds(1).toNanos());
        }

        @Test
        void refillsGreedilyAfterABurst() {
            Guard guard = limiter.guard(Rule.builder("api").limits("10/1s").build());
            assertThat(fire(guard, RequestContext.empty(), 10)).containsOnly(Outcome.ALLOWED);
            Decision rejected = guard.acquire(RequestContext.empty());
            assertThat(rejected.outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(rejected.retryAfterNanos()).isEqualTo(100_000_000L);
            clock.advance(Duration.ofMillis(100));
            assertThat(fire(guard, RequestContext.empty(), 2)).containsExactly(Outcome.ALLOWED, Outcome.REJECTED);
            clock.advance(Duration.ofSeconds(5));
            assertThat(fire(guard, RequestContext.empty(), 11))
                    .containsOnly(Outcome.ALLOWED, Outcome.REJECTED)
                    .filteredOn(o -> o == Outcome.ALLOWED)
                    .hasSize(10);
        }

        @Test
        void letsARestedClientBurstAboveTheRate() {
            Guard guard =
                    limiter.guard(Rule.builder("api").limits("5/1s burst=20").build());
            assertThat(fire(guard, RequestContext.empty(), 21))
                    .filteredOn(o -> o == Outcome.ALLOWED)
                    .hasSize(20);
            clock.advance(Duration.ofSeconds(1));
            assertThat(fire(guard, RequestContext.empty(), 6))
                    .filteredOn(o -> o == Outcome.ALLOWED)
                    .hasSize(5);
        }

        @Test
        void countsEachKeyInItsOwnBucket() {
            Guard guard =
                    limiter.guard(Rule.builder("api").key("ip").limits("2/1s").build());
            assertThat(fire(guard, ip("203.0.113.1"), 3))
                    .containsExactly(Outcome.ALLOWED, Outcome.ALLOWED, Outcome.REJECTED);
            assertThat(fire(guard, ip("203.0.113.2"), 2)).containsOnly(Outcome.ALLOWED);
        }

        @Test
        void chargesTheCostOfEachRequest() {
            Guard guard =
                    limiter.guard(Rule.builder("export").limits("10/1m").cost(4).build());
            assertThat(fire(guard, RequestContext.empty(), 3))
                    .containsExactly(Outcome.ALLOWED, Outcome.ALLOWED, Outcome.REJECTED);
            Decision d = guard.acquire(RequestContext.empty());
            assertThat(d.verdicts().get(0).windows().get(0).remaining()).isEqualTo(2);
            // Four tokens at 10 per minute: two are there, two more take 12 s.
            assertThat(d.retryAfterNanos()).isEqualTo(Duration.ofSeconds(12).toNanos());
        }

        @Test
        void reportsTheStateOfEveryWindow() {
            Guard guard =
                    limiter.guard(Rule.builder("api").limits("5/1s", "100/1m").build());
            guard.acquire(RequestContext.empty());
            Decision d = guard.acquire(RequestContext.empty());
            assertThat(d.verdicts()).singleElement().satisfies(v -> {
                assertThat(v.rule()).isEqualTo("api");
                assertThat(v.key()).isEqualTo("*");
                assertThat(v.basis()).isEqualTo(Basis.BUCKET);
                assertThat(v.windows())
                        .containsExactly(
                                new Decision.Window("1s", 5, 5, Duration.ofSeconds(1), 3, 400_000_000L),
                                new Decision.Window("1m", 100, 100, Duration.ofMinutes(1), 98, 1_200_000_000L));
            });
            assertThat(d.bindingWindow().name()).isEqualTo("1s");
        }
    }

    @Nested
    class FixedWindow {

        @Test
        void resetsTheWholeQuotaAtTheClockAlignedBoundary() {
            clock.advance(Duration.ofSeconds(50)); // 10 s before a whole minute
            Guard guard = limiter.guard(Rule.builder("daily")
                    .limits("3/1m")
                    .algorithm(Algorithm.FIXED_WINDOW)
                    .build());
            assertThat(fire(guard, RequestContext.empty(), 4))
                    .containsExactly(Outcome.ALLOWED, Outcome.ALLOWED, Outcome.ALLOWED, Outcome.REJECTED);
            Decision d = guard.acquire(RequestContext.empty());
            assertThat(d.retryAfterNanos()).isEqualTo(Duration.ofSeconds(10).toNanos());
            assertThat(d.bindingWindow().resetNanos())
                    .isEqualTo(Duration.ofSeconds(10).toNanos());
            clock.advance(Duration.ofSeconds(9));
            assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.REJECTED);
            clock.advance(Duration.ofSeconds(1));
            // The edge of the window lets a whole new quota through at once: the known cost of fixed windows.
            assertThat(fire(guard, RequestContext.empty(), 4))
                    .containsExactly(Outcome.ALLOWED, Outcome.ALLOWED, Outcome.ALLOWED, Outcome.REJECTED);
        }
    }

    @Nested
    class SoftMode {

        private Rule soft(String maxDelay) {
            return Rule.builder("reports")
                    .limits("2/1s")
                    .mode(Mode.SOFT)
                    .maxDelay(Duration.parse("PT" + maxDelay))
                    .build();
        }

        @Test
        void delaysARequestByTheTimeBucket4jComputed() {
            Guard guard = limiter.guard(soft("1S"));
            fire(guard, RequestContext.empty(), 2);
            Instant start = Instant.now(clock);
            Decision d = guard.acquire(RequestContext.empty());
            assertThat(d.outcome()).isEqualTo(Outcome.DELAYED);
            assertThat(d.delayNanos()).isEqualTo(500_000_000L);
            assertThat(clock.awaitedNanos()).isEqualTo(500_000_000L);
            assertThat(start.elapsed()).isEqualTo(Duration.ofMillis(500));
            // The next one waits behind it.
            assertThat(guard.acquire(RequestContext.empty()).delayNanos()).isEqualTo(500_000_000L);
        }

        @Test
        void rejectsAtOnceWithoutConsumingWhenTheWaitWouldExceedMaxDelay() {
            Guard guard = limiter.guard(soft("0.4S"));
            fire(guard, RequestContext.empty(), 2);
            Decision d = guard.acquire(RequestContext.empty());
            assertThat(d.outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(d.retryAfterNanos()).isEqualTo(500_000_000L);
            assertThat(clock.awaitedNanos()).isZero();
            // Nothing was reserved: after 500 ms exactly one token is there, and it goes at once.
            clock.advance(Duration.ofMillis(500));
            assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
        }

        @Test
        void rejectsBeyondTheCapOnWaitingRequests() {
            limiter = builder().maxWaiting(2).build();
            Guard guard = limiter.guard(Rule.builder("reports")
                    .limits("1/1s")
                    .mode(Mode.SOFT)
                    .maxDelay(Duration.ofSeconds(10))
                    .build());
            guard.acquire(RequestContext.empty());
            CompletableFuture<Decision> first = guard.acquireAsync(RequestContext.empty());
            CompletableFuture<Decision> second = guard.acquireAsync(RequestContext.empty());
            Decision third = guard.acquireAsync(RequestContext.empty()).join();
            assertThat(first).isNotDone();
            assertThat(second).isNotDone();
            assertThat(third.outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(third.binding().basis()).isEqualTo(Basis.WAITERS_FULL);
            clock.advance(Duration.ofSeconds(1));
            assertThat(first).isCompletedWithValueMatching(d -> d.outcome() == Outcome.DELAYED);
            assertThat(second).isNotDone();
            // A place is free again.
            assertThat(guard.acquireAsync(RequestContext.empty())).isNotDone();
        }

        @Test
        void aFloodOnOneRuleLeavesTheOtherRulesTheirWaitingPlaces() {
            Guard flooded = limiter.guard(Rule.builder("export")
                    .limits("1/1s")
                    .mode(Mode.SOFT)
                    .maxDelay(Duration.ofMinutes(10))
                    .build());
            Guard quiet = limiter.guard(Rule.builder("reports")
                    .limits("1/1s")
                    .mode(Mode.SOFT)
                    .maxDelay(Duration.ofMinutes(10))
                    .build());
            flooded.acquire(RequestContext.empty());
            quiet.acquire(RequestContext.empty());
            List<Decision> flood = new ArrayList<>();
            for (int i = 0; i < 150; i++) {
                CompletableFuture<Decision> f = flooded.acquireAsync(RequestContext.empty());
                if (f.isDone()) {
                    flood.add(f.join());
                }
            }
            assertThat(flood)
                    .hasSize(150 - Rule.DEFAULT_MAX_WAITING)
                    .allSatisfy(d -> assertThat(d.binding().basis()).isEqualTo(Basis.WAITERS_FULL));
            assertThat(quiet.acquireAsync(RequestContext.empty()))
                    .as("the other rule still delays")
                    .isNotDone();
        }

        @Test
        void boundsEachRulesWaitingCallsByItsOwnMaxWaiting() {
            Guard guard = limiter.guard(Rule.builder("export")
                    .limits("1/1s")
                    .mode(Mode.SOFT)
                    .maxDelay(Duration.ofMinutes(1))
                    .maxWaiting(2)
                    .build());
            guard.acquire(RequestContext.empty());
            assertThat(guard.acquireAsync(RequestContext.empty())).isNotDone();
            assertThat(guard.acquireAsync(RequestContext.empty())).isNotDone();
            assertThat(guard.acquireAsync(RequestContext.empty())
                            .join()
                            .binding()
                            .basis())
                    .isEqualTo(Basis.WAITERS_FULL);
            clock.advance(Duration.ofSeconds(1)); // the first waiter goes: its place is free again
            assertThat(guard.acquireAsync(RequestContext.empty())).isNotDone();
        }

        @Test
        void completesAsynchronousDelaysWithoutHoldingTheThread() {
            Guard guard = limiter.guard(soft("1S"));
            fire(guard, RequestContext.empty(), 2);
            CompletableFuture<Decision> later = guard.acquireAsync(RequestContext.empty());
            assertThat(later).isNotDone();
            clock.advance(Duration.ofMillis(499));
            assertThat(later).isNotDone();
            clock.advance(Duration.ofMillis(1));
            assertThat(later)
                    .isCompletedWithValueMatching(
                            d -> d.outcome() == Outcome.DELAYED && d.delayNanos() == 500_000_000L);
        }

        @Test
        void returnsTheTokensOfACancelledWait() {
            Guard guard = limiter.guard(soft("1S"));
            fire(guard, RequestContext.empty(), 2);
            CompletableFuture<Decision> later = guard.acquireAsync(RequestContext.empty());
            later.cancel(false);
            // Had the reservation stood, this request would wait 1 s instead of 0.5 s.
            assertThat(guard.acquire(RequestContext.empty()).delayNanos()).isEqualTo(500_000_000L);
        }

        @Test
        void returnsTheTokensAndKeepsTheInterruptWhenInterrupted() {
            Guard guard = limiter.guard(soft("1S"));
            fire(guard, RequestContext.empty(), 2);
            Thread.currentThread().interrupt();
            Decision d = guard.acquire(RequestContext.empty());
            assertThat(Thread.interrupted()).isTrue();
            assertThat(d.outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(d.binding().basis()).isEqualTo(Basis.INTERRUPTED);
            assertThat(guard.acquire(RequestContext.empty()).delayNanos()).isEqualTo(500_000_000L);
        }
    }

    @Nested
    class ShadowMode {

        @Test
        void neverBlocksButReportsWouldBeRejections() {
            Guard guard = limiter.guard(
                    Rule.builder("trial").limits("2/1s").mode(Mode.SHADOW).build());
            assertThat(fire(guard, RequestContext.empty(), 4))
                    .containsExactly(
                            Outcome.ALLOWED, Outcome.ALLOWED, Outcome.SHADOW_REJECTED, Outcome.SHADOW_REJECTED);
            assertThat(heard)
                    .extracting(Decision::outcome)
                    .containsExactly(
                            Outcome.ALLOWED, Outcome.ALLOWED, Outcome.SHADOW_REJECTED, Outcome.SHADOW_REJECTED);
            assertThat(heard.get(3).permitted()).isTrue();
        }
    }

    @Nested
    class SeveralRules {

        @Test
        void passesOnlyWhenEveryRuleAllows() {
            Guard guard = limiter.guard(
                    Rule.builder("per-user").key("user").limits("3/1s").build(),
                    Rule.builder("everyone").limits("4/1s").build());
            assertThat(fire(guard, user("alice"), 4))
                    .containsExactly(Outcome.ALLOWED, Outcome.ALLOWED, Outcome.ALLOWED, Outcome.REJECTED);
            assertThat(guard.acquire(user("bob")).outcome()).isEqualTo(Outcome.ALLOWED);
            assertThat(guard.acquire(user("carol")).outcome()).isEqualTo(Outcome.REJECTED);
        }

        @Test
        void aRejectionDoesNotSpendTheTokensOfTheOtherRules() {
            Guard guard = limiter.guard(
                    Rule.builder("everyone").limits("10/1s").build(),
                    Rule.builder("per-user").key("user").limits("1/1s").build());
            Guard everyoneOnly =
                    limiter.guard(Rule.builder("everyone").limits("10/1s").build());
            guard.acquire(user("alice"));
            // Alice's next nine are rejected by her own rule; the shared rule must not lose tokens to them.
            assertThat(fire(guard, user("alice"), 9)).containsOnly(Outcome.REJECTED);
            assertThat(fire(everyoneOnly, RequestContext.empty(), 10))
                    .filteredOn(o -> o == Outcome.ALLOWED)
                    .hasSize(9);
        }

        @Test
        void reportsTheRefundedStateOfTheOtherRulesOnRejection() {
            Guard guard = limiter.guard(
                    Rule.builder("everyone").limits("10/1m").build(),
                    Rule.builder("per-user").key("user").limits("1/1m").build());
            guard.acquire(user("alice"));
            Decision rejected = guard.acquire(user("alice"));
            assertThat(rejected.verdicts().get(0).windows().get(0).remaining()).isEqualTo(9);
        }

        @Test
        void reservesSoftTimeOnlyAfterHardRulesAllow() {
            Guard guard = limiter.guard(
                    Rule.builder("soft")
                            .limits("1/1s")
                            .mode(Mode.SOFT)
                            .maxDelay(Duration.ofSeconds(5))
                            .build(),
                    Rule.builder("hard").limits("2/1m").build());
            assertThat(guard.rules()).extracting(Rule::name).containsExactly("hard", "soft");
            assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
            assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.DELAYED);
            Decision third = guard.acquire(RequestContext.empty());
            assertThat(third.outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(third.verdicts()).extracting(Verdict::rule).containsExactly("hard");
            // The soft bucket was never touched by the third call: a wait of one period, not two.
            Guard softOnly = limiter.guard(Rule.builder("soft")
                    .limits("1/1s")
                    .mode(Mode.SOFT)
                    .maxDelay(Duration.ofSeconds(5))
                    .build());
            assertThat(softOnly.acquire(RequestContext.empty()).delayNanos()).isEqualTo(1_000_000_000L);
        }

        @Test
        void refundsADelayedReservationWhenALaterRuleRejects() {
            Guard guard = limiter.guard(
                    Rule.builder("soft-a")
                            .limits("1/1s")
                            .mode(Mode.SOFT)
                            .maxDelay(Duration.ofSeconds(5))
                            .build(),
                    Rule.builder("soft-b")
                            .limits("1/1m")
                            .mode(Mode.SOFT)
                            .maxDelay(Duration.ofSeconds(5))
                            .build());
            guard.acquire(RequestContext.empty());
            Decision second = guard.acquire(RequestContext.empty());
            assertThat(second.outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(second.verdicts())
                    .extracting(Verdict::outcome)
                    .containsExactly(Outcome.DELAYED, Outcome.REJECTED);
            Guard aOnly = limiter.guard(Rule.builder("soft-a")
                    .limits("1/1s")
                    .mode(Mode.SOFT)
                    .maxDelay(Duration.ofSeconds(5))
                    .build());
            // soft-a's token came back at 1 s plus the refunded reservation: 0 wait after one second.
            clock.advance(Duration.ofSeconds(1));
            assertThat(aOnly.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
        }

        @Test
        void refusesTwoDifferentRulesUnderOneName() {
            limiter.guard(Rule.builder("api")
                    .source("@RateLimit on A#a()")
                    .limits("5/1s")
                    .build());
            assertThatThrownBy(() -> limiter.guard(Rule.builder("api")
                            .source("@RateLimit on B#b()")
                            .limits("5/1s")
                            .build()))
                    .isInstanceOf(InvalidRateLimitConfigurationException.class)
                    .hasMessage("rule name 'api' is used by two different rules: @RateLimit on A#a() and "
                            + "@RateLimit on B#b(). Rules with one name share buckets; give one of them another name.");
            assertThat(limiter.rules()).extracting(Rule::name).containsExactly("api");
        }
    }

    @Nested
    class MissingKeys {

        @Test
        void rejectsAnonymousCallsByDefault() {
            Guard guard =
                    limiter.guard(Rule.builder("api").key("user").limits("5/1s").build());
            Decision d = guard.acquire(RequestContext.empty());
            assertThat(d.outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(d.binding().basis()).isEqualTo(Basis.KEY_MISSING);
        }

        @Test
        void skipsTheRuleWhenAskedTo() {
            Guard guard = limiter.guard(Rule.builder("api")
                    .key("user")
                    .limits("1/1s")
                    .onMissingKey(MissingKeyPolicy.SKIP)
                    .build());
            assertThat(fire(guard, RequestContext.empty(), 3)).containsOnly(Outcome.ALLOWED);
        }

        @Test
        void sharesOneBucketWhenAskedTo() {
            Guard guard = limiter.guard(Rule.builder("api")
                    .key("user")
                    .limits("2/1s")
                    .onMissingKey(MissingKeyPolicy.SHARED)
                    .build());
            assertThat(fire(guard, RequestContext.empty(), 3))
                    .containsExactly(Outcome.ALLOWED, Outcome.ALLOWED, Outcome.REJECTED);
            assertThat(guard.acquire(user("alice")).outcome()).isEqualTo(Outcome.ALLOWED);
        }

        @Test
        void fallsBackToTheNextAlternativeOfTheKeyExpression() {
            Guard guard = limiter.guard(
                    Rule.builder("api").key("user|ip").limits("1/1s").build());
            assertThat(guard.acquire(ip("203.0.113.9")).verdicts().get(0).key()).isEqualTo("ip=203.0.113.9");
            assertThat(guard.acquire(user("alice")).verdicts().get(0).key()).isEqualTo("user=alice");
        }

        @Test
        void treatsAFailingResolverAsAMissingKey() {
            limiter = builder()
                    .keyResolver("tenant", context -> {
                        throw new IllegalStateException("boom");
                    })
                    .build();
            Guard guard = limiter.guard(Rule.builder("api")
                    .key("tenant")
                    .limits("1/1s")
                    .onMissingKey(MissingKeyPolicy.SKIP)
                    .build());
            assertThat(guard.acquire(RequestContext.empty()).binding().basis()).isEqualTo(Basis.KEY_MISSING);
        }

        @Test
        void hashesVeryLongKeys() {
            Guard guard = limiter.guard(
                    Rule.builder("api").key("header:X-Api-Key").limits("1/1s").build());
            String longKey = "k".repeat(5000);
            Decision d = guard.acquire(
                    RequestContext.builder().header("X-Api-Key", longKey).build());
            assertThat(d.verdicts().get(0).key()).startsWith("~sha256:").hasSize(8 + 64);
            assertThat(guard.acquire(RequestContext.builder()
                                    .header("X-Api-Key", longKey)
                                    .build())
                            .outcome())
                    .isEqualTo(Outcome.REJECTED);
        }
    }

    @Nested
    class PerKeyLimits {

        @Test
        void appliesAKeysOwnLimits() {
            limiter = builder()
                    .limitProvider(
                            LimitProvider.builder()
                                    .limits("user:241531", "5/1s")
                                    .build(),
                            Duration.ofMinutes(1))
                    .build();
            Guard guard =
                    limiter.guard(Rule.builder("api").key("user").limits("2/1s").build());
            assertThat(fire(guard, user("241531"), 6))
                    .filteredOn(o -> o == Outcome.ALLOWED)
                    .hasSize(5);
            assertThat(fire(guard, user("someone"), 3))
                    .filteredOn(o -> o == Outcome.ALLOWED)
                    .hasSize(2);
        }

        @Test
        void appliesAChangedLimitToTheExistingBucketKeepingWhatWasSpent() {
            AtomicReference<List<Limit>> plan = new AtomicReference<>(List.of(Limit.parse("60/1m")));
            limiter = builder()
                    .limitProvider((rule, key) -> plan.get(), Duration.ofSeconds(30))
                    .build();
            Guard guard =
                    limiter.guard(Rule.builder("api").key("user").limits("1/1m").build());
            assertThat(fire(guard, user("alice"), 40)).containsOnly(Outcome.ALLOWED);

            plan.set(List.of(Limit.parse("600/1m"))); // upgraded to the paid plan
            clock.advance(Duration.ofSeconds(31)); // the cached answer expires
            Decision d = guard.acquire(user("alice"));
            assertThat(d.outcome()).isEqualTo(Outcome.ALLOWED);
            Decision.Window w = d.verdicts().get(0).windows().get(0);
            assertThat(w.limit()).isEqualTo(600);
            // 20 left plus 31 refilled at the old rate is 51; the additive replacement adds the 540 of new
            // capacity, so the 9 still spent stay spent; this call takes one more.
            assertThat(w.remaining()).isEqualTo(51 + 540 - 1);

            plan.set(List.of(Limit.parse("3/1m"))); // downgraded
            clock.advance(Duration.ofSeconds(31));
            // A lower capacity caps the tokens left at the new capacity.
            assertThat(fire(guard, user("alice"), 4))
                    .containsExactly(Outcome.ALLOWED, Outcome.ALLOWED, Outcome.ALLOWED, Outcome.REJECTED);
        }

        @Test
        void fallsBackToTheRulesLimitsWhenTheProviderFailsOrAnswersNonsense() {
            limiter = builder()
                    .limitProvider(
                            (rule, key) -> {
                                if (key.equals("broken")) {
                                    throw new IllegalStateException("database down");
                                }
                                return List.of(Limit.parse("1/1s")); // below the rule's cost of 2
                            },
                            Duration.ofMinutes(1))
                    .build();
            Guard guard = limiter.guard(
                    Rule.builder("api").key("user").limits("4/1s").cost(2).build());
            assertThat(fire(guard, user("broken"), 3))
                    .containsExactly(Outcome.ALLOWED, Outcome.ALLOWED, Outcome.REJECTED);
            assertThat(fire(guard, user("odd"), 3)).containsExactly(Outcome.ALLOWED, Outcome.ALLOWED, Outcome.REJECTED);
        }
    }

    @Nested
    class StoreFailures {

        /** A store that is down: every call throws, as a Redis client does when it cannot connect. */
        private final BucketStore down = new BucketStore() {
            @Override
            public KeyState state(BucketStore.Key key, BucketStore.Limits limits, LocalFirst localFirst) {
                throw new IllegalStateException("connection refused");
            }
        };

        @Test
        void refusesARuleWithABlockOnAStoreThatKeepsNone() {
            limiter = builder().store(down).build();
            Rule blocking = Rule.builder("logins")
                    .source("ratelimit.rules[0]")
                    .limits("5/15m")
                    .blockFor(Duration.ofMinutes(15))
                    .build();
            assertThat(down.keepsBlocks()).isFalse();
            assertThatThrownBy(() -> limiter.guard(blocking))
                    .isInstanceOf(InvalidRateLimitConfigurationException.class)
                    .hasMessageStartingWith("ratelimit.rules[0]: blockFor needs a store that keeps blocks, and ")
                    .hasMessageEndingWith(" does not. Remove blockFor, or use a store that keeps blocks (the local"
                            + " store or Redis).");
            assertThat(limiter.guard(blocking.toBuilder().blockFor(null).build()))
                    .isNotNull();
        }

        @Test
        void failsOpenByDefault() {
            limiter = builder().store(down).build();
            Guard guard = limiter.guard(Rule.builder("api").limits("1/1s").build());
            assertThat(fire(guard, RequestContext.empty(), 3)).containsOnly(Outcome.ALLOWED);
            assertThat(heard.get(0).binding().basis()).isEqualTo(Basis.FAIL_OPEN);
        }

        @Test
        void failsClosedWhenTheRuleSaysSo() {
            limiter = builder().store(down).build();
            Guard guard = limiter.guard(Rule.builder("login")
                    .limits("5/1m")
                    .onStoreFailure(StoreFailurePolicy.FAIL_CLOSED)
                    .build());
            Decision d = guard.acquire(RequestContext.empty());
            assertThat(d.outcome()).isEqualTo(Outcome.REJECTED);
            assertThat(d.binding().basis()).isEqualTo(Basis.FAIL_CLOSED);
            assertThat(RateLimitHeaders.retryAfterSeconds(d)).isEqualTo(1);
        }

        @Test
        void fallsBackToALocalBucketWithTheConfiguredShare() {
            limiter = builder()
                    .store(down)
                    .defaultStoreFailurePolicy(StoreFailurePolicy.LOCAL_FALLBACK)
                    .localFallbackShare(0.5)
                    .build();
            Guard guard = limiter.guard(Rule.builder("api").limits("10/1s").build());
            List<Outcome> outcomes = fire(guard, RequestContext.empty(), 6);
            assertThat(outcomes)
                    .containsExactly(
                            Outcome.ALLOWED,
                            Outcome.ALLOWED,
                            Outcome.ALLOWED,
                            Outcome.ALLOWED,
                            Outcome.ALLOWED,
                            Outcome.REJECTED);
            assertThat(heard.get(0).binding().basis()).isEqualTo(Basis.FALLBACK_BUCKET);
        }

        @org.junit.jupiter.params.ParameterizedTest
        @org.junit.jupiter.params.provider.EnumSource(
                value = Algorithm.class,
                names = {"SLIDING_WINDOW_LOG", "SLIDING_WINDOW_COUNTER"})
        void fallsBackToALocalSlidingWindowWithTheConfiguredShare(Algorithm algorithm) {
            limiter = builder()
                    .store(down)
                    .defaultStoreFailurePolicy(StoreFailurePolicy.LOCAL_FALLBACK)
                    .localFallbackShare(0.5)
                    .build();
            Guard guard = limiter.guard(
                    Rule.builder("api").limits("10/1m").algorithm(algorithm).build());
            assertThat(fire(guard, RequestContext.empty(), 6))
                    .containsExactly(
                            Outcome.ALLOWED,
                            Outcome.ALLOWED,
                            Outcome.ALLOWED,
                            Outcome.ALLOWED,
                            Outcome.ALLOWED,
                            Outcome.REJECTED);
            assertThat(heard.get(0).binding().basis()).isEqualTo(Basis.FALLBACK_BUCKET);
        }

        @Test
        void aShadowRuleNeverBlocksEvenWhenFailingClosed() {
            limiter = builder().store(down).build();
            Guard guard = limiter.guard(Rule.builder("trial")
                    .limits("1/1s")
                    .mode(Mode.SHADOW)
                    .onStoreFailure(StoreFailurePolicy.FAIL_CLOSED)
                    .build());
            assertThat(guard.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.SHADOW_REJECTED);
        }

        @Test
        void closesTheStoreOnce() {
            AtomicBoolean closedTwice = new AtomicBoolean();
            AtomicBoolean closed = new AtomicBoolean();
            LocalBucketStore real = LocalBucketStore.create();
            limiter = builder()
                    .store(new BucketStore() {
                        @Override
                        public KeyState state(BucketStore.Key key, BucketStore.Limits limits, LocalFirst localFirst) {
                            return real.state(key, limits, localFirst);
                        }

                        @Override
                        public void close() {
                            if (!closed.compareAndSet(false, true)) {
                                closedTwice.set(true);
                            }
                        }
                    })
                    .build();
            limiter.close();
            limiter.close();
            assertThat(closed).isTrue();
            assertThat(closedTwice).isFalse();
        }
    }

    @Test
    void keepsDecidingWhenAListenerThrows() {
        limiter = builder()
                .listener(d -> {
                    throw new IllegalStateException("listener bug");
                })
                .build();
        Guard guard = limiter.guard(Rule.builder("api").limits("1/1s").build());
        assertThat(fire(guard, RequestContext.empty(), 2)).containsExactly(Outcome.ALLOWED, Outcome.REJECTED);
    }

    @Test
    void rejectsAnUnknownKeyAtRegistrationNamingTheAvailableOnes() {
        assertThatThrownBy(() -> limiter.guard(Rule.builder("OrderController#list")
                        .source("@RateLimit on OrderController#list()")
                        .key("usr")
                        .limits("5/1s")
                        .build()))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage("@RateLimit on OrderController#list(): unknown key 'usr'. Available: [basic-user, "
                        + "form-user[:<parameter>], global, "
                        + "header:<name>, ip, param:<name>, user]. Register custom keys with a KeyResolver.");
    }

    /** Elapsed time on the manual clock. */
    private record Instant(ManualClock clock, java.time.Instant start) {
        static Instant now(ManualClock clock) {
            return new Instant(clock, clock.now());
        }

        Duration elapsed() {
            return Duration.between(start, clock.now());
        }
    }
}
