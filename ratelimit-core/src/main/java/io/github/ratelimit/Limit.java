package io.github.ratelimit;

import io.github.ratelimit.support.Durations;

import java.time.Duration;
import java.util.Locale;

/**
 * One window of a rule: {@code permits} per {@code period}, with a bucket {@code capacity} (the burst) that
 * defaults to {@code permits}.
 *
 * <p>Text form, as used in annotations, properties and rules files: {@code <permits>/<period>}, optionally
 * followed by {@code burst=<capacity>}: {@code 5/1s}, {@code 100/1m}, {@code 1000/1d}, {@code 10/5s},
 * {@code 5/s}, {@code 5/1s burst=20}. Periods use {@code ms}, {@code s}, {@code m}, {@code h}, {@code d}.
 *
 * <p>A capacity above {@code permits} lets a rested client burst; one below smooths traffic (capacity 1 at
 * {@code 5/1s} admits one request every 200 ms). Instances are immutable values.
 *
 * @param permits tokens added per period, 1 to {@value #MAX_PERMITS}
 * @param period the refill period, 1 ms to {@value #MAX_PERIOD_DAYS} days
 * @param capacity the most tokens the bucket holds, 1 to {@value #MAX_PERMITS}
 */
public record Limit(long permits, Duration period, long capacity) {

    /** The largest number of permits or capacity of one limit. */
    public static final long MAX_PERMITS = 1_000_000_000_000L;

    /** The longest period of one limit, in days. */
    public static final long MAX_PERIOD_DAYS = 3660;

    private static final String SYNTAX = "Expected '<permits>/<period>' with an optional ' burst=<capacity>', "
            + "e.g. '5/1s', '100/1m' or '5/1s burst=20'.";

    /**
     * @throws InvalidRateLimitConfigurationException when a value is out of range
     */
    public Limit {
        if (period == null) {
            throw new InvalidRateLimitConfigurationException("limit period must not be null");
        }
        if (permits < 1 || permits > MAX_PERMITS) {
            throw new InvalidRateLimitConfigurationException(String.format(Locale.ROOT,
                    "limit permits must be between 1 and %d, but was %d", MAX_PERMITS, permits));
        }
        if (capacity < 1 || capacity > MAX_PERMITS) {
            throw new InvalidRateLimitConfigurationException(String.format(Locale.ROOT,
                    "limit burst capacity must be between 1 and %d, but was %d", MAX_PERMITS, capacity));
        }
        if (period.compareTo(Duration.ofMillis(1)) < 0 || period.compareTo(Duration.ofDays(MAX_PERIOD_DAYS)) > 0) {
            throw new InvalidRateLimitConfigurationException(String.format(Locale.ROOT,
                    "limit period must be between 1ms and %dd, but was %s", MAX_PERIOD_DAYS, period));
        }
        if (permits > period.toNanos()) {
            throw new InvalidRateLimitConfigurationException(String.format(Locale.ROOT,
                    "limit %d/%s refills more than one token per nanosecond; use a longer period",
                    permits, Durations.format(period)));
        }
    }

    /**
     * @param permits tokens per period, also the capacity
     * @param period the period
     * @return the limit
     * @throws InvalidRateLimitConfigurationException when a value is out of range
     */
    public static Limit of(long permits, Duration period) {
        return new Limit(permits, period, permits);
    }

    /**
     * @param capacity the most tokens the bucket holds
     * @return a copy with this capacity
     * @throws InvalidRateLimitConfigurationException when the capacity is out of range
     */
    public Limit withBurst(long capacity) {
        return new Limit(permits, period, capacity);
    }

    /**
     * Parses the text form.
     *
     * @param text for example {@code 5/1s} or {@code 5/1s burst=20}
     * @return the limit
     * @throws InvalidRateLimitConfigurationException naming the text and the expected syntax
     */
    public static Limit parse(String text) {
        if (text == null || text.isBlank()) {
            throw new InvalidRateLimitConfigurationException(null, text, "invalid limit '" + text + "'", SYNTAX);
        }
        String s = text.trim();
        String burstPart = null;
        int space = s.indexOf(' ');
        if (space > 0) {
            burstPart = s.substring(space + 1).trim();
            s = s.substring(0, space);
        }
        int slash = s.indexOf('/');
        if (slash <= 0 || slash == s.length() - 1) {
            throw new InvalidRateLimitConfigurationException(null, text, "invalid limit '" + text + "'", SYNTAX);
        }
        long permits = parseCount(s.substring(0, slash), text);
        Duration period = Durations.parseOrNull(s.substring(slash + 1));
        if (period == null) {
            throw new InvalidRateLimitConfigurationException(null, text, "invalid limit '" + text + "': period '"
                    + s.substring(slash + 1) + "' is not a duration", SYNTAX);
        }
        long capacity = permits;
        if (burstPart != null) {
            if (!burstPart.toLowerCase(Locale.ROOT).startsWith("burst=")) {
                throw new InvalidRateLimitConfigurationException(null, text, "invalid limit '" + text + "'", SYNTAX);
            }
            capacity = parseCount(burstPart.substring("burst=".length()), text);
        }
        try {
            return new Limit(permits, period, capacity);
        } catch (InvalidRateLimitConfigurationException e) {
            throw new InvalidRateLimitConfigurationException(null, text, "invalid limit '" + text + "': "
                    + e.getMessage(), null);
        }
    }

    private static long parseCount(String digits, String text) {
        String d = digits.trim().replace("_", "");
        if (d.isEmpty() || d.length() > 18 || !d.chars().allMatch(Character::isDigit)) {
            throw new InvalidRateLimitConfigurationException(null, text, "invalid limit '" + text + "': '" + digits
                    + "' is not a whole number from 1 to " + MAX_PERMITS, SYNTAX);
        }
        long value = Long.parseLong(d);
        if (value < 1 || value > MAX_PERMITS) {
            throw new InvalidRateLimitConfigurationException(null, text, "invalid limit '" + text + "': '" + digits
                    + "' is not a whole number from 1 to " + MAX_PERMITS, SYNTAX);
        }
        return value;
    }

    /**
     * @return the window's short name, its period in text form ({@code 1s}, {@code 1m}); unique within a rule
     */
    public String window() {
        return Durations.format(period);
    }

    /**
     * @return the text form, parseable by {@link #parse(String)}
     */
    @Override
    public String toString() {
        String base = permits + "/" + Durations.format(period);
        return capacity == permits ? base : base + " burst=" + capacity;
    }
}
