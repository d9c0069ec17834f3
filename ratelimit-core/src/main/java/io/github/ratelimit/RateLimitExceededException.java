package io.github.ratelimit;

import java.util.Objects;

/**
 * Thrown by entry points that cannot answer with a response of their own (the Spring aspect on a service
 * method, for example) when a call is rejected. Web layers turn it into HTTP 429 with the rate-limit headers.
 */
public class RateLimitExceededException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient Decision decision;

    /**
     * @param decision the rejection
     */
    public RateLimitExceededException(Decision decision) {
        super(message(decision), null, false, false);
        this.decision = Objects.requireNonNull(decision, "decision");
    }

    /**
     * @return the decision that rejected the call
     */
    public Decision decision() {
        return decision;
    }

    private static String message(Decision decision) {
        Verdict v = decision.binding();
        if (v == null) {
            return "Rate limit exceeded";
        }
        String reason = switch (v.basis()) {
            case KEY_MISSING -> "no key could be resolved for rule '" + v.rule() + "'";
            case FAIL_CLOSED -> "the rate-limit store is unavailable and rule '" + v.rule() + "' fails closed";
            case WAITERS_FULL -> "too many calls are already waiting under rule '" + v.rule() + "'";
            case INTERRUPTED -> "interrupted while waiting under rule '" + v.rule() + "'";
            default -> "rate limit of rule '" + v.rule() + "' exceeded";
        };
        long retry = decision.retryAfterNanos();
        return retry > 0 ? reason + "; retry after " + Math.max(1, (retry + 999_999_999) / 1_000_000_000) + " s"
                : reason;
    }
}
