package io.github.ratelimit.spring.boot;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a start-up failure caused by rate-limit configuration: the message names where the bad value is
 * (an annotated method, a {@code ratelimit.*} property), the value and the constraint.
 */
final class InvalidRateLimitConfigurationFailureAnalyzer
        extends AbstractFailureAnalyzer<InvalidRateLimitConfigurationException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidRateLimitConfigurationException cause) {
        String message = cause.getMessage();
        int fix = lastSentenceStart(message);
        String description = "Rate limiting is misconfigured: " + (fix > 0 ? message.substring(0, fix).trim() : message);
        String action = fix > 0 ? message.substring(fix).trim()
                : "Correct the value named above; @RateLimit attributes and ratelimit.* properties are described in "
                + "the project's README.";
        return new FailureAnalysis(description, action, cause);
    }

    /** Where the message's last sentence (its fix) begins, or -1 when it has only one. */
    private static int lastSentenceStart(String message) {
        String m = message.endsWith(".") ? message.substring(0, message.length() - 1) : message;
        int i = m.lastIndexOf(". ");
        return i < 0 ? -1 : i + 2;
    }
}
