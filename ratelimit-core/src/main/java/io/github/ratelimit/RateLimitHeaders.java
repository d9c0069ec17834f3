package io.github.ratelimit;

import java.util.ArrayList;
import java.util.List;
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
     * failure, missing key), gets none of them. What they say:
     *
     * <ul>
     *   <li>{@link Mode#SHADOW} rules are left out: a rule that only records must not make clients back off.</li>
     *   <li>Each item is named {@code <rule>-<window>} after the rule's {@link Verdict#publicName()}, never an
     *       unnamed {@code @RateLimit} rule's class and method ({@link RateLimitAnnotations}).</li>
     *   <li>{@code RateLimit-Policy} advertises each window's sustained rate, what a client may send without ever
     *       being refused: {@code w} is the period in whole seconds (at least 1) and {@code q} the tokens that
     *       period refills, rounded down ({@code 2/500ms} is {@code q=4;w=1}; {@code 5/1s burst=20} is
     *       {@code q=5;w=1}, and its burst shows as {@code r} up to 20).</li>
     *   <li>{@code RateLimit}'s {@code r} is the tokens left, {@code t} the seconds until the window is full again;
     *       on a rejection, the binding window's {@code t} is the {@code Retry-After} value, when the call could
     *       pass.</li>
     *   <li>{@code X-RateLimit-Limit} is the binding window's capacity (its burst), {@code Remaining} the tokens
     *       left and {@code Reset} the seconds until it is full again, or on a rejection {@code Retry-After}.</li>
     * </ul>
     *
     * @param decision the decision
     * @param styles the header families to write
     * @param sink receives each header name and value, once per name
     */
    public static void write(Decision decision, Set<HeaderStyle> styles, BiConsumer<String, String> sink) {
        boolean rejected = decision.outcome() == Outcome.REJECTED;
        long retryAfter = rejected ? retryAfterSeconds(decision) : 0;
        if (rejected) {
            sink.accept(RETRY_AFTER, Long.toString(retryAfter));
        }
        Decision shown = withoutShadowRules(decision);
        WindowState binding = shown.bindingWindow();
        if (styles.contains(HeaderStyle.X_RATELIMIT) && binding != null) {
            sink.accept(X_RATELIMIT_LIMIT, Long.toString(binding.limit()));
            sink.accept(X_RATELIMIT_REMAINING, Long.toString(binding.remaining()));
            sink.accept(X_RATELIMIT_RESET, Long.toString(rejected ? retryAfter : ceilSeconds(binding.resetNanos())));
        }
        if (styles.contains(HeaderStyle.IETF_DRAFT_09)) {
            StringBuilder policy = new StringBuilder();
            StringBuilder current = new StringBuilder();
            for (Verdict v : shown.verdicts()) {
                for (WindowState w : v.windows()) {
                    if (policy.length() > 0) {
                        policy.append(", ");
                        current.append(", ");
                    }
                    String item = '"' + v.publicName() + '-' + w.name() + '"';
                    long windowSeconds = Math.max(1, ceilSeconds(w.period().toNanos()));
                    policy.append(item).append(";q=").append(quota(w, windowSeconds)).append(";w=").append(windowSeconds);
                    long reset = rejected && w == binding ? retryAfter : ceilSeconds(w.resetNanos());
                    current.append(item).append(";r=").append(w.remaining()).append(";t=").append(reset);
                }
            }
            if (policy.length() > 0) {
                sink.accept(RATELIMIT_POLICY, policy.toString());
                sink.accept(RATELIMIT, current.toString());
            }
        }
    }

    /** The tokens a window refills in {@code seconds} (at least its period), rounded down: its sustained quota. */
    private static long quota(WindowState w, long seconds) {
        long periodNanos = w.period().toNanos();
        if (periodNanos == seconds * 1_000_000_000L) {
            return w.permits();
        }
        return java.math.BigInteger.valueOf(w.permits()).multiply(java.math.BigInteger.valueOf(seconds))
                .multiply(java.math.BigInteger.valueOf(1_000_000_000L))
                .divide(java.math.BigInteger.valueOf(periodNanos)).min(java.math.BigInteger.valueOf(Long.MAX_VALUE))
                .longValue();
    }

    /** The decision as clients see it: without the verdicts of rules that only record. */
    private static Decision withoutShadowRules(Decision decision) {
        List<Verdict> verdicts = decision.verdicts();
        boolean any = false;
        for (Verdict v : verdicts) {
            any |= v.mode() == Mode.SHADOW;
        }
        if (!any) {
            return decision;
        }
        List<Verdict> enforced = new ArrayList<>(verdicts.size());
        for (Verdict v : verdicts) {
            if (v.mode() != Mode.SHADOW) {
                enforced.add(v);
            }
        }
        return new Decision(decision.outcome(), enforced, decision.delayNanos(), decision.retryAfterNanos());
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
