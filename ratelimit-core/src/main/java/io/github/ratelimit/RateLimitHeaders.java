package io.github.ratelimit;

import java.util.Set;
import java.util.function.BiConsumer;

/**
 * Computes the rate-limit response headers from a {@link Decision}, so the servlet filter and the Spring
 * aspect write the same. Stateless and thread-safe.
 */
public final class RateLimitHeaders {

    /** The binding window's capacity. */
    public static final String X_RATELIMIT_LIMIT = "X-RateLimit-Limit";

    /** Tokens left in the binding window. */
    public static final String X_RATELIMIT_REMAINING = "X-RateLimit-Remaining";

    /** Whole seconds until the binding window is full again. */
    public static final String X_RATELIMIT_RESET = "X-RateLimit-Reset";

    /** Whole seconds, at least 1, until a rejected call could pass (RFC 9110). */
    public static final String RETRY_AFTER = "Retry-After";

    /** The IETF draft's field of current limits. */
    public static final String RATELIMIT = "RateLimit";

    /** The IETF draft's field of quota policies. */
    public static final String RATELIMIT_POLICY = "RateLimit-Policy";

    private RateLimitHeaders() {
    }

    /**
     * Writes the headers for a decision.
     *
     * <p>{@code Retry-After} is written for every {@link Outcome#REJECTED} decision. The styles' headers are
     * written whenever a bucket was consulted; a call no rule limited, or one decided without a bucket (store
     * failure, missing key), gets none of them.
     *
     * @param decision the decision
     * @param styles the header families to write
     * @param sink receives each header name and value, once per name
     */
    public static void write(Decision decision, Set<HeaderStyle> styles, BiConsumer<String, String> sink) {
        if (decision.outcome() == Outcome.REJECTED) {
            sink.accept(RETRY_AFTER, Long.toString(retryAfterSeconds(decision)));
        }
        if (styles.contains(HeaderStyle.X_RATELIMIT)) {
            WindowState w = decision.bindingWindow();
            if (w != null) {
                sink.accept(X_RATELIMIT_LIMIT, Long.toString(w.limit()));
                sink.accept(X_RATELIMIT_REMAINING, Long.toString(w.remaining()));
                sink.accept(X_RATELIMIT_RESET, Long.toString(ceilSeconds(w.resetNanos())));
            }
        }
        if (styles.contains(HeaderStyle.IETF_DRAFT_09)) {
            StringBuilder policy = new StringBuilder();
            StringBuilder current = new StringBuilder();
            for (Verdict v : decision.verdicts()) {
                for (WindowState w : v.windows()) {
                    if (policy.length() > 0) {
                        policy.append(", ");
                        current.append(", ");
                    }
                    String item = '"' + v.rule() + '-' + w.name() + '"';
                    policy.append(item).append(";q=").append(w.limit())
                            .append(";w=").append(Math.max(1, ceilSeconds(w.period().toNanos())));
                    current.append(item).append(";r=").append(w.remaining())
                            .append(";t=").append(ceilSeconds(w.resetNanos()));
                }
            }
            if (policy.length() > 0) {
                sink.accept(RATELIMIT_POLICY, policy.toString());
                sink.accept(RATELIMIT, current.toString());
            }
        }
    }

    /**
     * @param decision a rejection
     * @return the {@code Retry-After} value: whole seconds rounded up, at least 1
     */
    public static long retryAfterSeconds(Decision decision) {
        return Math.max(1, ceilSeconds(decision.retryAfterNanos()));
    }

    /**
     * @param nanos a non-negative duration in nanoseconds
     * @return whole seconds, rounded up
     */
    static long ceilSeconds(long nanos) {
        if (nanos <= 0) {
            return 0;
        }
        return (nanos - 1) / 1_000_000_000L + 1;
    }
}
