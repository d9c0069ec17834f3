package io.github.ratelimit.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Limit;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.StoreFailurePolicy;
import io.github.ratelimit.store.BucketStore.KeyState;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.RandomKeyCases;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * One behaviour suite run against every store: whatever holds the buckets, a rule means the same. Time is
 * a manual clock shared by the limiter and the store, so no test waits for refill.
 */
public abstract class BucketStoreContract {

    protected final ManualClock clock = new ManualClock();
    private BucketStore store;
    private final List<RateLimiter> limiters = new ArrayList<>();

    /**
     * @return a store, empty for this test, whose buckets use {@code clock}
     */
    protected abstract BucketStore newStore(ManualClock clock);

    @BeforeEach
    void openStore() {
        store = newStore(clock);
    }

    @AfterEach
    void closeAll() {
        limiters.forEach(RateLimiter::close);
        store.close();
    }

    /** A limiter over this test's store; closing the limiter leaves the store open for the next one. */
    protected RateLimiter limiter() {
        return limiter(RateLimiter.builder());
    }

    protected RateLimiter limiter(RateLimiter.Builder builder) {
        BucketStore shared = new BucketStore() {
            @Override
            public KeyState state(
                    BucketStore.Key key, BucketStore.Limits limits, io.github.ratelimit.Rule.LocalFirst localFirst) {
                return store.state(key, limits, localFirst);
            }
        };
        RateLimiter limiter =
                builder.store(shared).timeMeter(clock).waiter(clock).build();
        limiters.add(limiter);
        return limiter;
    }

    private static RequestContext user(String name) {
        return RequestContext.builder().principal(name).build();
    }

    private static List<Outcome> fire(Guard guard, RequestContext context, int times) {
        List<Outcome> outcomes = new ArrayList<>();
        for (int i = 0; i < times; i++) {
            Decision d = guard.acquire(context);
            assertThat(d.verdicts()).allSatisfy(v -> assertThat(v.basis()).isIn(Basis.BUCKET, Basis.KEY_MISSING));
            outcomes.add(d.outcome());
        }
        return outcomes;
    }

    private static long allowed(List<Outcome> outcomes) {
        return outcomes.stream().filter(o -> o == Outcome.ALLOWED).count();
    }

    // ---- bucket identity: no rule, alternative or value reaches another's bucket ------------------------------

    private static RequestContext header(String name, String value) {
        return RequestContext.builder().header(name, value).build();
    }

    @Test
    void aRuleNameWithAColonNeverSharesTheBucketOfAKeyThatContainsIt() {
        Guard api = limiter()
                .guard(Rule.builder("api").key("header:X-Login").limits("1/1h").build());
        Guard apiLogin = limiter()
                .guard(Rule.builder("api:login").key("ip").limits("1/1h").build());
        RequestContext client =
                RequestContext.builder().remoteAddress("203.0.113.7").build();
        assertThat(api.acquire(header("X-Login", "login:203.0.113.7")).permitted())
                .isTrue();
        assertThat(apiLogin.acquire(client).permitted())
                .as("rule api:login's own bucket")
                .isTrue();
        assertThat(apiLogin.acquire(client).permitted()).isFalse();
    }

    @Test
    void anAnonymousCallerCannotSpendAUsersTokensThroughAnotherAlternative() {
        Guard guard = limiter()
                .guard(Rule.builder("api")
                        .key("user|header:X-Client")
                        .limits("1/1h")
                        .build());
        assertThat(guard.acquire(header("X-Client", "alice")).permitted()).isTrue();
        assertThat(guard.acquire(user("alice")).permitted())
                .as("user alice's own bucket")
                .isTrue();
        assertThat(guard.acquire(user("alice")).permitted()).isFalse();
    }

    @Test
    void aValueSpellingAHashOrTheSharedKeyKeepsABucketOfItsOwn() {
        Guard guard = limiter()
                .guard(Rule.builder("api")
                        .key("header:X-Key")
                        .limits("1/1h")
                        .onMissingKey(io.github.ratelimit.MissingKeyPolicy.SHARED)
                        .build());
        Decision hashed = guard.acquire(header("X-Key", "k".repeat(200)));
        assertThat(hashed.permitted()).isTrue();
        String hashText = hashed.verdicts().get(0).key();
        assertThat(guard.acquire(header("X-Key", hashText)).permitted())
                .as("the hash's text as a value")
                .isTrue();
        assertThat(guard.acquire(RequestContext.empty()).permitted())
                .as("the shared bucket")
                .isTrue();
        assertThat(guard.acquire(header("X-Key", "~missing")).permitted())
                .as("the shared key's text")
                .isTrue();
        assertThat(guard.acquire(header("X-Key", "k".repeat(200))).permitted()).isFalse();
    }

