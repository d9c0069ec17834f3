package io.github.ratelimit.redis;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Limit;
import io.github.ratelimit.Mode;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.PlanNames;
import io.github.ratelimit.support.LogText;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The value of one per-key entry in Redis, {@code <kind>\t<limits or plan>\t<who>\t<epoch millis>} with kind
 * {@code limits} ({@code 5/1s,100/1m}) or {@code plan}, written and read back. Reading never fails: a value this
 * store did not write (not UTF-8, another layout, limits that do not parse, more limits than a rule may have, a plan
 * not known here) is an entry with a {@linkplain RedisLimitProvider.Entry#problem() problem} and no limits, so its key
 * keeps the rule's own limits. Stateless.
 */
final class LimitEntries {

    private static final int SNIPPET = 60;

    /** The longest name of who made a change that is written or shown; a longer one is cut. */
    static final int MAX_ACTOR = 200;

    /** The longest message of the limits' parser that an entry's problem repeats; a longer one is cut. */
    private static final int MAX_MESSAGE = 300;

    private LimitEntries() {}

    /**
     * Parses limits as this store writes them and the admin operations take them: comma-separated, each in
     * {@link Limit#parse} form, at most {@value Rule#MAX_LIMITS}.
     *
     * @param text {@code 5/1s,100/1m}
     * @return the limits, in order
     * @throws InvalidRateLimitConfigurationException naming the text, before parsing any of a list that is too long
     */
    static List<Limit> parse(String text) {
        if (text == null || text.isBlank()) {
            throw new InvalidRateLimitConfigurationException(
                    null,
                    text,
                    "no limits are given",
                    "Give at least one, "
                            + "comma-separated, e.g. '5/1s,100/1m'; to go back to the rule's limits, remove the key's entry.");
        }
        long count = text.chars().filter(c -> c == ',').count() + 1;
        if (count > Rule.MAX_LIMITS) {
            throw new InvalidRateLimitConfigurationException(
                    null,
                    LogText.quote(text),
                    count + " limits, more than "
                            + "the " + Rule.MAX_LIMITS
                            + " a rule may have (each is a window counted on every decision and an "
                            + "item of the rate-limit headers)",
                    "Keep the windows that matter, e.g. one per second, minute, hour " + "and day.");
        }
        List<Limit> limits = new ArrayList<>((int) count);
        for (String part : text.split(",", -1)) {
            limits.add(Limit.parse(part));
        }
        return limits;
    }

    /**
     * @param rule the rule the limits are for
     * @param limits the limits
     * @param what what the limits are, for the message: {@code limits [..] for key 'k' of rule 'r'}
     * @throws InvalidRateLimitConfigurationException when the rule cannot use them, saying why
     */
    static void usable(Rule rule, List<Limit> limits, String what) {
        try {
            rule.withLimits(limits);
        } catch (InvalidRateLimitConfigurationException e) {
            throw new InvalidRateLimitConfigurationException(
                    what, limits.toString(), "the rule cannot use them: " + e.constraint(), e.action());
        }
    }

    /**
     * The one form of who made a change, written and read back alike: what could end a line or hide text (control
     * and format characters, line separators, lone surrogates) becomes a space, so the entry's fields, separated by
     * tabs, stay apart, and no stored name reaches a log or an HTTP answer with them; cut after
     * {@value #MAX_ACTOR} characters, so no stored name makes an answer long.
     *
     * @param actor who made a change, as given or stored
     * @return it without those characters, at most {@value #MAX_ACTOR} characters and an ellipsis
     */
    static String actor(String actor) {
        String cut = actor.length() <= MAX_ACTOR ? actor : actor.substring(0, MAX_ACTOR) + "…";
        return cut.replaceAll("[\\p{Cc}\\p{Cf}\\p{Cs}\\p{Zl}\\p{Zp}]", " ");
    }

    /** @return the stored value of limits of a key's own */
    static String limits(List<Limit> limits, String by, long millis) {
        return "limits\t"
                + String.join(",", limits.stream().map(Limit::toString).toList()) + "\t" + by + "\t" + millis;
    }

    /** @return the stored value of a plan assignment */
    static String plan(String plan, String by, long millis) {
        return "plan\t" + plan + "\t" + by + "\t" + millis;
    }

    /**
     * @param rule the rule's name
     * @param key the key, as shown
     * @param address the address that reaches the entry
     * @param value the stored value
     * @param plans the plans this instance knows
     * @return the entry; one with a problem and no limits when the value cannot give the key limits
     */
    static RedisLimitProvider.Entry read(
            String rule, String key, String address, byte[] value, Map<String, List<Limit>> plans) {
        String text = utf8(value);
        if (text == null) {
            return unreadable(rule, key, address, null, null, "the stored value is not UTF-8 text");
        }
        String[] parts = text.split("\t", -1);
        String by = parts.length > 2 ? actor(parts[2]) : "unknown";
        Instant at = parts.length > 3 ? instant(parts[3]) : null;
        if (parts.length >= 2 && parts[0].equals("limits")) {
            try {
                return new RedisLimitProvider.Entry(rule, key, address, parse(parts[1]), null, by, at, null);
            } catch (RuntimeException e) {
                // InvalidRateLimitConfigurationException above all; anything else a parser might throw the same way.
                // The parser's message holds the stored text: escaped, as all stored text that reaches a log or an
                // HTTP answer.
                String message = String.valueOf(e.getMessage());
                return unreadable(
                        rule,
                        key,
                        address,
                        by,
                        at,
                        "the stored limits " + snippet(parts[1])
                                + " cannot be used: "
                                + LogText.escape(
                                        message.length() <= MAX_MESSAGE
                                                ? message
                                                : message.substring(0, MAX_MESSAGE) + "…"));
            }
        }
        if (parts.length >= 2 && parts[0].equals("plan")) {
            String invalid = PlanNames.problem(parts[1]);
            if (invalid != null) {
                return unreadable(rule, key, address, by, at, invalid);
            }
            List<Limit> limits = plans.get(parts[1]);
            if (limits == null) {
                return new RedisLimitProvider.Entry(
                        rule,
                        key,
                        address,
                        List.of(),
                        parts[1],
                        by,
                        at,
                        PlanNames.unknown(parts[1], plans.keySet()) + ", so the rule's own limits apply");
            }
            return new RedisLimitProvider.Entry(rule, key, address, limits, parts[1], by, at, null);
        }
        return unreadable(
                rule,
                key,
                address,
                parts.length > 2 ? by : null,
                at,
                "the stored value " + snippet(text) + " is not '<limits|plan>\\t<limits or plan>\\t<who>\\t<when>'");
    }

    private static RedisLimitProvider.Entry unreadable(
            String rule, String key, String address, @Nullable String by, @Nullable Instant at, String why) {
        return new RedisLimitProvider.Entry(
                rule,
                key,
                address,
                List.of(),
                null,
                by == null ? "unknown" : by,
                at,
                "unreadable: " + why + "; the rule's own limits apply until the entry is set again or removed");
    }

    /**
     * @param rule the rule's name
     * @param key the key, as stored
     * @param limits the limits written (a plan's, for a plan)
     * @param plan the plan's name, or {@code null} for limits of the key's own
     * @param by who made the change, as written
     * @param millis when, as written
     * @return the entry as a change wrote it
     */
    static RedisLimitProvider.Entry written(
            String rule, String key, List<Limit> limits, @Nullable String plan, String by, long millis) {
        return new RedisLimitProvider.Entry(
                rule, key, LimitAdmin.address(key), List.copyOf(limits), plan, by, Instant.ofEpochMilli(millis), null);
    }

    /** The longest stored change of a rule that is read: more than any change this store writes. */
    static final int MAX_RULE_VALUE = 4096;

    /**
     * A rule's change as stored, {@code rule\t<limits or nothing>\t<mode or nothing>\t<who>\t<epoch millis>}.
     *
     * @param limits the rule's limits from now on, or {@code null} for its configured ones
     * @param mode its mode from now on, or {@code null} for its configured one
     * @param changedBy who made the change, as written
     * @param changedAt when, or {@code null} when the value does not say
     * @param problem why the change cannot serve (it is garbage), or {@code null} when it can be read
     */
    record RuleEntry(
            @Nullable List<Limit> limits,
            @Nullable Mode mode,
            String changedBy,
            @Nullable Instant changedAt,
            @Nullable String problem) {

        static RuleEntry unreadable(@Nullable String by, @Nullable Instant at, String why) {
            return new RuleEntry(
                    null,
                    null,
                    by == null ? "unknown" : by,
                    at,
                    "unreadable: " + why + "; it decides as configured until it is changed again or the change "
                            + "is deleted");
        }
    }

    /** @return the stored value of a rule's change */
    static String rule(@Nullable List<Limit> limits, @Nullable Mode mode, String by, long millis) {
        return "rule\t"
                + (limits == null
                        ? ""
                        : String.join(",", limits.stream().map(Limit::toString).toList())) + "\t"
                + (mode == null ? "" : mode.name()) + "\t" + by + "\t" + millis;
    }

    /** @return the stored value of a plan's change */
    static String plan(List<Limit> limits, String by, long millis) {
        return "plan\t" + String.join(",", limits.stream().map(Limit::toString).toList()) + "\t" + by + "\t" + millis;
    }

    /**
     * @param value a plan's change as stored (at most {@value #MAX_RULE_VALUE} bytes)
     * @return it read (without a mode); one with a problem when it is not a change this store writes (not UTF-8,
     *         another layout, limits that do not parse)
     */
    static RuleEntry readPlan(byte[] value) {
        String text = utf8(value);
        if (text == null) {
            return RuleEntry.unreadable(null, null, "the stored value is not UTF-8 text");
        }
        String[] parts = text.split("\t", -1);
        if (parts.length != 4 || !parts[0].equals("plan") || parts[1].isEmpty()) {
            return RuleEntry.unreadable(
                    null, null, "the stored value " + snippet(text) + " is not 'plan\\t<limits>\\t<who>\\t<when>'");
        }
        RuleEntry entry = limitsOf(parts[1], actor(parts[2]), instant(parts[3]), null);
        List<Limit> limits = entry.limits();
        if (limits != null) {
            try {
                ANY_RULE.withLimits(limits); // what no rule can use (two limits on one window, too many) is garbage
            } catch (InvalidRateLimitConfigurationException e) {
                return RuleEntry.unreadable(
                        entry.changedBy(), entry.changedAt(), "no rule can use the stored limits: " + e.constraint());
            }
        }
        return entry;
    }

    /**
     * @param plan the plan
     * @param limits limits to store for it
     * @throws InvalidRateLimitConfigurationException when no rule could use them (two limits on one window), which
     *         every instance would then read as garbage
     */
    static void usablePlan(String plan, List<Limit> limits) {
        usable(ANY_RULE, limits, "limits of plan '" + plan + "'");
    }

    /** A rule of the algorithm that takes the most forms of limits, to check stored plans against. */
    private static final Rule ANY_RULE =
            Rule.builder("plan").key("plan").limits("1/1s").build();

    /**
     * @param value a rule's change as stored (at most {@value #MAX_RULE_VALUE} bytes)
     * @return it read; one with a problem when it is not a change this store writes (not UTF-8, another layout, limits
     *         that do not parse, a mode that is none)
     */
    static RuleEntry readRule(byte[] value) {
        String text = utf8(value);
        if (text == null) {
            return RuleEntry.unreadable(null, null, "the stored value is not UTF-8 text");
        }
        String[] parts = text.split("\t", -1);
        if (parts.length != 5 || !parts[0].equals("rule") || (parts[1].isEmpty() && parts[2].isEmpty())) {
            return RuleEntry.unreadable(
                    null,
                    null,
                    "the stored value " + snippet(text)
                            + " is not 'rule\\t<limits>\\t<mode>\\t<who>\\t<when>' with limits or mode");
        }
        String by = actor(parts[3]);
        Instant at = instant(parts[4]);
        Mode mode = null;
        if (!parts[2].isEmpty()) {
            try {
                mode = Mode.valueOf(parts[2]);
            } catch (IllegalArgumentException e) {
                return RuleEntry.unreadable(by, at, "the stored mode " + snippet(parts[2]) + " is no mode");
            }
        }
        if (parts[1].isEmpty()) {
            return new RuleEntry(null, mode, by, at, null);
        }
        return limitsOf(parts[1], by, at, mode);
    }

    /** @return the change with the stored limits, or unreadable when they do not parse */
    private static RuleEntry limitsOf(String limits, String by, @Nullable Instant at, @Nullable Mode mode) {
        try {
            return new RuleEntry(List.copyOf(parse(limits)), mode, by, at, null);
        } catch (RuntimeException e) {
            String message = String.valueOf(e.getMessage());
            return RuleEntry.unreadable(
                    by,
                    at,
                    "the stored limits " + snippet(limits) + " cannot be used: "
                            + LogText.escape(
                                    message.length() <= MAX_MESSAGE
                                            ? message
                                            : message.substring(0, MAX_MESSAGE) + "…"));
        }
    }

    /** @return the bytes as UTF-8 text, or {@code null} when they are not */
    static @Nullable String utf8(byte[] value) {
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(value))
                    .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    private static @Nullable Instant instant(String millis) {
        try {
            return Instant.ofEpochMilli(Long.parseLong(millis));
        } catch (NumberFormatException | DateTimeException e) {
            return null;
        }
    }

    private static String snippet(String text) {
        return text.length() <= SNIPPET
                ? LogText.quote(text)
                : "'" + LogText.escape(text.substring(0, SNIPPET)) + "…' (" + text.length() + " characters)";
    }
}
