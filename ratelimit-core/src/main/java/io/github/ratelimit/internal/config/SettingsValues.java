package io.github.ratelimit.internal.config;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.support.Durations;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Checks of the {@code ratelimit.*} values one property at a time, for the model's values and for text on its way
 * into the model: the range and kind its {@link ConfigModel model} field declares, and a message naming the property,
 * the value, the constraint and the fix when it is wrong.
 */
final class SettingsValues {

    private final String source;

    /**
     * @param source where the values come from, the prefix of every message, or {@code null}
     */
    SettingsValues(String source) {
        this.source = source;
    }

    /** @return the text trimmed, or {@code null} when blank */
    static String text(String value) {
        return value == null || value.isBlank() ? null : value.trim();
    }

    /** @return the elements, each split at commas, trimmed, blanks dropped; empty for {@code null} */
    static List<String> list(List<String> values) {
        List<String> result = new ArrayList<>();
        if (values != null) {
            for (String value : values) {
                if (value != null) {
                    result.addAll(split(value));
                }
            }
        }
        return List.copyOf(result);
    }

    static List<String> split(String v) {
        if (v == null) {
            return List.of();
        }
        return Arrays.stream(v.split(","))
                .map(String::trim)
                .filter(s -> !s.isEmpty())
                .toList();
    }

    /** Checks a whole number against the range its property declares. */
    long whole(String name, long value) {
        ConfigModel.Entry e = ConfigModel.entry(SettingsCatalog.pattern(name));
        long min = e == null ? Long.MIN_VALUE : e.described().min();
        long max = e == null ? Long.MAX_VALUE : e.described().max();
        if (value < min || value > max) {
            throw badValue(
                    name, String.valueOf(value), "is out of range", "Use a value from " + min + " to " + max + ".");
        }
        return value;
    }

    /** @return a whole number parsed from text, with the property's message when it is not one */
    Long parseWhole(String name, String text) {
        try {
            return Long.parseLong(text.replace("_", ""));
        } catch (NumberFormatException e) {
            ConfigModel.Entry entry = ConfigModel.entry(SettingsCatalog.pattern(name));
            long min = entry == null ? 0 : entry.described().min();
            throw badValue(name, text, "is not a whole number", "Write digits, e.g. " + (min > 0 ? min : 100) + ".");
        }
    }

    boolean parseBoolean(String name, String text) {
        if (text.equalsIgnoreCase("true") || text.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(text);
        }
        throw badValue(name, text, "is not a boolean", "Use true or false.");
    }

    double parseDecimal(String name, String text) {
        try {
            return Double.parseDouble(text);
        } catch (NumberFormatException e) {
            throw badValue(name, text, "is not a number", "Use e.g. 0.5.");
        }
    }

    Duration parseDuration(String name, String text) {
        Duration d = Durations.parseOrNull(text);
        if (d == null) {
            throw badValue(name, text, "is not a duration", "Use " + Durations.SYNTAX + ".");
        }
        return d;
    }

    /** Checks that a duration, when set, is positive. */
    Duration positive(String name, Duration d) {
        if (d != null && (d.isZero() || d.isNegative())) {
            String text = d.isZero() ? "0s" : "-" + Durations.format(d.negated());
            throw badValue(name, text, "is not positive", "Use a positive duration, e.g. '500ms'.");
        }
        return d;
    }

    /**
     * @return the constant a value names, in any case, {@code -} for {@code _}; refused with the values the
     *         property allows, as the docs write them
     */
    <E extends Enum<E>> E parseEnum(String name, String value, Class<E> type) {
        String normalized = value.trim().toUpperCase(Locale.ROOT).replace('-', '_');
        for (E constant : type.getEnumConstants()) {
            if (constant.name().equals(normalized)) {
                return constant;
            }
        }
        ConfigModel.Entry e = ConfigModel.entry(SettingsCatalog.pattern(name));
        List<String> allowed = e != null && !e.property().values().isEmpty()
                ? e.property().values()
                : Arrays.stream(type.getEnumConstants())
                        .map(c -> c.name().toLowerCase(Locale.ROOT).replace('_', '-'))
                        .toList();
        throw badValue(name, value, "is not one of " + allowed, "Use one of them.");
    }

    InvalidRateLimitConfigurationException badValue(String name, String value, String constraint, String action) {
        return new InvalidRateLimitConfigurationException(at(name), value, "'" + value + "' " + constraint, action);
    }

    /** A property's location for messages: the file it is in, when it is in one, and its name. */
    String at(String name) {
        return source == null ? name : source + ": " + name;
    }
}