    @Test
    void bracesAndPercentSignsInKeysStayApart() {
        Guard guard = limiter()
                .guard(Rule.builder("api").key("header:X-Key").limits("1/1h").build());
        for (String value : List.of("a{b}", "a%7Bb%7D", "a%257Bb", "a}b{", "a%b")) {
            assertThat(guard.acquire(header("X-Key", value)).permitted())
                    .as(value)
                    .isTrue();
        }
    }

    @Test
    void randomRulesAndValuesWithDifferentIdentitiesNeverShareABucket() {
        long seed = Long.getLong("ratelimit.test.seed", System.nanoTime());
        RandomKeyCases cases = new RandomKeyCases(seed);
        int checked = 0;
        for (int pair = 0; checked < 25 && pair < 1_000; pair++) {
            RandomKeyCases.Case a = cases.next();
            // The second case: the same rule with another request, or a rule whose name extends the first's.
            RandomKeyCases.Case b = pair % 2 == 0
                    ? new RandomKeyCases.Case(a.rule(), a.expression(), cases.request())
                    : new RandomKeyCases.Case(a.rule() + ":" + cases.ruleName(), cases.expression(), cases.request());
            if (a.identity() == null || b.identity() == null || a.identity().equals(b.identity())) {
                continue;
            }
            String namespace = "p" + pair + "."; // a prefix keeps pairs apart and names aligned
            Guard first = limiter()
                    .guard(Rule.builder(namespace + a.rule())
                            .key(a.expression())
                            .limits("1/1h")
                            .build());
            Guard second = a.rule().equals(b.rule())
                    ? first
                    : limiter()
                            .guard(Rule.builder(namespace + b.rule())
                                    .key(b.expression())
                                    .limits("1/1h")
                                    .build());
            assertThat(first.acquire(a.request().context()).permitted())
                    .as("%s (seed %d)", a, seed)
                    .isTrue();
            assertThat(second.acquire(b.request().context()).permitted())
                    .as("%s after %s shares its bucket (seed %d)", b, a, seed)
                    .isTrue();
            checked++;
        }
        assertThat(checked).isEqualTo(25);
    }

    @Test
    void rejectsSixthRequestWithinOneSecond() {
        Guard guard = limiter().guard(Rule.builder("api").limits("5/1s").build());
        assertThat(fire(guard, RequestContext.empty(), 6))
                .containsExactly(
                        Outcome.ALLOWED,
                        Outcome.ALLOWED,
                        Outcome.ALLOWED,
                        Outcome.ALLOWED,
                        Outcome.ALLOWED,
                        Outcome.REJECTED);
        assertThat(guard.acquire(RequestContext.empty()).retryAfterNanos()).isEqualTo(200_000_000L);
    }

    @Test
    void enforcesEveryWindowOfARuleTogether() {
        Guard guard =
                limiter().guard(Rule.builder("api").limits("5/1s", "12/1m").build());
        long total = 0;
        for (int second = 0; second < 4; second++) {
            total += allowed(fire(guard, RequestContext.empty(), 5));
            clock.advance(Duration.ofSeconds(1));
        }
        assertThat(total).isEqualTo(12);
        Decision d = guard.acquire(RequestContext.empty());
        assertThat(d.bindingWindow().name()).isEqualTo("1m");
        assertThat(d.retryAfterNanos()).isEqualTo(1_000_000_000L);
    }

    @Test
    void refillsWithTime() {
        Guard guard = limiter().guard(Rule.builder("api").limits("10/1s").build());
        assertThat(allowed(fire(guard, RequestContext.empty(), 12))).isEqualTo(10);
        clock.advance(Duration.ofMillis(300));
        assertThat(allowed(fire(guard, RequestContext.empty(), 5))).isEqualTo(3);
    }

