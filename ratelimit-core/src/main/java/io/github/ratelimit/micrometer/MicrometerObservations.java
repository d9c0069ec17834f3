package io.github.ratelimit.micrometer;

import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.internal.metrics.DecisionObservations;
import io.micrometer.observation.ObservationRegistry;

/**
 * Decisions as Micrometer observations, for an application that builds its limiter itself:
 *
 * <pre>{@code
 * RateLimiter limiter = RateLimiter.builder()
 *         .observer(MicrometerObservations.of(observationRegistry))
 *         .build(rules);
 * }</pre>
 *
 * Each observed decision ({@link RateLimiter.Observer} says which: every decision that asks a remote store, waits, is
 * refused or meets several rules; not a call of one rule that a bucket in this JVM allows at once) is an observation
 * named {@value #NAME}, from the start of the decision to the moment the call may go on or is refused: the store's
 * round trips and any {@code SOFT} wait. Its parent is the registry's current observation when the decision starts
 * (with tracing, the span of the request). Its key values are all of low cardinality, never the key: {@code rule}
 * (the rule whose verdict decided: the first that rejected or delayed the call, else the first rule),
 * {@code outcome} ({@code allowed}, {@code delayed}, {@code shadow_rejected}, {@code rejected}, or {@code error}
 * when deciding threw) and {@code basis} (as the {@code ratelimit.requests} counter's). With a registry that has no
 * handler, an observation costs next to nothing. The Spring Boot starter gives the application's registry to its
 * limiter this way; the {@code web.xml} filter, the one in its servlet context's attribute
 * {@code io.github.ratelimit.servlet.RateLimitFilter.observationRegistry}.
 *
 * <p>Micrometer 1.10 or newer must be on the class path (the core's dependency on it is optional).
 */
public final class MicrometerObservations {

    /** The name of each decision's observation, and of its span. */
    public static final String NAME = DecisionObservations.NAME;

    private MicrometerObservations() {}

    /**
     * @param registry the application's observation registry
     * @return an observer to give {@link RateLimiter.Builder#observer}, which makes each observed decision an
     *     observation of that registry; thread-safe
     * @throws NullPointerException when {@code registry} is {@code null}
     */
    public static RateLimiter.Observer of(ObservationRegistry registry) {
        return new DecisionObservations(registry);
    }
}
