package io.github.ratelimit;

import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Decision.Verdict;
import java.math.BigInteger;
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

    private RateLimitHeaders() {}

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
     *       unnamed {@code @RateLimit} rule's class and method.</li>
     *   <li>{@code RateLimit-Policy} advertises each window's rate as a quota {@code q} per {@code w} seconds, over a
     *       time long enough to hold everything the window can hold at once: {@code w} is the window's period in
     *       whole seconds, at least 1, or longer when the window's capacity (its burst) takes longer to refill, and
     *       {@code q} the tokens the window refills in {@code w} seconds, rounded down, so never less than the
     *       capacity. {@code 5/1s} is {@code q=5;w=1}; {@code 5/1s burst=20}, whose 20 tokens refill in 4 s, is
     *       {@code q=20;w=4}; {@code 2/500ms} is {@code q=4;w=1}. A client spreading its calls at {@code q} per
     *       {@code w} is never refused by the window; one sending {@code q} at once is when {@code q} is above the
     *       capacity ({@code 2/500ms} holds 2 at once).</li>
     *   <li>{@code RateLimit}'s {@code r} is the tokens left, never more than its policy's {@code q}; {@code t} the
     *       seconds until the window is full again, 0 when it is full (nothing of it is used); on a rejection, the
     *       binding window's {@code t} is the {@code Retry-After} value, when the call could pass.</li>
     *   <li>A concurrency rule's item ({@link Rule#concurrency()}) counts calls in flight, in the draft's quota unit for
     *       them: {@code RateLimit-Policy: "slow-concurrency";q=2;qu="concurrent-requests"} and
     *       {@code RateLimit: "slow-concurrency";r=1}, with no {@code w} or {@code t}: nothing refills with time, and
     *       nothing says when a call in flight ends (a rejection's {@code Retry-After} is 1 second).</li>
     *   <li>{@code X-RateLimit-Limit} is the binding window's {@code q}, the number the {@code RateLimit-Policy} item
     *       of that window says, {@code Remaining} its {@code r}, and {@code Reset} its {@code t}, or on a
     *       rejection {@code Retry-After}.</li>
     * </ul>
     *
     * <p>Why {@code q} holds the burst (draft-ietf-httpapi-ratelimit-headers-09, sections 3.1 and 4.1): {@code q} is
     * "the quota allocated by this policy", {@code w} its time window, and {@code r} "the remaining quota units for
     * the identified policy"; a remaining quota above the quota, as {@code q=5} with {@code r=19} for a rested
     * {@code 5/1s burst=20} client, contradicts the policy it reports on. Clamping {@code r} to 5 would hide tokens
     * the client has; advertising the burst with the window that refills it keeps both numbers true, and the
     * rate ({@code q/w}, 5 per second) unchanged. Where {@code q} is the capacity, as for every whole-second period
     * without a burst and for {@code 5/1s burst=20}, a client may also send all of {@code q} at once.
     *
     * @param decision the decision
     * @param styles the header families to write
     * @param sink receives each header name and value, once per name
     */
    public static void write(Decision decision, Set<HeaderStyle> styles, BiConsumer<String, String> sink) {
        boolean rejected = decision.outcome() == Outcome.REJECTED;
        long retryAfter = rejected ? retryAfterSeconds(decision) : 0;
        if (rejected) {
            sink.accept(RETRY_AFTER, text(retryAfter));
        }
        Decision shown = withoutShadowRules(decision);
        Decision.Window binding = shown.bindingWindow();
        if (styles.contains(HeaderStyle.X_RATELIMIT) && binding != null) {
            long quota = quota(binding, windowSeconds(binding));
            sink.accept(X_RATELIMIT_LIMIT, text(quota));
            sink.accept(X_RATELIMIT_REMAINING, text(Math.min(binding.remaining(), quota)));
            sink.accept(X_RATELIMIT_RESET, text(rejected ? retryAfter : resetSeconds(binding)));
        }
        if (styles.contains(HeaderStyle.IETF_DRAFT_09)) {
            // Sized for the usual one or two windows, so neither builder grows.
            StringBuilder policy = new StringBuilder(96);
            StringBuilder current = new StringBuilder(96);
            List<Verdict> verdicts = shown.verdicts();
            for (int i = 0; i < verdicts.size(); i++) {
                Verdict v = verdicts.get(i);
                List<Decision.Window> windows = v.windows();
                for (int j = 0; j < windows.size(); j++) {
                    Decision.Window w = windows.get(j);
                    if (policy.length() > 0) {
                        policy.append(", ");
                        current.append(", ");
                    }
                    item(policy, v, w);
                    item(current, v, w);
                    if (w.concurrent()) {
                        // Calls in flight, not in time: the draft's quota unit for them, and no window or reset.
                        policy.append(";q=").append(w.limit()).append(";qu=\"concurrent-requests\"");
                        current.append(";r=").append(Math.min(w.remaining(), w.limit()));
                        continue;
                    }
                    long windowSeconds = windowSeconds(w);
                    long quota = quota(w, windowSeconds);
                    policy.append(";q=").append(quota).append(";w=").append(windowSeconds);
                    long reset = rejected && w == binding ? retryAfter : resetSeconds(w);
                    current.append(";r=")
                            .append(Math.min(w.remaining(), quota))
                            .append(";t=")
                            .append(reset);
                }
            }
            if (policy.length() > 0) {
                sink.accept(RATELIMIT_POLICY, policy.toString());
                sink.accept(RATELIMIT, current.toString());
            }
        }
    }

    /** The text of the numbers headers say most: seconds up to an hour, and what is left of small limits. */
    private static final String[] SMALL_NUMBERS = new String[3601];

    static {
        for (int i = 0; i < SMALL_NUMBERS.length; i++) {
            SMALL_NUMBERS[i] = Integer.toString(i);
        }
    }

    /** @return a non-negative number's decimal text, made once for the usual small ones */
    private static String text(long n) {
        return n >= 0 && n < SMALL_NUMBERS.length ? SMALL_NUMBERS[(int) n] : Long.toString(n);
    }

    /** Appends a window's item name: {@code "<rule>-<window>"}, quoted. */
    private static void item(StringBuilder to, Verdict v, Decision.Window w) {
        to.append('"').append(v.publicName()).append('-').append(w.name()).append('"');
    }

    /** Whole seconds until a window is full again: 0 when it is full, whatever its state says. */
    private static long resetSeconds(Decision.Window w) {
        return w.remaining() >= w.limit() || w.concurrent() ? 0 : ceilSeconds(w.resetNanos());
    }

    /**
     * The window a policy item advertises: the period, or the time the capacity takes to refill from empty when that
     * is longer (a burst), in whole seconds rounded up, at least 1.
     */
    static long windowSeconds(Decision.Window w) {
        long period = w.period().toNanos();
        long fill = period;
        if (w.limit() > w.permits()) {
            // capacity * period / permits, rounded up
            long high = Math.multiplyHigh(w.limit(), period);
            long low = w.limit() * period;
            fill = high == 0 && low >= 0
                    ? low / w.permits() + (low % w.permits() == 0 ? 0 : 1)
                    : BigInteger.valueOf(w.limit())
                            .multiply(BigInteger.valueOf(period))
                            .add(BigInteger.valueOf(w.permits() - 1))
                            .divide(BigInteger.valueOf(w.permits()))
                            .min(BigInteger.valueOf(Long.MAX_VALUE))
                            .longValue();
        }
        return Math.max(1, ceilSeconds(Math.max(period, fill)));
    }

    /**
     * The tokens a window refills in {@code seconds} (at least its period and its capacity's refill time), rounded
     * down: never less than its capacity.
     */
    static long quota(Decision.Window w, long seconds) {
        if (w.concurrent()) {
            return w.limit();
        }
        long periodNanos = w.period().toNanos();
        if (seconds <= Long.MAX_VALUE / 1_000_000_000L) {
            long windowNanos = seconds * 1_000_000_000L;
            if (periodNanos == windowNanos) {
                return w.permits();
            }
            long low = w.permits() * windowNanos;
            if (Math.multiplyHigh(w.permits(), windowNanos) == 0 && low >= 0) {
                return low / periodNanos;
            }
        }
        return BigInteger.valueOf(w.permits())
                .multiply(BigInteger.valueOf(seconds))
                .multiply(BigInteger.valueOf(1_000_000_000L))
                .divide(BigInteger.valueOf(periodNanos))
                .min(BigInteger.valueOf(Long.MAX_VALUE))
                .longValue();
    }

    /** The decision as clients see it: without the verdicts of rules that only record. */
    private static Decision withoutShadowRules(Decision decision) {
        List<Verdict> verdicts = decision.verdicts();
        boolean any = false;
        for (int i = 0; i < verdicts.size(); i++) {
            any |= verdicts.get(i).mode() == Mode.SHADOW;
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

    /**
     * Families of rate-limit response headers; {@link RateLimitHeaders} writes the ones an application enables.
     * {@code Retry-After} is written on every rejection whatever the styles.
     */
    public enum HeaderStyle {

        /**
         * {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining} and {@code X-RateLimit-Reset} (seconds until the
         * window is full again) for the binding window, the de-facto convention of many public APIs.
         */
        X_RATELIMIT,

        /**
         * The IETF HTTPAPI working group's {@code RateLimit-Policy} and {@code RateLimit} structured fields, one item
         * per window, in the syntax of draft-ietf-httpapi-ratelimit-headers-09:
         * {@code RateLimit-Policy: "search-1s";q=5;w=1, "search-1m";q=100;w=60} and
         * {@code RateLimit: "search-1s";r=4;t=1, "search-1m";r=99;t=1}. The draft still moves; a later syntax will
         * come as a new constant, so this one keeps its meaning.
         */
        IETF_DRAFT_09
    }
}
