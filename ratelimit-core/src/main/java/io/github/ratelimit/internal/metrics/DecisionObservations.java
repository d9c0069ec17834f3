package io.github.ratelimit.internal.metrics;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Verdict;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Each decision observed ({@link RateLimiter.Observer} says which: not a call of one rule a local bucket allows at
 * once) as a Micrometer {@link Observation} named {@value #NAME}: an {@link RateLimiter.Observer} to give the
 * limiter ({@code RateLimiter.builder().observer(new DecisionObservations(registry))}); the Spring Boot starter does
 * when the application has an {@link ObservationRegistry}. With tracing, the observation is a span inside the
 * request's span (its parent is the registry's current observation when the decision starts), lasting from the start
 * of the decision to the moment the call may go on or is refused: the store's round trips and any SOFT wait. With
 * metrics, it is also a timer of that name.
 *
 * <p>Its key values are all of low cardinality, never the key: {@code rule} (the rule whose verdict decided: the
 * first that rejected or delayed the call, else the first rule), {@code outcome} ({@code allowed}, {@code delayed},
 * {@code shadow_rejected}, {@code rejected}, or {@code error} when deciding threw) and {@code basis} (as the
 * {@code ratelimit.requests} counter's). Micrometer 1.10 or newer; use this class only with it on the class path.
 */
public final class DecisionObservations implements RateLimiter.Observer {

    /** The observation's name, and the span's. */
    public static final String NAME = "ratelimit.decision";

    private final ObservationRegistry registry;

    /**
     * @param registry the application's observation registry
     */
    public DecisionObservations(ObservationRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    @Override
    public Stop start(List<Rule> rules, RequestContext context) {
        Observation observation = Observation.start(NAME, registry).contextualName(NAME);
        if (observation.isNoop()) {
            return (decision, failure) -> {};
        }
        return (decision, failure) -> {
            Verdict deciding = decision == null ? null : deciding(decision);
            if (deciding != null) {
                observation.lowCardinalityKeyValues(KeyValues.of(
                        "rule", deciding.rule(),
                        "outcome", deciding.outcome().name().toLowerCase(Locale.ROOT),
                        "basis", deciding.basis().name().toLowerCase(Locale.ROOT)));
            } else {
                observation.lowCardinalityKeyValues(KeyValues.of(
                        "rule",
                        rules.get(0).name(),
                        "outcome",
                        decision == null ? "error" : decision.outcome().name().toLowerCase(Locale.ROOT),
                        "basis",
                        "none"));
            }
            if (failure != null) {
                observation.error(failure);
            }
            observation.stop();
        };
    }

    /** The verdict that carries the decision's outcome: the first with it, or the first verdict, or none. */
    private static Verdict deciding(Decision decision) {
        for (Verdict v : decision.verdicts()) {
            if (v.outcome() == decision.outcome()) {
                return v;
            }
        }
        return decision.verdicts().isEmpty() ? null : decision.verdicts().get(0);
    }
}