    @Test
    void countsEachKeyApartIncludingKeysWithBracesAndHugeKeys() {
        Guard guard =
                limiter().guard(Rule.builder("api").key("user").limits("2/1m").build());
        assertThat(allowed(fire(guard, user("alice"), 3))).isEqualTo(2);
        assertThat(allowed(fire(guard, user("bob"), 3))).isEqualTo(2);
        assertThat(allowed(fire(guard, user("{alice}"), 3))).isEqualTo(2);
        assertThat(allowed(fire(guard, user("}x{"), 3))).isEqualTo(2);
        assertThat(allowed(fire(guard, user("x".repeat(10_000)), 3))).isEqualTo(2);
        assertThat(allowed(fire(guard, user("x".repeat(10_001)), 3))).isEqualTo(2);
    }

    @Test
    void chargesTheCostOfEachCall() {
        Guard guard =
                limiter().guard(Rule.builder("export").limits("10/1m").cost(4).build());
        assertThat(fire(guard, RequestContext.empty(), 3))
                .containsExactly(Outcome.ALLOWED, Outcome.ALLOWED, Outcome.REJECTED);
        assertThat(guard.acquire(RequestContext.empty()).retryAfterNanos()).isEqualTo(12_000_000_000L);
    }

    @Test
    void delaysSoftCallsByTheComputedTimeAndRejectsLongerWaitsWithoutConsuming() {
        Guard soft = limiter()
                .guard(Rule.builder("reports")
                        .limits("2/1s")
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofMillis(700))
                        .build());
        fire(soft, RequestContext.empty(), 2);
        java.util.concurrent.CompletableFuture<Decision> delayed = soft.acquireAsync(RequestContext.empty());
        assertThat(delayed).isNotDone();
        // The next call would wait 1 s, longer than maxDelay: rejected at once, nothing reserved.
        Decision rejected = soft.acquireAsync(RequestContext.empty()).join();
        assertThat(rejected.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(rejected.retryAfterNanos()).isEqualTo(1_000_000_000L);
        clock.advance(Duration.ofMillis(500));
        assertThat(delayed.join().delayNanos()).isEqualTo(500_000_000L);
        clock.advance(Duration.ofMillis(500));
        assertThat(soft.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
    }

    @Test
    void shadowRulesNeverBlock() {
        Guard guard = limiter()
                .guard(Rule.builder("trial").limits("2/1s").mode(Mode.SHADOW).build());
        assertThat(fire(guard, RequestContext.empty(), 4))
                .containsExactly(Outcome.ALLOWED, Outcome.ALLOWED, Outcome.SHADOW_REJECTED, Outcome.SHADOW_REJECTED);
    }

    @Test
    void aRejectionReturnsTheTokensOfTheOtherRules() {
        RateLimiter limiter = limiter();
        Guard both = limiter.guard(
                Rule.builder("everyone").limits("10/1m").build(),
                Rule.builder("per-user").key("user").limits("1/1m").build());
        both.acquire(user("alice"));
        assertThat(fire(both, user("alice"), 5)).containsOnly(Outcome.REJECTED);
        Guard everyone = limiter.guard(Rule.builder("everyone").limits("10/1m").build());
        assertThat(allowed(fire(everyone, RequestContext.empty(), 10))).isEqualTo(9);
    }

    @Test
    void resetsFixedWindowsAtClockAlignedBoundaries() {
        clock.advance(Duration.ofSeconds(50));
        Guard guard = limiter()
                .guard(Rule.builder("fixed")
                        .limits("3/1m")
                        .algorithm(Algorithm.FIXED_WINDOW)
                        .build());
        assertThat(allowed(fire(guard, RequestContext.empty(), 4))).isEqualTo(3);
        assertThat(guard.acquire(RequestContext.empty()).retryAfterNanos()).isEqualTo(10_000_000_000L);
        clock.advance(Duration.ofSeconds(10));
        assertThat(allowed(fire(guard, RequestContext.empty(), 4))).isEqualTo(3);
    }

    @Test
    void appliesAChangedPerKeyLimitToTheExistingBucket() {
        AtomicReference<List<Limit>> plan = new AtomicReference<>(List.of(Limit.parse("60/1m")));
        Guard guard = limiter(RateLimiter.builder().limitProvider((rule, key) -> plan.get(), Duration.ofSeconds(30)))
                .guard(Rule.builder("api").key("user").limits("1/1m").build());
        assertThat(allowed(fire(guard, user("alice"), 40))).isEqualTo(40);
        plan.set(List.of(Limit.parse("600/1m")));
        clock.advance(Duration.ofSeconds(31));
        Decision.Window w =
                guard.acquire(user("alice")).verdicts().get(0).windows().get(0);
        assertThat(w.limit()).isEqualTo(600);
        assertThat(w.remaining()).isEqualTo(51 + 540 - 1);
    }

    @Test
    void appliesAChangedRuleToBucketsAlreadyInTheStore() {
        Guard before = limiter().guard(Rule.builder("api").limits("5/1m").build());
        assertThat(allowed(fire(before, RequestContext.empty(), 5))).isEqualTo(5);
        clock.advance(Duration.ofMillis(10));
        // A new deployment raises the limit: the 5 spent stay spent, the 5 new ones are there at once.
        Guard after = limiter().guard(Rule.builder("api").limits("10/1m").build());
        Decision d = after.acquire(RequestContext.empty());
        assertThat(d.verdicts().get(0).windows().get(0).limit()).isEqualTo(10);
        assertThat(d.verdicts().get(0).windows().get(0).remaining()).isEqualTo(4);
        assertThat(allowed(fire(after, RequestContext.empty(), 5))).isEqualTo(4);
    }

    @Test
    void failsOverToTheRulePolicyOnlyWhenTheStoreFails() {
        Guard guard = limiter()
                .guard(Rule.builder("api")
                        .limits("1/1m")
                        .onStoreFailure(StoreFailurePolicy.FAIL_CLOSED)
                        .build());
        assertThat(guard.acquire(RequestContext.empty()).binding().basis()).isEqualTo(Basis.BUCKET);
    }

    // ---- every algorithm: what a rule means does not depend on how it counts ---------------------------------

    private static Rule.Builder rule(String name, Algorithm algorithm, String... limits) {
        return Rule.builder(name).limits(limits).algorithm(algorithm);
    }

    /** A peek takes nothing, and says what deciding the call would: the same windows, the same wait. */
    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void aPeekTakesNothingAndSaysWhatADecisionWould(Algorithm algorithm) {
        Guard guard = limiter()
                .guard(Rule.builder("peek")
                        .key("user")
                        .limits("3/1m")
                        .algorithm(algorithm)
                        .build());
        RequestContext alice = user("alice");
        long capacity = algorithm.capacity(Limit.parse("3/1m"));
        for (int i = 0; i < 20; i++) {
            Decision peek = guard.peek(alice);
            assertThat(peek.outcome()).isEqualTo(Outcome.ALLOWED);
            assertThat(peek.verdicts().get(0).windows().get(0).remaining()).isEqualTo(capacity);
        }
        assertThat(guard.acquire(alice).verdicts().get(0).windows().get(0).remaining())
                .isEqualTo(capacity - 1);
        assertThat(guard.peek(alice).verdicts().get(0).windows().get(0).remaining())
                .as("what the call left")
                .isEqualTo(capacity - 1);
        long admitted = 1;
        while (guard.acquire(alice).permitted()) {
            admitted++;
        }
        assertThat(admitted).as("peeks took nothing").isEqualTo(capacity);
        Decision peek = guard.peek(alice);
        Decision rejected = guard.acquire(alice);
        assertThat(peek.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(peek.retryAfterNanos()).isPositive().isEqualTo(rejected.retryAfterNanos());
        clock.advance(Duration.ofNanos(peek.retryAfterNanos()));
        assertThat(guard.peek(alice).outcome()).as("when the peek said").isEqualTo(Outcome.ALLOWED);
        assertThat(guard.acquire(alice).permitted()).isTrue();
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
    void everyAlgorithmRejectsTheCallAfterTheLimitAndAdmitsAgainLater(Algorithm algorithm) {
        Guard guard =
                limiter().guard(rule("api-" + algorithm, algorithm, "5/1s").build());
        assertThat(fire(guard, RequestContext.empty(), 6))
                .containsExactly(
                        Outcome.ALLOWED,
                        Outcome.ALLOWED,
                        Outcome.ALLOWED,
                        Outcome.ALLOWED,
                        Outcome.ALLOWED,
                        Outcome.REJECTED);
        Decision rejected = guard.acquire(RequestContext.empty());
        assertThat(rejected.retryAfterNanos()).isPositive();
        assertThat(rejected.bindingWindow().remaining()).isZero();
        clock.advanceNanos(rejected.retryAfterNanos());
        assertThat(guard.acquire(RequestContext.empty()).outcome())
                .as("at the Retry-After it promised")
                .isEqualTo(Outcome.ALLOWED);
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
    void everyAlgorithmDecidesItsWindowsTogetherAndCountsARejectedCallInNone(Algorithm algorithm) {
        Guard guard = limiter()
                .guard(rule("two-" + algorithm, algorithm, "3/1s", "4/1m").build());
        assertThat(allowed(fire(guard, RequestContext.empty(), 5))).isEqualTo(3);
        clock.advance(Duration.ofSeconds(2));
        // The per-second window has room again, the per-minute window only for one: rejected calls took nothing.
        assertThat(fire(guard, RequestContext.empty(), 3))
                .containsExactly(Outcome.ALLOWED, Outcome.REJECTED, Outcome.REJECTED);
        Decision d = guard.acquire(RequestContext.empty());
        assertThat(d.bindingWindow().name()).isEqualTo("1m");
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
    void everyAlgorithmGivesBackWhatARejectionByAnotherRuleTook(Algorithm algorithm) {
        RateLimiter limiter = limiter();
        Rule everyone = rule("everyone-" + algorithm, algorithm, "10/1m").build();
        Guard both = limiter.guard(
                everyone,
                Rule.builder("per-user-" + algorithm).key("user").limits("1/1m").build());
        both.acquire(user("alice"));
        assertThat(fire(both, user("alice"), 5)).containsOnly(Outcome.REJECTED);
        assertThat(allowed(fire(limiter.guard(everyone), RequestContext.empty(), 10)))
                .isEqualTo(9);
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
    void everyAlgorithmChargesTheCostAndKeepsShadowRulesOpen(Algorithm algorithm) {
        Guard costly = limiter()
                .guard(rule("export-" + algorithm, algorithm, "10/1m").cost(4).build());
        assertThat(fire(costly, RequestContext.empty(), 3))
                .containsExactly(Outcome.ALLOWED, Outcome.ALLOWED, Outcome.REJECTED);
        Guard shadow = limiter()
                .guard(rule("trial-" + algorithm, algorithm, "2/1s")
                        .mode(Mode.SHADOW)
                        .build());
        assertThat(fire(shadow, RequestContext.empty(), 3))
                .containsExactly(Outcome.ALLOWED, Outcome.ALLOWED, Outcome.SHADOW_REJECTED);
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
    void everyAlgorithmDelaysSoftCallsToWhenTheyMayGo(Algorithm algorithm) {
        Guard soft = limiter()
                .guard(rule("soft-" + algorithm, algorithm, "2/1s")
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofSeconds(2))
                        .build());
        fire(soft, RequestContext.empty(), 2);
        Decision probe = soft.acquireAsync(RequestContext.empty()).getNow(null);
        assertThat(probe).as("delayed, not decided at once").isNull();
        clock.advance(Duration.ofSeconds(2));
        // Everything reserved has gone by now: the key admits again at once.
        assertThat(soft.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
    void everyAlgorithmAppliesAChangedPerKeyLimitToTheKeysState(Algorithm algorithm) {
        AtomicReference<List<Limit>> plan = new AtomicReference<>(List.of(Limit.parse("2/1m")));
        Guard guard = limiter(RateLimiter.builder().limitProvider((r, key) -> plan.get(), Duration.ofSeconds(1)))
                .guard(rule("plan-" + algorithm, algorithm, "1/1m").key("user").build());
        assertThat(allowed(fire(guard, user("alice"), 3))).isEqualTo(2);
        plan.set(List.of(Limit.parse("5/1m")));
        clock.advance(Duration.ofSeconds(2));
        Decision d = guard.acquire(user("alice"));
        assertThat(d.verdicts().get(0).windows().get(0).limit()).isEqualTo(5);
        assertThat(d.permitted()).isTrue();
    }

    // ---- sliding window log: exact ----------------------------------------------------------------------------

    @Test
    void theLogAdmitsExactlyTheLimitInEveryRollingWindow() {
        Guard guard = limiter()
                .guard(rule("log", Algorithm.SLIDING_WINDOW_LOG, "10/1s").build());
        assertThat(allowed(fire(guard, RequestContext.empty(), 10))).isEqualTo(10);
        clock.advance(Duration.ofMillis(500));
        Decision half = guard.acquire(RequestContext.empty());
        assertThat(allowed(fire(guard, RequestContext.empty(), 4))).isZero();
        assertThat(half.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(half.retryAfterNanos()).isEqualTo(500_000_000L);
        assertThat(half.bindingWindow().resetNanos()).isEqualTo(500_000_000L);
        clock.advance(Duration.ofMillis(500));
        assertThat(allowed(fire(guard, RequestContext.empty(), 11))).isEqualTo(10);
    }

    @Test
    void theLogHasNoBurstAtAWindowEdge() {
        Guard guard = limiter()
                .guard(rule("edge", Algorithm.SLIDING_WINDOW_LOG, "4/1s").build());
        clock.advance(Duration.ofMillis(900));
        assertThat(allowed(fire(guard, RequestContext.empty(), 4))).isEqualTo(4);
        clock.advance(Duration.ofMillis(200)); // a fixed window would have reset at 1.0 s
        assertThat(allowed(fire(guard, RequestContext.empty(), 4))).isZero();
        Decision d = guard.acquire(RequestContext.empty());
        assertThat(d.retryAfterNanos()).isEqualTo(800_000_000L);
    }

    @Test
    void theLogsSoftWaitIsTheTimeUntilEnoughCallsSlideOut() {
        Guard soft = limiter()
                .guard(rule("log-soft", Algorithm.SLIDING_WINDOW_LOG, "2/1s")
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofMillis(700))
                        .build());
        fire(soft, RequestContext.empty(), 2);
        clock.advance(Duration.ofMillis(400));
        java.util.concurrent.CompletableFuture<Decision> first = soft.acquireAsync(RequestContext.empty());
        java.util.concurrent.CompletableFuture<Decision> second = soft.acquireAsync(RequestContext.empty());
        // Both wait for the two calls at 0 to slide out at 1.0 s; a third would wait until the delayed ones do.
        Decision third = soft.acquireAsync(RequestContext.empty()).join();
        assertThat(third.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(third.retryAfterNanos()).isEqualTo(1_600_000_000L);
        clock.advance(Duration.ofMillis(600));
        assertThat(first.join().delayNanos()).isEqualTo(600_000_000L);
        assertThat(second.join().delayNanos()).isEqualTo(600_000_000L);
        assertThat(soft.acquireAsync(RequestContext.empty()).join().outcome()).isEqualTo(Outcome.REJECTED);
    }

    @Test
    void theLogCountsACostWithoutAnEntryPerPermit() {
        Guard guard = limiter()
                .guard(rule("log-cost", Algorithm.SLIDING_WINDOW_LOG, "10/1m")
                        .cost(4)
                        .build());
        fire(guard, RequestContext.empty(), 1);
        clock.advance(Duration.ofSeconds(10));
        fire(guard, RequestContext.empty(), 1);
        Decision d = guard.acquire(RequestContext.empty());
        assertThat(d.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(d.bindingWindow().remaining()).isEqualTo(2);
        assertThat(d.retryAfterNanos()).as("until the first call's 4 slide out").isEqualTo(50_000_000_000L);
    }

    // ---- sliding window counter: the weighted previous window ------------------------------------------------

    @Test
    void theCounterWeighsThePreviousWindowByItsOverlap() {
        Guard guard = limiter()
                .guard(rule("counter", Algorithm.SLIDING_WINDOW_COUNTER, "10/1s")
                        .build());
        assertThat(allowed(fire(guard, RequestContext.empty(), 11))).isEqualTo(10);
        Decision rejected = guard.acquire(RequestContext.empty());
        // The next second starts with the 10 weighted 1, so the 11th call fits once a tenth of it has passed.
        assertThat(rejected.retryAfterNanos()).isEqualTo(1_100_000_000L);
        clock.advance(Duration.ofMillis(1_500));
        // Half of the previous second still overlaps: 10 × 0.5 = 5 counted, so 5 more fit.
        assertThat(allowed(fire(guard, RequestContext.empty(), 8))).isEqualTo(5);
        clock.advance(Duration.ofMillis(1_000));
        // Now the 5 are the previous second's, weighted 0.5: 2.5 counted, 7 more fit.
        assertThat(allowed(fire(guard, RequestContext.empty(), 10))).isEqualTo(7);
    }

    @Test
    void theCountersSoftWaitKeepsTheWeightedCountWithinTheLimit() {
        Guard soft = limiter()
                .guard(rule("counter-soft", Algorithm.SLIDING_WINDOW_COUNTER, "4/1s")
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofSeconds(2))
                        .build());
        fire(soft, RequestContext.empty(), 4);
        java.util.concurrent.CompletableFuture<Decision> delayed = soft.acquireAsync(RequestContext.empty());
        // In the next second the 4 weigh 4 × (1 - x); a fifth call fits when that is at most 3: x = 0.25.
        clock.advance(Duration.ofMillis(1_250));
        assertThat(delayed.join().delayNanos()).isEqualTo(1_250_000_000L);
    }

    @Test
    void aCallDelayedByAFractionOfAMicrosecondMoreThanASlidingRulesMaxDelayIsStillDelayed() {
        // 3/1s delays the fourth call by a third of a second (333,333,333 ns, not whole microseconds); the log,
        // which has room, counts it when it runs. Redis rounded one bound up and the other down, and rejected it.
        Guard guard = limiter()
                .guard(
                        rule("bucket", Algorithm.TOKEN_BUCKET, "3/1s")
                                .mode(Mode.SOFT)
                                .maxDelay(Duration.ofSeconds(1))
                                .build(),
                        rule("log", Algorithm.SLIDING_WINDOW_LOG, "5/1s")
                                .mode(Mode.SOFT)
                                .maxDelay(Duration.ofMillis(100))
                                .build());
        List<Decision> decisions = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            guard.acquireAsync(RequestContext.empty()).thenAccept(decisions::add);
        }
        clock.advance(Duration.ofSeconds(1));
        assertThat(decisions)
                .extracting(Decision::outcome)
                .containsExactly(Outcome.ALLOWED, Outcome.ALLOWED, Outcome.ALLOWED, Outcome.DELAYED);
        // Redis counts in whole microseconds: the log counts the call at most a microsecond later.
        assertThat(decisions.get(3).delayNanos()).isBetween(333_333_333L, 333_334_000L);
    }

    @Test
    void aCounterKeyHoldsDelayedCallsInABoundedNumberOfIntervals() {
        // A rule validates its maxDelay against what a counter key holds; the store holds the line by itself too,
        // whatever a caller asks: 200 calls of 1/10ms, each allowed to wait 30 s, would need hundreds of intervals.
        KeyState state = store.state(
                new BucketStore.Key("bounded", "k"),
                BucketStore.Limits.of(
                        List.of(io.github.ratelimit.Limit.parse("1/10ms")), Algorithm.SLIDING_WINDOW_COUNTER),
                null);
        int reserved = 0;
        for (int i = 0; i < 200; i++) {
            KeyState.Probe probe = state.reserve(1, Duration.ofSeconds(30).toNanos());
            if (probe.consumed()) {
                reserved++;
            } else {
                assertThat(probe.waitNanos())
                        .as("a refused call is told how long it would have waited")
                        .isPositive();
            }
        }
        assertThat(reserved).isPositive().isLessThanOrEqualTo(Rule.MAX_COUNTER_DELAY_INTERVALS + 3);
    }

    // ---- refunds give back the call's own permits --------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"SLIDING_WINDOW_LOG", "SLIDING_WINDOW_COUNTER"})
    void aCallThatDidNotFailGivesBackItsOwnPermitsNotALaterCallsOnes(Algorithm algorithm) {
        Guard guard = limiter()
                .guard(rule("attempts-" + algorithm, algorithm, "2/1s")
                        .count(io.github.ratelimit.Rule.Counted.FAILURES)
                        .build());
        Decision x = guard.acquire(RequestContext.empty());
        clock.advance(Duration.ofMillis(900));
        Decision y = guard.acquire(RequestContext.empty());
        assertThat(x.permitted() && y.permitted()).isTrue();
        clock.advance(Duration.ofMillis(50));
        guard.completed(x, false); // x succeeded: its attempt is not counted
        clock.advance(Duration.ofMillis(50));
        // At 1.0 s only y (at 0.9 s) counts, so one more fits in (0, 1.0], not two.
        assertThat(fire(guard, RequestContext.empty(), 2)).containsExactly(Outcome.ALLOWED, Outcome.REJECTED);
    }

    @Test
    void aCancelledDelayedCallGivesBackItsOwnPlaceInTheLog() {
        Guard soft = limiter()
                .guard(rule("queue", Algorithm.SLIDING_WINDOW_LOG, "1/1s")
                        .mode(Mode.SOFT)
                        .maxDelay(Duration.ofSeconds(5))
                        .build());
        soft.acquire(RequestContext.empty()); // a, now
        java.util.concurrent.CompletableFuture<Decision> b = soft.acquireAsync(RequestContext.empty()); // at 1 s
        java.util.concurrent.CompletableFuture<Decision> c = soft.acquireAsync(RequestContext.empty()); // at 2 s
        b.cancel(false);
        clock.advance(Duration.ofSeconds(2));
        assertThat(c.join().delayNanos()).isEqualTo(2_000_000_000L);
        // c runs at 2 s; b's place at 1 s was given back, c's was not: the next call waits until 3 s.
        Decision d = soft.acquireAsync(RequestContext.empty()).getNow(null);
        assertThat(d).as("d is delayed, not admitted beside c").isNull();
    }

    // ---- a counter remembers as long as a count weighs ----------------------------------------------------------

    @Test
    void theCounterKeepsACountForTheWholeNextInterval() {
        Guard guard = limiter()
                .guard(rule("hourly", Algorithm.SLIDING_WINDOW_COUNTER, "1/1h").build());
        clock.advance(Duration.ofSeconds(1));
        assertThat(guard.acquire(RequestContext.empty()).permitted()).isTrue();
        // An hour and two seconds later, the call of the previous hour still weighs 3598/3600.
        clock.advance(Duration.ofHours(1).plusSeconds(2));
        assertThat(guard.acquire(RequestContext.empty()).permitted()).isFalse();
    }

    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"SLIDING_WINDOW_LOG", "SLIDING_WINDOW_COUNTER"})
    void aCallDelayedBySeveralSoftRulesIsCountedInEachWhenItRuns(Algorithm algorithm) {
        RateLimiter limiter = limiter();
        Rule perSecond = rule("second-" + algorithm, algorithm, "1/1s")
                .mode(Mode.SOFT)
                .maxDelay(Duration.ofSeconds(20))
                .build();
        Rule perTenSeconds = rule("ten-" + algorithm, algorithm, "1/10s")
                .mode(Mode.SOFT)
                .maxDelay(Duration.ofSeconds(20))
                .build();
        Guard both = limiter.guard(perSecond, perTenSeconds);
        assertThat(both.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
        // The second call may pass the first rule within 2 s, the second only later (the log: when the first call
        // leaves the 10 s window; the counter: when its interval no longer weighs, at 20 s): it runs then, and is
        // counted then in both.
        long runsAt = algorithm == Algorithm.SLIDING_WINDOW_LOG ? 10_000_000_000L : 20_000_000_000L;
        java.util.concurrent.CompletableFuture<Decision> delayed = both.acquireAsync(RequestContext.empty());
        clock.advanceNanos(runsAt);
        assertThat(delayed).isDone();
        Decision d = delayed.join();
        assertThat(d.delayNanos()).isEqualTo(runsAt);
        assertThat(d.verdicts()).allSatisfy(v -> assertThat(v.outcome()).isEqualTo(Outcome.DELAYED));
        // So a call of the first rule alone, right when it runs, must wait for the next second.
        Guard secondOnly = limiter.guard(perSecond);
        assertThat(secondOnly.acquireAsync(RequestContext.empty()).getNow(null))
                .as("not beside the delayed call")
                .isNull();
    }

    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"SLIDING_WINDOW_LOG", "SLIDING_WINDOW_COUNTER"})
    void aSoftRuleWithRoomAndAShortMaxDelayKeepsACallAnotherRuleDelays(Algorithm algorithm) {
        RateLimiter limiter = limiter();
        // Room for ten a second, and never a wait of its own beyond 100 ms; beside a rule that delays the call.
        Rule roomy = rule("roomy-" + algorithm, algorithm, "10/1s")
                .mode(Mode.SOFT)
                .maxDelay(Duration.ofMillis(100))
                .build();
        Rule perTenSeconds = rule("slow-" + algorithm, algorithm, "1/10s")
                .mode(Mode.SOFT)
                .maxDelay(Duration.ofSeconds(20))
                .build();
        Guard both = limiter.guard(roomy, perTenSeconds);
        assertThat(both.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
        long runsAt = algorithm == Algorithm.SLIDING_WINDOW_LOG ? 10_000_000_000L : 20_000_000_000L;
        java.util.concurrent.CompletableFuture<Decision> delayed = both.acquireAsync(RequestContext.empty());
        assertThat(delayed)
                .as("delayed by the slow rule, not rejected by the roomy one")
                .isNotDone();
        clock.advanceNanos(runsAt);
        Decision d = delayed.join();
        assertThat(d.outcome()).isEqualTo(Outcome.DELAYED);
        assertThat(d.delayNanos()).isEqualTo(runsAt);
    }
}
