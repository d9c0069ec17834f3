package io.github.ratelimit.store;

import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketConfiguration;
import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Basis;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Limit;
import io.github.ratelimit.Mode;
import io.github.ratelimit.Outcome;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.StoreFailurePolicy;
import io.github.ratelimit.WindowState;
import io.github.ratelimit.testing.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One behaviour suite run against every store: whatever holds the buckets, a rule means the same. Time is
 * a manual clock shared by the limiter and the store, so no test waits for refill.
 */
abstract class BucketStoreContract {

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
            public Bucket bucket(BucketKey key, BucketConfiguration configuration) {
                return store.bucket(key, configuration);
            }
        };
        RateLimiter limiter = builder.store(shared).timeMeter(clock).waiter(clock).build();
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

    @Test
    void rejectsSixthRequestWithinOneSecond() {
        Guard guard = limiter().guard(Rule.builder("api").limits("5/1s").build());
        assertThat(fire(guard, RequestContext.empty(), 6)).containsExactly(Outcome.ALLOWED, Outcome.ALLOWED,
                Outcome.ALLOWED, Outcome.ALLOWED, Outcome.ALLOWED, Outcome.REJECTED);
        assertThat(guard.acquire(RequestContext.empty()).retryAfterNanos()).isEqualTo(200_000_000L);
    }

    @Test
    void enforcesEveryWindowOfARuleTogether() {
        Guard guard = limiter().guard(Rule.builder("api").limits("5/1s", "12/1m").build());
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
        Guard guard = limiter().guard(Rule.builder("api").key("user").limits("2/1m").build());
        assertThat(allowed(fire(guard, user("alice"), 3))).isEqualTo(2);
        assertThat(allowed(fire(guard, user("bob"), 3))).isEqualTo(2);
        assertThat(allowed(fire(guard, user("{alice}"), 3))).isEqualTo(2);
        assertThat(allowed(fire(guard, user("}x{"), 3))).isEqualTo(2);
        assertThat(allowed(fire(guard, user("x".repeat(10_000)), 3))).isEqualTo(2);
        assertThat(allowed(fire(guard, user("x".repeat(10_001)), 3))).isEqualTo(2);
    }

    @Test
    void chargesTheCostOfEachCall() {
        Guard guard = limiter().guard(Rule.builder("export").limits("10/1m").cost(4).build());
        assertThat(fire(guard, RequestContext.empty(), 3)).containsExactly(Outcome.ALLOWED, Outcome.ALLOWED, Outcome.REJECTED);
        assertThat(guard.acquire(RequestContext.empty()).retryAfterNanos()).isEqualTo(12_000_000_000L);
    }

    @Test
    void delaysSoftCallsByTheComputedTimeAndRejectsLongerWaitsWithoutConsuming() {
        Guard soft = limiter().guard(Rule.builder("reports").limits("2/1s").mode(Mode.SOFT)
                .maxDelay(Duration.ofMillis(700)).build());
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
        Guard guard = limiter().guard(Rule.builder("trial").limits("2/1s").mode(Mode.SHADOW).build());
        assertThat(fire(guard, RequestContext.empty(), 4)).containsExactly(Outcome.ALLOWED, Outcome.ALLOWED,
                Outcome.SHADOW_REJECTED, Outcome.SHADOW_REJECTED);
    }

    @Test
    void aRejectionReturnsTheTokensOfTheOtherRules() {
        RateLimiter limiter = limiter();
        Guard both = limiter.guard(Rule.builder("everyone").limits("10/1m").build(),
                Rule.builder("per-user").key("user").limits("1/1m").build());
        both.acquire(user("alice"));
        assertThat(fire(both, user("alice"), 5)).containsOnly(Outcome.REJECTED);
        Guard everyone = limiter.guard(Rule.builder("everyone").limits("10/1m").build());
        assertThat(allowed(fire(everyone, RequestContext.empty(), 10))).isEqualTo(9);
    }

    @Test
    void resetsFixedWindowsAtClockAlignedBoundaries() {
        clock.advance(Duration.ofSeconds(50));
        Guard guard = limiter().guard(Rule.builder("fixed").limits("3/1m").algorithm(Algorithm.FIXED_WINDOW).build());
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
        WindowState w = guard.acquire(user("alice")).verdicts().get(0).windows().get(0);
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
        Guard guard = limiter().guard(Rule.builder("api").limits("1/1m").onStoreFailure(StoreFailurePolicy.FAIL_CLOSED).build());
        assertThat(guard.acquire(RequestContext.empty()).binding().basis()).isEqualTo(Basis.BUCKET);
    }
}
