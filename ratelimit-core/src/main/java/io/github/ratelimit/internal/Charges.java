package io.github.ratelimit.internal;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Decision.Verdict;
import io.github.ratelimit.Guard.Settlement;
import io.github.ratelimit.Rule;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.BucketStore.KeyState;
import io.github.ratelimit.support.RateLimitedLog;
import java.lang.System.Logger.Level;
import java.math.BigDecimal;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;

/**
 * Settles what permitted calls used under the rules that charge ({@link io.github.ratelimit.Guard#settle}), and reads
 * the number a call reports, for every entry point alike. Thread-safe.
 */
public final class Charges {

    /** What {@link #tokens} answers for a report with no usable number. */
    public static final long UNUSABLE = -1;

    /** One log per rule: a rule whose calls report garbage says so every 10 s, not once per call. */
    private static final Map<String, RateLimitedLog> LOGS = new ConcurrentHashMap<>();

    private static final long LOG_INTERVAL_NANOS = 10_000_000_000L;

    private static final String RESPONSE_HEADER = "response-header:";

    private Charges() {}

    /**
     * @param charge a rule's {@link Rule#charge()}
     * @return the response header a URL rule reads the tokens from ({@code response-header:<Name>}, a token of
     *         RFC 9110 as the name), or {@code null} when {@code charge} names none
     */
    public static @Nullable String responseHeader(@Nullable String charge) {
        if (charge == null || !charge.regionMatches(true, 0, RESPONSE_HEADER, 0, RESPONSE_HEADER.length())) {
            return null;
        }
        String name = charge.substring(RESPONSE_HEADER.length()).trim();
        return !name.isEmpty() && name.length() <= 200 && name.chars().allMatch(Charges::tokenChar) ? name : null;
    }

    private static boolean tokenChar(int c) {
        return (c >= 'a' && c <= 'z')
                || (c >= 'A' && c <= 'Z')
                || (c >= '0' && c <= '9')
                || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
    }

    /**
     * Reads the tokens a call reports: a whole number of 0 or more, as a {@link Number} or as text (decimal digits, no
     * sign but {@code +}, surrounding spaces ignored). Anything else (nothing, a fraction, a negative number, text,
     * a number past {@link Long#MAX_VALUE}) is no usable number, logged for the rule once every 10 s.
     *
     * @param rule the charging rule, for the log
     * @param value what the call reported, or {@code null} for nothing
     * @return the tokens, or {@link #UNUSABLE}
     */
    public static long tokens(Rule rule, @Nullable Object value) {
        String problem;
        if (value == null) {
            problem = "nothing";
        } else if (value instanceof Long
                || value instanceof Integer
                || value instanceof Short
                || value instanceof Byte) {
            long n = ((Number) value).longValue();
            if (n >= 0) {
                return n;
            }
            problem = "a negative number, " + n;
        } else {
            String text = (value instanceof Number number ? number.toString() : String.valueOf(value)).trim();
            long n = parse(text);
            if (n >= 0) {
                return n;
            }
            problem = "'" + abbreviate(text) + "', which is no whole number from 0 to " + Long.MAX_VALUE;
        }
        unusable(rule, "the call reported " + problem);
        return UNUSABLE;
    }

    /** @return the whole number {@code text} is (a fraction of zero like {@code 12.0} included), or -1 */
    private static long parse(String text) {
        if (text.isEmpty() || text.length() > 40) {
            return -1;
        }
        try {
            BigDecimal d = new BigDecimal(text);
            if (d.signum() < 0 || d.stripTrailingZeros().scale() > 0) {
                return -1;
            }
            return d.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0 ? Long.MAX_VALUE : d.longValueExact();
        } catch (NumberFormatException | ArithmeticException e) {
            return -1;
        }
    }

    private static String abbreviate(String text) {
        String printable = text.replaceAll("[^\\x20-\\x7e]", "?");
        return printable.length() > 40 ? printable.substring(0, 40) + "..." : printable;
    }

    /**
     * Logs, once every 10 s per rule, that a call of the rule could not be charged what it used.
     *
     * @param rule the charging rule
     * @param reason why (the call threw, its report was no number)
     */
    public static void unusable(Rule rule, String reason) {
        LOGS.computeIfAbsent(rule.name(), name -> new RateLimitedLog(LOG_INTERVAL_NANOS))
                .log(
                        Level.WARNING,
                        () -> rule.source() + " charges what a call used (" + rule.charge() + "), but " + reason
                                + "; the call keeps the tokens it took when admitted",
                        null);
    }

    /**
     * Settles a permitted call under each charging rule that decided it with a store.
     *
     * @param limiter the limiter, for its stores and listeners
     * @param rules the guard's rules
     * @param decision the call's decision
     * @param actual the tokens the call used under a rule, below 0 for no usable number
     */
    static void settle(
            DefaultRateLimiter limiter, CompiledRule[] rules, Decision decision, ToLongFunction<Rule> actual) {
        for (Verdict v : decision.verdicts()) {
            if ((v.outcome() != Outcome.ALLOWED && v.outcome() != Outcome.DELAYED)
                    || v.key() == null
                    || (v.basis() != Basis.BUCKET && v.basis() != Basis.FALLBACK_BUCKET)) {
                continue;
            }
            for (CompiledRule rule : rules) {
                if (rule.name.equals(v.rule()) && rule.rule.charge() != null) {
                    settle(limiter, rule, v, actual.applyAsLong(rule.rule));
                    break;
                }
            }
        }
    }

    private static void settle(DefaultRateLimiter limiter, CompiledRule rule, Verdict v, long used) {
        long taken = Verdicts.permits(v, rule);
        if (used < 0) {
            unusable(rule.rule, "the call reported no usable number of tokens");
            limiter.notifySettled(v, Settlement.UNUSABLE, 0);
            return;
        }
        if (used == taken) {
            limiter.notifySettled(v, Settlement.EXACT, 0);
            return;
        }
        CompiledRule.Configs configs = rule.configsForRefund(v.key());
        if (configs == null) {
            // The plan the key's call named is forgotten (100,000 keys since): do not resize its state to another.
            limiter.notifySettled(v, Settlement.LOST, 0);
            return;
        }
        BucketStore.Key bucketKey = new BucketStore.Key(rule.name, v.key());
        try {
            KeyState state = v.basis() == Basis.BUCKET
                    ? limiter.store().state(bucketKey, configs.primary(), rule.localFirst)
                    : limiter.fallbackStore().state(bucketKey, configs.fallback(), null);
            if (used > taken) {
                long more = used - taken;
                long charged = state.charge(more, v.receipt());
                limiter.notifySettled(v, charged < more ? Settlement.CLAMPED : Settlement.CHARGED, charged);
            } else {
                state.refund(taken - used, v.receipt());
                limiter.notifySettled(v, Settlement.REFUNDED, taken - used);
            }
        } catch (RuntimeException e) {
            DefaultRateLimiter.STORE_LOG.log(
                    Level.WARNING,
                    () -> "Could not settle what a call used under rule '" + rule.name
                            + "'; the store failed, so the call keeps the tokens it took when admitted",
                    e);
            limiter.notifySettled(v, Settlement.LOST, 0);
        }
    }
}
