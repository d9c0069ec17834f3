package io.github.ratelimit;

import io.github.ratelimit.Rule.LocalFirst;
import io.github.ratelimit.support.Durations;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The checks a {@link Rule} passes before it exists, each failure naming where the rule was declared, the value,
 * the constraint it breaks and how to fix it ({@link Rule.Builder#build()} runs them), and a rule's text for logs.
 */
final class RuleChecks {

    /**
     * A rule as its builder holds it, before any default is applied.
     *
     * @param where where the rule was declared, for messages
     * @param name the rule's name
     * @param publicName the name clients see, or {@code null}
     * @param key the key expression
     * @param limits the windows
     * @param mode the mode
     * @param maxDelay the longest SOFT delay, or {@code null}
     * @param maxWaiting the most waiting calls as given, or {@code null} when not given
     * @param cost tokens a call takes
     * @param algorithm the algorithm
     * @param localFirst local-first settings, or {@code null}
     * @param concurrency the most calls in flight of a concurrency rule, or 0
     */
    record Draft(
            String where,
            String name,
            @Nullable String publicName,
            String key,
            List<Limit> limits,
            Mode mode,
            @Nullable Duration maxDelay,
            @Nullable Integer maxWaiting,
            long cost,
            Algorithm algorithm,
            @Nullable LocalFirst localFirst,
            int concurrency) {
        // Wide on purpose: the builder's values, handed over in one place (Rule.Builder#build) so that the checks
        // need no twelve-argument method; nothing else builds one.
    }

    private RuleChecks() {}

    /**
     * @param d the rule as given
     * @throws InvalidRateLimitConfigurationException on the first check it fails
     */
    static void check(Draft d) {
        String where = d.where();
        String name = d.name();
        String publicName = d.publicName();
        String key = d.key();
        List<Limit> limits = d.limits();
        Mode mode = d.mode();
        Duration maxDelay = d.maxDelay();
        Integer maxWaiting = d.maxWaiting();
        long cost = d.cost();
        Algorithm algorithm = d.algorithm();
        LocalFirst localFirst = d.localFirst();
        validateName(where, name, "rule name");
        if (publicName != null) {
            validateName(where, publicName, "public name");
        }
        if (key == null || key.isBlank()) {
            throw fail(where, key, "key is empty", "Use a key such as 'global', 'ip', 'user' or 'header:X-Api-Key'.");
        }
        if (d.concurrency() == 0) {
            checkWindows(where, limits, cost, algorithm, localFirst);
        }
        if (mode == Mode.SOFT) {
            if (maxDelay == null || maxDelay.isZero() || maxDelay.isNegative()) {
                String value = maxDelay == null ? null : Durations.format(maxDelay);
                throw fail(
                        where,
                        value,
                        "SOFT mode needs a positive maxDelay, but it is " + (value == null ? "unset" : value),
                        "Set maxDelay, e.g. '500ms', to bound how long a " + "request may wait.");
            }
            checkAtMost(where, "maxDelay", maxDelay, Rule.MAX_DELAY_LIMIT, "Use a shorter maxDelay or HARD mode.");
            if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
                checkCounterDelay(where, limits, maxDelay);
            }
            if (maxWaiting != null && maxWaiting < 0) {
                throw fail(
                        where,
                        String.valueOf(maxWaiting),
                        "maxWaiting " + maxWaiting + " is negative",
                        "Use the most calls that may wait at once, e.g. 100, or 0 to reject instead of waiting "
                                + "when the limit is reached.");
            }
        } else if (maxDelay != null) {
            throw fail(
                    where,
                    Durations.format(maxDelay),
                    "maxDelay " + Durations.format(maxDelay) + " is set, but " + "mode is " + mode
                            + " and only SOFT mode waits",
                    "Remove maxDelay or use mode SOFT.");
        } else if (maxWaiting != null) {
            throw fail(
                    where,
                    String.valueOf(maxWaiting),
                    "maxWaiting " + maxWaiting + " is set, but mode is " + mode + " and only SOFT mode waits",
                    "Remove maxWaiting or use mode SOFT.");
        }
    }

    /** The checks of a rule's windows (every rule but a concurrency rule): their number, kinds and sizes. */
    private static void checkWindows(
            String where, List<Limit> limits, long cost, Algorithm algorithm, @Nullable LocalFirst localFirst) {
        if (limits.isEmpty()) {
            throw fail(
                    where,
                    null,
                    "no limit is set",
                    "Give at least one window, e.g. '5/1s': perSecond, "
                            + "perMinute, perHour, perDay or limits on @RateLimit; limits in properties.");
        }
        if (limits.size() > Rule.MAX_LIMITS) {
            throw fail(
                    where,
                    limits.toString(),
                    limits.size() + " limits, more than the " + Rule.MAX_LIMITS + " a rule "
                            + "may have (each is a window counted on every decision and an item of the rate-limit headers)",
                    "Keep the windows that matter, e.g. one per second, minute, hour and day.");
        }
        // A rule with a calendar quota tells its windows apart by name (1d and 1d@Europe/Berlin are two windows).
        boolean calendar = limits.stream().anyMatch(l -> l.calendar() != null);
        Set<Object> periods = new HashSet<>();
        long smallestCapacity = Long.MAX_VALUE;
        Limit smallest = null;
        for (Limit limit : limits) {
            if (!periods.add(calendar ? limit.window() : limit.period())) {
                throw fail(
                        where,
                        limits.toString(),
                        "two limits share the window " + limit.window() + " (" + limits + ")",
                        "Keep one limit per window.");
            }
            if (limit.calendar() != null && algorithm != Algorithm.FIXED_WINDOW) {
                throw fail(
                        where,
                        limit.toString(),
                        "limit '" + limit + "' is a calendar quota, a fixed window aligned "
                                + "to the calendar, which a " + algorithm + " rule cannot count",
                        "Remove the algorithm (a rule "
                                + "with a calendar quota is a FIXED_WINDOW rule by default) or give FIXED_WINDOW "
                                + "(algorithm=fixed-window), or give a window of a fixed length ('1d').");
            }
            if (calendar && limit.calendar() == null && limit.period().toNanos() % 1_000_000 != 0) {
                throw fail(
                        where,
                        limit.toString(),
                        "limit '" + limit + "' is not a whole number of milliseconds, "
                                + "which the windows of a rule with a calendar quota must be",
                        "Round its period to milliseconds.");
            }
            if (limit.calendar() != null && localFirst != null) {
                throw fail(
                        where,
                        localFirst.toString(),
                        "local-first is set, but limit '" + limit + "' is a calendar "
                                + "quota, decided in the store on every call",
                        "Remove local-first.");
            }
            if (algorithm != Algorithm.TOKEN_BUCKET && limit.capacity() != limit.permits()) {
                throw fail(
                        where,
                        limit.toString(),
                        "limit '" + limit + "' sets a burst, which a " + algorithm + " rule cannot have",
                        "Remove the burst or use the TOKEN_BUCKET algorithm.");
            }
            if (algorithm.capacity(limit) < smallestCapacity) {
                smallestCapacity = algorithm.capacity(limit);
                smallest = limit;
            }
        }
        if (cost < 1) {
            throw fail(where, String.valueOf(cost), "cost " + cost + " is not positive", "Use a cost of at least 1.");
        }
        if (cost > smallestCapacity) {
            throw fail(
                    where,
                    String.valueOf(cost),
                    "cost " + cost + " exceeds the capacity " + smallestCapacity + " of limit '" + smallest
                            + "', so no request could ever pass",
                    "Lower the cost or raise the limit.");
        }
        if (algorithm == Algorithm.SLIDING_WINDOW_LOG) {
            Limit longest = limits.get(0);
            for (Limit limit : limits) {
                if (limit.period().compareTo(longest.period()) > 0) {
                    longest = limit;
                }
            }
            long calls = longest.permits() / Math.max(1, cost);
            if (calls > Rule.MAX_LOG_CALLS) {
                throw fail(
                        where,
                        longest.toString(),
                        "limit '" + longest + "' lets " + calls + " calls into one "
                                + "window, more than the " + Rule.MAX_LOG_CALLS
                                + " a SLIDING_WINDOW_LOG rule keeps per key (the "
                                + "log holds every admitted call's time)",
                        "Use the SLIDING_WINDOW_COUNTER algorithm, which "
                                + "keeps a few counters per key whatever the limit, or a lower limit.");
            }
        }
        if (localFirst != null && algorithm.isSliding()) {
            throw fail(
                    where,
                    localFirst.toString(),
                    "local-first is set, but a " + algorithm + " rule decides " + "every call in the store",
                    "Remove local-first or use the TOKEN_BUCKET algorithm.");
        }
        if (localFirst != null && localFirst.maxUnsyncedTokens() > smallestCapacity) {
            throw fail(
                    where,
                    String.valueOf(localFirst.maxUnsyncedTokens()),
                    "local-first maxUnsyncedTokens "
                            + localFirst.maxUnsyncedTokens() + " exceeds the capacity " + smallestCapacity
                            + " of limit '"
                            + smallest + "'",
                    "Keep it a small share of the limit, e.g. 1%.");
        }
    }

    /**
     * Checks a concurrency rule ({@link Rule#concurrency()}): a number of calls in flight, and none of what only a
     * rule of windows has.
     *
     * @param where the rule's source
     * @param concurrency the most calls in flight per key
     * @param limits the windows, which must be none
     * @param cost the cost, which must be 1
     * @param algorithm the algorithm, which must be the default
     * @param localFirst local-first settings, which must be none
     * @param count which calls the rule counts, which must be all
     * @param permits the permits expression, which must be none
     */
    static void checkConcurrency(
            String where,
            int concurrency,
            List<Limit> limits,
            long cost,
            Algorithm algorithm,
            @Nullable LocalFirst localFirst,
            Rule.Counted count,
            @Nullable String permits) {
        if (concurrency < 1 || concurrency > Rule.MAX_CONCURRENCY) {
            throw fail(
                    where,
                    String.valueOf(concurrency),
                    "concurrency " + concurrency + " is not between 1 and " + Rule.MAX_CONCURRENCY,
                    "Give the most calls per key in flight at once, e.g. 2.");
        }
        String notFor = null;
        if (!limits.isEmpty()) {
            notFor = "limits " + limits;
        } else if (cost != 1) {
            notFor = "cost " + cost;
        } else if (algorithm != Algorithm.TOKEN_BUCKET) {
            notFor = "algorithm " + algorithm;
        } else if (localFirst != null) {
            notFor = "local-first";
        } else if (count != Rule.Counted.ALL) {
            notFor = "count " + count;
        } else if (permits != null) {
            notFor = "permits '" + permits + "'";
        }
        if (notFor != null) {
            throw fail(
                    where,
                    notFor,
                    "concurrency " + concurrency + " makes a rule of calls in flight, which a "
                            + "call holds one slot of until it ends; it cannot also have " + notFor
                            + ", which only a rule "
                            + "of windows has",
                    "Declare two rules: one with the concurrency, one with the rate "
                            + "(two @RateLimit annotations, or two entries of ratelimit.rules).");
        }
    }

    private static void checkCounterDelay(String where, List<Limit> limits, Duration maxDelay) {
        long intervals = counterIntervals(limits, maxDelay.toNanos());
        if (intervals > Rule.MAX_COUNTER_DELAY_INTERVALS) {
            // The longest whole-millisecond delay that fits (the count only grows with the delay).
            long low = 0;
            long high = maxDelay.toMillis();
            while (low < high) {
                long mid = (low + high + 1) / 2;
                if (counterIntervals(limits, mid * 1_000_000L) <= Rule.MAX_COUNTER_DELAY_INTERVALS) {
                    low = mid;
                } else {
                    high = mid - 1;
                }
            }
            throw fail(
                    where,
                    Durations.format(maxDelay),
                    "maxDelay " + Durations.format(maxDelay) + " spans "
                            + intervals + " intervals of its windows (" + limits + "), more than the "
                            + Rule.MAX_COUNTER_DELAY_INTERVALS
                            + " a SLIDING_WINDOW_COUNTER key holds delayed calls in (one "
                            + "count per window and interval)",
                    (low > 0
                                    ? "Use a maxDelay of at most " + Durations.format(Duration.ofMillis(low))
                                            + ", longer windows, or "
                                    : "Use longer windows, or ")
                            + "the TOKEN_BUCKET or SLIDING_WINDOW_LOG algorithm, whose delays cost nothing per interval.");
        }
    }

    /** @return the intervals a delay of {@code nanos} spans, rounded up per window and summed */
    private static long counterIntervals(List<Limit> limits, long nanos) {
        long intervals = 0;
        for (Limit limit : limits) {
            long period = limit.period().toNanos();
            intervals += (nanos + period - 1) / period;
        }
        return intervals;
    }

    private static void validateName(String where, String name, String what) {
        if (name == null || name.isBlank()) {
            throw fail(where, name, what + " is empty", "Give the rule a name.");
        }
        if (name.length() > Rule.MAX_NAME_LENGTH) {
            throw fail(
                    where,
                    name,
                    String.format(
                            Locale.ROOT,
                            "%s is %d characters long, over the limit " + "of %d",
                            what,
                            name.length(),
                            Rule.MAX_NAME_LENGTH),
                    "Use a shorter name.");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c <= ' ' || c >= 0x7f || c == '{' || c == '}' || c == '"' || c == '\\') {
                throw fail(
                        where,
                        name,
                        what + " '" + name + "' contains '"
                                + (c <= ' ' ? "\\u" + String.format(Locale.ROOT, "%04x", (int) c) : String.valueOf(c))
                                + "' at index " + i,
                        "Use printable ASCII without spaces, braces, quotes or backslashes.");
            }
        }
    }

    /** Refuses a duration longer than its maximum, naming the value, which, and the maximum. */
    private static void checkAtMost(String where, String name, Duration d, Duration max, String action) {
        if (d.compareTo(max) > 0) {
            throw fail(
                    where,
                    Durations.format(d),
                    name + " " + Durations.format(d) + " is longer than the allowed " + Durations.format(max),
                    action);
        }
    }

    /**
     * Checks a rule's block: positive, at most {@link Rule#MAX_BLOCK_FOR}, and on a rule of windows.
     *
     * @param where where the rule was declared
     * @param blockFor the block, or {@code null} for none
     * @param concurrency the most calls in flight of a concurrency rule, or 0
     * @throws InvalidRateLimitConfigurationException when one fails
     */
    static void checkBlockFor(String where, @Nullable Duration blockFor, int concurrency) {
        if (blockFor == null) {
            return;
        }
        if (blockFor.isZero() || blockFor.isNegative()) {
            String value = blockFor.isZero() ? "0s" : "-" + Durations.format(blockFor.negated());
            throw fail(
                    where,
                    value,
                    "blockFor " + value + " is not positive",
                    "Use a positive duration, e.g. '15m', or remove blockFor for no block.");
        }
        checkAtMost(
                where,
                "blockFor",
                blockFor,
                Rule.MAX_BLOCK_FOR,
                "Use a block of at most " + Durations.format(Rule.MAX_BLOCK_FOR) + ".");
        if (concurrency != 0) {
            throw fail(
                    where,
                    Durations.format(blockFor),
                    "blockFor is set on a concurrency rule, which refuses a call only while others are in flight",
                    "Remove blockFor, or use a rule of windows (limits) to block a key that goes over them.");
        }
    }

    /**
     * @param rule a rule
     * @return its text, for logs: the name and every value that is not the default
     */
    static String describe(Rule rule) {
        StringBuilder sb = new StringBuilder("Rule[").append(rule.name());
        if (!rule.publicName().equals(rule.name())) {
            sb.append(", publicName=").append(rule.publicName());
        }
        sb.append(", key=").append(rule.key());
        if (rule.concurrency() > 0) {
            sb.append(", concurrency=").append(rule.concurrency());
        } else {
            sb.append(", limits=").append(rule.limits());
        }
        sb.append(", mode=").append(rule.mode());
        if (rule.maxDelay() != null) {
            sb.append(", maxDelay=")
                    .append(Durations.format(rule.maxDelay()))
                    .append(", maxWaiting=")
                    .append(rule.maxWaiting());
        }
        if (rule.cost() != 1) {
            sb.append(", cost=").append(rule.cost());
        }
        if (rule.algorithm() != Algorithm.TOKEN_BUCKET) {
            sb.append(", algorithm=").append(rule.algorithm());
        }
        if (rule.localFirst() != null) {
            sb.append(", localFirst=").append(rule.localFirst());
        }
        if (rule.count() != Rule.Counted.ALL) {
            sb.append(", count=").append(rule.count());
        }
        if (rule.countedStatuses() != null) {
            sb.append(", statuses=").append(rule.countedStatuses());
        }
        if (rule.permits() != null) {
            sb.append(", permits=").append(rule.permits());
        }
        if (rule.charge() != null) {
            sb.append(", charge=").append(rule.charge());
        }
        if (rule.blockFor() != null) {
            sb.append(", blockFor=").append(Durations.format(rule.blockFor()));
        }
        return sb.append(", onStoreFailure=")
                .append(rule.onStoreFailure())
                .append(", onMissingKey=")
                .append(rule.onMissingKey())
                .append(']')
                .toString();
    }

    /**
     * Checks what a rule counts: {@link Rule.Counted#STATUSES} names its statuses, and a rule whose calls count as
     * several permits by an expression can count them (the sliding log and the leaky bucket count every call at the
     * rule's own cost).
     *
     * @param where the rule's source
     * @param count which calls the rule counts
     * @param statuses the statuses, for {@link Rule.Counted#STATUSES}
     * @param permits the permits expression, or {@code null}
     * @param algorithm the rule's algorithm
     */
    static void checkCounting(
            String where,
            Rule.Counted count,
            @Nullable HttpStatuses statuses,
            @Nullable String permits,
            Algorithm algorithm) {
        if (count == Rule.Counted.STATUSES && statuses == null) {
            throw fail(
                    where,
                    "STATUSES",
                    "count STATUSES names no status",
                    "Give the statuses with "
                            + "count(HttpStatuses.parse(\"404,5xx\")), or count=statuses:404,5xx on a URL rule (a method call "
                            + "has no status).");
        }
        if (permits == null) {
            return;
        }
        if (permits.indexOf('+') >= 0 && !permits.contains("#") && !permits.contains("@")) {
            throw fail(
                    where,
                    permits,
                    "permits '" + permits + "' combines parts with '+', which a number cannot",
                    "Give one source of the count: 'header:X-Batch-Size', a resolver's name, or SpEL ('#items.size()').");
        }
        if (algorithm == Algorithm.SLIDING_WINDOW_LOG || algorithm == Algorithm.LEAKY_BUCKET) {
            throw fail(
                    where,
                    permits,
                    "permits '" + permits + "' makes a call count as several, which a " + algorithm
                            + " rule cannot: it counts every call at the rule's own cost",
                    "Use another algorithm " + "(SLIDING_WINDOW_COUNTER is the nearest to a log), or drop permits.");
        }
    }

    /**
     * Checks a rule that charges what a call used ({@link Rule#charge()}): its windows must be able to owe tokens, so
     * token-bucket, fixed-window (calendar quotas included) or sliding-window-counter windows, on a rule that counts
     * every call and is decided by the store each time.
     *
     * @param where the rule's source
     * @param charge where the tokens used come from
     * @param algorithm the rule's algorithm
     * @param count which calls the rule counts
     * @param concurrency the most calls in flight of a concurrency rule, or 0
     * @param localFirst local-first settings, or {@code null}
     */
    static void checkCharge(
            String where,
            String charge,
            Algorithm algorithm,
            Rule.Counted count,
            int concurrency,
            @Nullable LocalFirst localFirst) {
        String why = null;
        String fix = "Drop charge, or ";
        if (concurrency != 0) {
            why = "a concurrency rule counts calls in flight, not tokens";
            fix += "declare the concurrency in a rule of its own.";
        } else if (algorithm == Algorithm.SLIDING_WINDOW_LOG || algorithm == Algorithm.LEAKY_BUCKET) {
            why = "a " + algorithm + " rule cannot owe tokens ("
                    + (algorithm == Algorithm.SLIDING_WINDOW_LOG
                            ? "it counts calls, not tokens"
                            : "it holds one call at a time")
                    + ")";
            fix += "use algorithm TOKEN_BUCKET, FIXED_WINDOW or SLIDING_WINDOW_COUNTER.";
        } else if (count != Rule.Counted.ALL) {
            why = "count " + count + " gives a call's tokens back by its outcome, which charging already settles";
            fix += "declare the count in a rule of its own.";
        } else if (localFirst != null) {
            why = "a local-first rule settles with the store later, so a debt could not be bounded";
            fix += "drop local-first.";
        }
        if (why != null) {
            throw fail(where, charge, "charge '" + charge + "' takes what a call used after it ran, but " + why, fix);
        }
    }

    /**
     * @param maxUnsyncedTokens tokens an instance may take before it synchronizes
     * @param maxUnsyncedTime the longest an instance goes without synchronizing
     * @throws InvalidRateLimitConfigurationException when a value is out of range
     */
    static void checkLocalFirst(long maxUnsyncedTokens, Duration maxUnsyncedTime) {
        if (maxUnsyncedTokens < 1) {
            throw new InvalidRateLimitConfigurationException(
                    "local-first maxUnsyncedTokens must be at least 1, but was " + maxUnsyncedTokens
                            + ". Use a small share of the limit, e.g. 1% of it.");
        }
        if (maxUnsyncedTime == null
                || maxUnsyncedTime.compareTo(Duration.ofMillis(1)) < 0
                || maxUnsyncedTime.compareTo(Duration.ofMinutes(1)) > 0) {
            throw new InvalidRateLimitConfigurationException("local-first maxUnsyncedTime must be between 1ms and 1m, "
                    + "but was " + maxUnsyncedTime + ". Use e.g. 100ms.");
        }
    }

    private static InvalidRateLimitConfigurationException fail(
            String where, @Nullable String value, String constraint, @Nullable String action) {
        return new InvalidRateLimitConfigurationException(where, value, constraint, action);
    }
}
