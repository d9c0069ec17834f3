package io.github.ratelimit.servlet;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.micrometer.MicrometerObservations;
import io.micrometer.observation.ObservationRegistry;
import jakarta.servlet.ServletContext;
import org.jspecify.annotations.Nullable;

/**
 * The observer of a filter configured from its rules file: the application's Micrometer {@link ObservationRegistry},
 * from the servlet-context attribute {@link RateLimitFilter#OBSERVATION_REGISTRY_ATTRIBUTE}. Micrometer's types are
 * linked only once that attribute is set, so an application without Micrometer never loads them.
 */
final class ObservationBinding {

    private ObservationBinding() {}

    /**
     * @param context the application's context
     * @return an observer of its attribute's registry, or {@code null} when the attribute is not set
     * @throws InvalidRateLimitConfigurationException when the attribute holds something else than an
     *     {@code ObservationRegistry}, or Micrometer's observation API is not on the class path
     */
    static RateLimiter.@Nullable Observer observer(ServletContext context) {
        Object registry = context.getAttribute(RateLimitFilter.OBSERVATION_REGISTRY_ATTRIBUTE);
        if (registry == null) {
            return null;
        }
        if (!observationPresent()) {
            throw invalid(
                    registry,
                    "Micrometer's observation API (io.micrometer:micrometer-observation, 1.10 or "
                            + "newer) is not on the class path of the library");
        }
        return Linked.observer(registry);
    }

    private static InvalidRateLimitConfigurationException invalid(Object registry, String constraint) {
        return new InvalidRateLimitConfigurationException(
                "servlet-context attribute " + RateLimitFilter.OBSERVATION_REGISTRY_ATTRIBUTE,
                registry.getClass().getName(),
                "holds a " + registry.getClass().getName() + ", but " + constraint,
                "Set it, from a ServletContextListener, to the application's "
                        + "io.micrometer.observation.ObservationRegistry, or remove it to observe nothing.");
    }

    private static boolean observationPresent() {
        try {
            Class.forName(
                    "io.micrometer.observation.ObservationRegistry", false, ObservationBinding.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** What links Micrometer's types: loaded only once they are known to be there. */
    private static final class Linked {

        static RateLimiter.Observer observer(Object registry) {
            if (!(registry instanceof ObservationRegistry observations)) {
                throw invalid(
                        registry,
                        "it must be an io.micrometer.observation.ObservationRegistry (of the Micrometer the "
                                + "library sees: one in the web application and one in the container are two)");
            }
            return MicrometerObservations.of(observations);
        }
    }
}
