package io.github.ratelimit.spring.boot.autoconfigure.diagnostics;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * Explains a start-up failure caused by rate-limit configuration, from the exception's fields: the description says
 * where the bad value is (an annotated method, a {@code ratelimit.*} property) and what is wrong with it, the action
 * what to do. Nothing is parsed out of prose. First among the analyzers: a {@code ratelimit.*} value Spring could not
 * convert fails binding with this exception as the cause, and its description says more than the binding's.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
public final class InvalidRateLimitConfigurationFailureAnalyzer
        extends AbstractFailureAnalyzer<InvalidRateLimitConfigurationException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidRateLimitConfigurationException cause) {
        String where = cause.where() == null || cause.where().isEmpty() ? "" : cause.where() + ": ";
        String description = "Rate limiting is misconfigured: " + where + cause.constraint();
        String action = cause.action() != null
                ? cause.action()
                : "Correct the value named above; ratelimit.* properties are described in docs/properties.md, "
                        + "@RateLimit's attributes in docs/spring-boot.md.";
        return new FailureAnalysis(description, action, cause);
    }
}
