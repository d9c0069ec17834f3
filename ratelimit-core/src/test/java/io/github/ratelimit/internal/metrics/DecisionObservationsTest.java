package io.github.ratelimit.internal.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.testing.ManualClock;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Each decision as a Micrometer observation: its name, key values, parent, and when it stops. */
class DecisionObservationsTest {

    /** What a tracing handler would see: every observation started, and its key values once stopped. */
    private static final class Recorded implements ObservationHandler<Observation.Context> {
        final List<Observation.Context> started = new CopyOnWriteArrayList<>();
        final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

        @Override
        public void onStart(Observation.Context context) {
            started.add(context);
        }

        @Override
        public void onStop(Observation.Context context) {
            stopped.add(context);
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }

        Map<String, String> keyValues(Observation.Context context) {
            return context.getLowCardinalityKeyValues().stream()
                    .collect(Collectors.toMap(kv -> kv.getKey(), kv -> kv.getValue()));
        }
    }

    private final ManualClock clock = new ManualClock();
    private final Recorded recorded = new Recorded();
    private final ObservationRegistry registry = ObservationRegistry.create();
    private final RateLimiter limiter;

    DecisionObservationsTest() {
        registry.observationConfig().observationHandler(recorded);
        limiter = RateLimiter.builder()
                .timeMeter(clock)
                .waiter(clock)
                .observer(new DecisionObservations(registry))
                .build();
    }

    @AfterEach
    void close() {
        limiter.close();
    }

    private static RequestContext user(String name) {
        return RequestContext.builder().principal(name).build();
    }

    @Test
    void observesEachDecisionWithItsRuleOutcomeAndBasisNeverTheKey() {
        Guard guard = limiter.guard(
                Rule.builder("api").key("user").limits("1/1m").build(),
                Rule.builder("burst").key("user").limits("5/1s").build());
        guard.acquire(user("alice"));
        guard.acquire(user("alice"));

        assertThat(recorded.stopped).hasSize(2);
        assertThat(recorded.stopped.get(0).getName()).isEqualTo("ratelimit.decision");
        assertThat(recorded.stopped.get(0).getContextualName()).isEqualTo("ratelimit.decision");
        assertThat(recorded.keyValues(recorded.stopped.get(0)))
                .containsExactlyInAnyOrderEntriesOf(Map.of("rule", "api", "outcome", "allowed", "basis", "bucket"));
        assertThat(recorded.keyValues(recorded.stopped.get(1)))
                .containsExactlyInAnyOrderEntriesOf(Map.of("rule", "api", "outcome", "rejected", "basis", "bucket"));
        assertThat(recorded.stopped).allSatisfy(c -> {
            assertThat(c.getAllKeyValues().stream().map(kv -> kv.getValue())).doesNotContain("alice");
            assertThat(c.getError()).isNull();
        });
    }

    @Test
    void aCallOneLocalBucketAllowsAtOnceIsNotObservedItsRejectionIs() {
        Guard guard =
                limiter.guard(Rule.builder("api").key("user").limits("1/1m").build());

        assertThat(guard.acquire(user("alice")).permitted()).isTrue();
        assertThat(guard.acquireAsync(user("bob")).join().permitted()).isTrue();
        assertThat(recorded.started)
                .as("allowed at once: not worth an observation")
                .isEmpty();

        assertThat(guard.acquire(user("alice")).permitted()).isFalse();
        assertThat(recorded.stopped)
                .singleElement()
                .satisfies(c -> assertThat(recorded.keyValues(c))
                        .containsExactlyInAnyOrderEntriesOf(
                                Map.of("rule", "api", "outcome", "rejected", "basis", "bucket")));
    }

    @Test
    void isAChildOfTheObservationCurrentWhenTheDecisionStarts() {
        Guard guard =
                limiter.guard(Rule.builder("api").key("user").limits("1/1m").build());
        guard.acquire(user("alice"));
        Observation request = Observation.start("http.server.requests", registry);
        try (Observation.Scope ignored = request.openScope()) {
            guard.acquire(user("alice"));
        }
        request.stop();

        Observation.Context decision = recorded.stopped.stream()
                .filter(c -> c.getName().equals("ratelimit.decision"))
                .findFirst()
                .orElseThrow();
        assertThat(decision.getParentObservation()).isSameAs(request);
    }

    @Test
    void anAsynchronousWaitEndsTheObservationOnlyWhenTheCallMayGo() {
        Guard guard = limiter.guard(Rule.builder("soft")
                .key("user")
                .limits("1/1s")
                .mode(Mode.SOFT)
                .maxDelay(Duration.ofSeconds(2))
                .build());
        guard.acquire(user("bob"));
        CompletableFuture<Decision> waiting = guard.acquireAsync(user("bob"));

        assertThat(waiting).isNotDone();
        assertThat(recorded.started)
                .as("the first call, allowed at once, is not observed")
                .hasSize(1);
        assertThat(recorded.stopped)
                .as("the waiting call's observation is still open")
                .isEmpty();
        clock.advance(Duration.ofSeconds(1));
        assertThat(waiting).isCompleted();
        assertThat(recorded.stopped).hasSize(1);
        assertThat(recorded.keyValues(recorded.stopped.get(0))).containsEntry("outcome", "delayed");
    }

    @Test
    void aCancelledWaitStopsWithTheCancellationAsItsError() {
        Guard guard = limiter.guard(Rule.builder("soft")
                .key("user")
                .limits("1/1s")
                .mode(Mode.SOFT)
                .maxDelay(Duration.ofSeconds(2))
                .build());
        guard.acquire(user("carol"));
        CompletableFuture<Decision> waiting = guard.acquireAsync(user("carol"));
        waiting.cancel(false);

        assertThat(recorded.stopped).hasSize(1);
        assertThat(recorded.stopped.get(0).getError()).isInstanceOf(java.util.concurrent.CancellationException.class);
        assertThat(recorded.keyValues(recorded.stopped.get(0))).containsEntry("outcome", "error");
    }

    @Test
    void aFailingObserverNeverChangesTheDecision() {
        try (RateLimiter failing = RateLimiter.builder()
                .timeMeter(clock)
                .observer((rules, context) -> {
                    throw new IllegalStateException("observer down");
                })
                .build()) {
            Guard guard =
                    failing.guard(Rule.builder("api").key("user").limits("1/1m").build());
            assertThat(guard.acquire(user("dave")).permitted()).isTrue();
            assertThat(guard.acquire(user("dave")).permitted()).isFalse();
        }
        try (RateLimiter failingStop = RateLimiter.builder()
                .timeMeter(clock)
                .observer((rules, context) -> (d, f) -> {
                    throw new IllegalStateException("observer down");
                })
                .build()) {
            Guard guard = failingStop.guard(
                    Rule.builder("api").key("user").limits("1/1m").build());
            assertThat(guard.acquire(user("erin")).permitted()).isTrue();
            assertThat(guard.acquireAsync(user("erin")).join().permitted()).isFalse();
        }
    }

    @Test
    void anErrorInDecidingReachesTheCallerAndTheObservation() {
        Guard guard =
                limiter.guard(Rule.builder("api").key("user").limits("1/1m").build());
        assertThatThrownBy(() -> guard.acquire(user("frank"), 0)).isInstanceOf(IllegalArgumentException.class);
        assertThat(recorded.stopped).singleElement().satisfies(c -> {
            assertThat(c.getError()).isInstanceOf(IllegalArgumentException.class);
            assertThat(recorded.keyValues(c)).containsEntry("outcome", "error").containsEntry("rule", "api");
        });
    }
}
