package io.github.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import org.springframework.boot.test.context.assertj.ApplicationContextAssertProvider;

/** Finds why a context failed to start. */
public final class StartupFailures {

    private StartupFailures() {}

    /**
     * @param context a context that must have failed to start
     * @return the rate-limit configuration error in its failure's cause chain
     */
    public static Throwable configError(ApplicationContextAssertProvider<?> context) {
        assertThat(context).hasFailed();
        for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
            if (t instanceof InvalidRateLimitConfigurationException) {
                return t;
            }
        }
        throw new AssertionError("no InvalidRateLimitConfigurationException in " + context.getStartupFailure());
    }
}
