package io.github.ratelimit.internal.config;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.internal.config.RateLimitSettings.Property;
import io.github.ratelimit.support.Durations;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;

/**
 * The {@code ratelimit.*} values as text, read and checked one property at a time: the default a property's
 * {@link SettingsCatalog catalog} entry gives when it is unset, and a message naming the property, the value, the
 * constraint and the fix when it is wrong.
 */
final class SettingsValues {

    private final Map<String, String> values;
    private final String source;

    /**
     * @param values the values by canonical name
     * @param source where they come from, the prefix of every message, or {@code null}
     */
    SettingsValues(Map<String, String> values, String source) {
        this.values = values;
        this.source = source;
    }

    String get(String name) {
        String v = values.get(name);
        return v == null || v.isEmpty() ? null : v;
    }

    /** The value, else the property's default. */
    String orDefault(String name) {
        String v = get(name);
        if (v != null) {
            return v;
        }
        Property p = SettingsCatalog.find(SettingsCatalog.pattern(name));
        return p == null ? null : p.defaultValue();
    }

    List<String> list(String name) {
        return split(get(name));
    }

    List<String> listOrDefault(String name) {
        return split(orDefault(name));
    }

    static List<String> split(String v) {
        if (v == null) {
            return List.of();
        }
        return Arrays.stream(v.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
    }

    List<String> namesUnder(String prefix) {
        return values.keySet().stream().filter(k -> k.startsWith(prefix)).map(k -> k.substring(prefix.length())).toList();
    }

    TreeMap<Integer, String> indexes(String group) {
        TreeMap<Integer, String> result = new TreeMap<>();
        for (String name : values.keySet()) {
            Matcher m = SettingsCatalog.INDEXED.matcher(name);
            if (m.matches() && m.group(1).equals(group)) {
                result.put(Integer.parseInt(m.group(2)), name);
            }
        }
        return result;
    }

    boolean bool(String name) {
        String v = orDefault(name);
        if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(v);
        }
        throw badValue(name, v, "is not a boolean", "Use true or false.");
    }

    int intValue(String name, int min, int max) {
        long v = longValue(name, min, max);
        return (int) v;
    }

    long longValue(String name, long min, long max) {
        String v = orDefault(name);
        long parsed;
        try {
            parsed = Long.parseLong(v.replace("_", ""));
        } catch (NumberFormatException e) {
            throw badValue(name, v, "is not a whole number", "Write digits, e.g. " + (min > 0 ? min : 100) + ".");
        }
        if (parsed < min || parsed > max) {
            throw badValue(name, v, "is out of range", "Use a value from " + min + " to " + max + ".");
        }
        return parsed;
    }

    double decimal(String name) {
        String v = orDefault(name);
        try {
            return Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw badValue(name, v, "is not a number", "Use e.g. 0.5.");
        }
    }

    Duration duration(String name, boolean positive) {
        String v = orDefault(name);
        if (v == null) {
            return null;
        }
        Duration d = Durations.parseOrNull(v);
        if (d == null) {
            throw badValue(name, v, "is not a duration", "Use " + Durations.SYNTAX + ".");
        }
        if (positive && (d.isZero() || d.isNegative())) {
            throw badValue(name, v, "is not positive", "Use a positive duration, e.g. '500ms'.");
        }
        return d;
    }

    <E extends Enum<E>> E enumValue(String name, Class<E> type) {
        return parseEnum(name, orDefault(name), type);
    }

    <E extends Enum<E>> E parseEnum(String name, String value, Class<E> type) {
        String normalized = value.trim().toUpperCase(Locale.ROOT).replace('-', '_');
        for (E constant : type.getEnumConstants()) {
            if (constant.name().equals(normalized)) {
                return constant;
            }
        }
        Property p = SettingsCatalog.find(SettingsCatalog.pattern(name));
        List<String> allowed = p != null && !p.values().isEmpty() ? p.values() : Arrays.stream(type.getEnumConstants())
                .map(c -> c.name().toLowerCase(Locale.ROOT).replace('_', '-')).toList();
        throw badValue(name, value, "is not one of " + allowed, "Use one of them.");
    }

    InvalidRateLimitConfigurationException badValue(String name, String value, String constraint,
                                                            String action) {
        return new InvalidRateLimitConfigurationException(at(name), value, "'" + value + "' " + constraint, action);
    }

    /** A property's location for messages: the file it is in, when it is in one, and its name. */
    String at(String name) {
        return source == null ? name : source + ": " + name;
    }
}
