package io.github.ratelimit.support;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * The duration text used in limits and delays: {@code 500ms}, {@code 1s}, {@code 10s}, {@code 1m}, {@code 1h},
 * {@code 1d}; a bare unit means one of it ({@code s} = {@code 1s}); ISO-8601 ({@code PT1S}) is accepted too.
 * Shared by the project's packages (see {@code io.github.ratelimit.support}); applications need not use it.
 */
public final class Durations {

    /** What a message tells users to write. */
    public static final String SYNTAX = "<number><unit> with unit ms, s, m, h or d, e.g. '500ms', '1s', '1m'";

    private Durations() {}

    /**
     * @param text the duration text
     * @return the duration, or {@code null} when the text is not a duration in the accepted syntax
     */
    public static @Nullable Duration parseOrNull(String text) {
        if (text == null) {
            return null;
        }
        String s = text.trim().toLowerCase(Locale.ROOT);
        if (s.isEmpty() || s.length() > 40) {
            return null;
        }
        if (s.startsWith("pt") || s.startsWith("p")) {
            try {
                return Duration.parse(s.toUpperCase(Locale.ROOT));
            } catch (DateTimeParseException e) {
                return null;
            }
        }
        int i = 0;
        while (i < s.length() && Character.isDigit(s.charAt(i))) {
            i++;
        }
        long amount;
        if (i == 0) {
            amount = 1;
        } else {
            if (i > 18) {
                return null;
            }
            amount = Long.parseLong(s.substring(0, i));
        }
        String unit = s.substring(i).trim();
        try {
            return switch (unit) {
                case "ms" -> Duration.ofMillis(amount);
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                case "d" -> Duration.ofDays(amount);
                default -> null;
            };
        } catch (ArithmeticException e) {
            return null;
        }
    }

    /**
     * Formats a duration in the shortest exact form of this syntax: {@code 1s}, {@code 90s}, {@code 1m},
     * {@code 250ms}; sub-millisecond durations in ISO-8601.
     *
     * @param duration a positive duration
     * @return the text
     */
    public static String format(Duration duration) {
        long nanos;
        try {
            nanos = duration.toNanos();
        } catch (ArithmeticException e) {
            return duration.toDays() + "d";
        }
        if (nanos % 1_000_000 != 0) {
            return duration.toString();
        }
        long millis = nanos / 1_000_000;
        if (millis % 86_400_000 == 0) {
            return millis / 86_400_000 + "d";
        }
        if (millis % 3_600_000 == 0) {
            return millis / 3_600_000 + "h";
        }
        if (millis % 60_000 == 0) {
            return millis / 60_000 + "m";
        }
        if (millis % 1000 == 0) {
            return millis / 1000 + "s";
        }
        return millis + "ms";
    }
}
