package io.github.ratelimit;

import io.github.ratelimit.Decision.Verdict;
import java.util.Objects;

/**
 * Thrown by entry points that cannot answer with a response of their own (the Spring aspect on a service
 * method, for example) when a call is rejected. Web layers turn it into HTTP 429 with the rate-limit headers.
 */
public class RateLimitExceededException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient Decision decision;

    /**
     * @param decision the rejection; the message is its {@link Decision#describe()}, which names the rule as clients
     *         see it ({@link Verdict#publicName()}), so an application may show it to them
     */
    public RateLimitExceededException(Decision decision) {
        super(decision.describe(), null, false, false);
        this.decision = Objects.requireNonNull(decision, "decision");
    }

    /**
     * @return the decision that rejected the call
     */
    public Decision decision() {
        return decision;
    }
}
