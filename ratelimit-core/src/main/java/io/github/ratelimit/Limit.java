package io.github.ratelimit;

import io.github.ratelimit.support.Durations;
import java.time.DateTimeException;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.TemporalAdjusters;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

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
 * <p><b>Calendar quotas</b>: {@code 1000/1mo}, {@code 500/1w}, {@code 100/1d@Europe/Berlin}: a window aligned to
 * the calendar in a time zone (UTC unless one is given after {@code @}): local midnight to midnight, Monday to
 * Monday, the 1st to the 1st, so a day may last 23 or 25 hours across a daylight-saving change. Weeks and months are
 * always calendar windows; a day is one when a zone is given ({@code 1d} alone is a period of 24 hours). Calendar
 * quotas are fixed windows: a rule with one uses {@link Algorithm#FIXED_WINDOW}.
 *
 * @param permits tokens added per period, 1 to {@value #MAX_PERMITS}
 * @param period the refill period, 1 ms to {@value #MAX_PERIOD_DAYS} days; for a calendar quota its nominal length
 *        (a day, 7 days, 31 days)
 * @param capacity the most tokens the bucket holds, 1 to {@value #MAX_PERMITS}
 * @param calendar the calendar the window is aligned to, or {@code null} for a window of a fixed length
 */
public record Limit(
        long permits,
        Duration period,
        long capacity,
        @Nullable Calendar calendar) {

    /**
     * A window aligned to the calendar: a day, a week (from Monday) or a month (from the 1st), in a time zone.
     *
     * @param unit the calendar unit
     * @param zone the time zone whose midnights bound the windows
     */
    public record Calendar(Unit unit, ZoneId zone) {

        /** A calendar window's unit. */
        public enum Unit {
            /** Local midnight to local midnight. */
            DAY,
            /** Monday, local midnight, to the next. */
            WEEK,
            /** The 1st, local midnight, to the next. */
            MONTH
        }

        /**
         * @param unit the calendar unit
         * @param zone the time zone whose midnights bound the windows
         * @throws NullPointerException when a component is null
         */
        public Calendar {
            Objects.requireNonNull(unit, "unit");
            Objects.requireNonNull(zone, "zone");
        }

        /**
         * @param epochNanos an instant, in nanoseconds since the epoch
         * @return the start of the window holding it, in nanoseconds since the epoch
         */
        public long start(long epochNanos) {
            ZonedDateTime at = Instant.ofEpochSecond(
                            Math.floorDiv(epochNanos, 1_000_000_000L), Math.floorMod(epochNanos, 1_000_000_000L))
                    .atZone(zone);
            LocalDate day = at.toLocalDate();
            LocalDate first = switch (unit) {
                case DAY -> day;
                case WEEK -> day.with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY));
                case MONTH -> day.withDayOfMonth(1);
            };
            return nanos(first.atStartOfDay(zone));
        }

        /**
         * @param windowStart the start of a window, from {@link #start}
         * @return the start of the next window, in nanoseconds since the epoch
         */
        public long next(long windowStart) {
            LocalDate first = Instant.ofEpochSecond(
                            Math.floorDiv(windowStart, 1_000_000_000L), Math.floorMod(windowStart, 1_000_000_000L))
                    .atZone(zone)
                    .toLocalDate();
            LocalDate next = switch (unit) {
                case DAY -> first.plusDays(1);
                case WEEK -> first.plusWeeks(1);
                case MONTH -> first.plusMonths(1);
            };
            return nanos(next.atStartOfDay(zone));
        }

        private static long nanos(ZonedDateTime t) {
            return t.toEpochSecond() * 1_000_000_000L;
        }

        /** @return the unit's text and the zone unless it is UTC: {@code 1mo}, {@code 1d@Europe/Berlin} */
        @Override
        public String toString() {
            String text = switch (unit) {
                case DAY -> "1d";
                case WEEK -> "1w";
                case MONTH -> "1mo";
            };
            return zone.equals(ZoneOffset.UTC) ? (unit == Unit.DAY ? text + "@UTC" : text) : text + "@" + zone.getId();
        }
    }

    /** The largest number of permits or capacity of one limit. */
    public static final long MAX_PERMITS = 1_000_000_000_000L;

    /** The longest period of one limit, in days. */
    public static final long MAX_PERIOD_DAYS = 3660;

    private static final String SYNTAX = "Expected '<permits>/<period>' with an optional ' burst=<capacity>', "
            + "e.g. '5/1s', '100/1m' or '5/1s burst=20'.";

    /**
     * A window of a fixed length.
     *
     * @param permits tokens added per period
     * @param period the refill period
     * @param capacity the most tokens the bucket holds
     * @throws InvalidRateLimitConfigurationException when a value is out of range
     */
    public Limit(long permits, Duration period, long capacity) {
        this(permits, period, capacity, null);
    }

    /**
     * @param permits tokens added per period
     * @param period the refill period
     * @param capacity the most tokens the bucket holds
     * @param calendar the calendar the window is aligned to, or {@code null}
     * @throws InvalidRateLimitConfigurationException when a value is out of range
     */
    public Limit {
        if (calendar != null) {
            period = switch (calendar.unit()) {
                case DAY -> Duration.ofDays(1);
                case WEEK -> Duration.ofDays(7);
                case MONTH -> Duration.ofDays(31);
            };
            if (capacity != permits) {
                throw new InvalidRateLimitConfigurationException(String.format(
                        Locale.ROOT, "a calendar quota (%s) has no burst: its capacity is its permits", calendar));
            }
        }
        if (period == null) {
            throw new InvalidRateLimitConfigurationException("limit period must not be null");
        }
        if (permits < 1 || permits > MAX_PERMITS) {
            throw new InvalidRateLimitConfigurationException(String.format(
                    Locale.ROOT, "limit permits must be between 1 and %d, but was %d", MAX_PERMITS, permits));
        }
        if (capacity < 1 || capacity > MAX_PERMITS) {
            throw new InvalidRateLimitConfigurationException(String.format(
                    Locale.ROOT, "limit burst capacity must be between 1 and %d, but was %d", MAX_PERMITS, capacity));
        }
        if (period.compareTo(Duration.ofMillis(1)) < 0 || period.compareTo(Duration.ofDays(MAX_PERIOD_DAYS)) > 0) {
            throw new InvalidRateLimitConfigurationException(String.format(
                    Locale.ROOT, "limit period must be between 1ms and %dd, but was %s", MAX_PERIOD_DAYS, period));
        }
        if (permits > period.toNanos()) {
            throw new InvalidRateLimitConfigurationException(String.format(
                    Locale.ROOT,
                    "limit %d/%s refills more than one token per nanosecond; use a longer period",
                    permits,
                    Durations.format(period)));
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
        return new Limit(permits, period, capacity, calendar);
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
        String periodText = s.substring(slash + 1);
        Calendar calendar = calendar(periodText, text);
        Duration period = calendar != null ? Duration.ofDays(1) : Durations.parseOrNull(periodText);
        if (period == null) {
            throw new InvalidRateLimitConfigurationException(
                    null,
                    text,
                    "invalid limit '" + text + "': period '" + s.substring(slash + 1) + "' is not a duration",
                    SYNTAX);
        }
        long capacity = permits;
        if (burstPart != null) {
            if (!burstPart.toLowerCase(Locale.ROOT).startsWith("burst=")) {
                throw new InvalidRateLimitConfigurationException(null, text, "invalid limit '" + text + "'", SYNTAX);
            }
            capacity = parseCount(burstPart.substring("burst=".length()), text);
        }
        try {
            return new Limit(permits, period, capacity, calendar);
        } catch (InvalidRateLimitConfigurationException e) {
            throw new InvalidRateLimitConfigurationException(
                    null, text, "invalid limit '" + text + "': " + e.getMessage(), null);
        }
    }

    /** @return the calendar a period text names ({@code 1mo}, {@code 1w}, {@code 1d@Zone}), or {@code null} */
    private static @Nullable Calendar calendar(String periodText, String text) {
        int at = periodText.indexOf('@');
        String unitText = (at < 0 ? periodText : periodText.substring(0, at)).toLowerCase(Locale.ROOT);
        Calendar.Unit unit = switch (unitText) {
            case "1mo", "mo" -> Calendar.Unit.MONTH;
            case "1w", "w" -> Calendar.Unit.WEEK;
            case "1d", "d" -> at < 0 ? null : Calendar.Unit.DAY;
            default -> null;
        };
        if (unit == null) {
            if (at >= 0 || unitText.endsWith("mo") || unitText.endsWith("w")) {
                throw new InvalidRateLimitConfigurationException(
                        null,
                        text,
                        "invalid limit '" + text + "': a calendar " + "window is 1d, 1w or 1mo",
                        "Write e.g. '1000/1mo', '500/1w' or '100/1d@Europe/Berlin'.");
            }
            return null;
        }
        if (at < 0) {
            return new Calendar(unit, ZoneOffset.UTC);
        }
        String zone = periodText.substring(at + 1);
        try {
            return new Calendar(unit, zone.equalsIgnoreCase("UTC") ? ZoneOffset.UTC : ZoneId.of(zone));
        } catch (DateTimeException e) {
            throw new InvalidRateLimitConfigurationException(
                    null,
                    text,
                    "invalid limit '" + text + "': '" + zone + "' is not a time zone",
                    "Use a zone ID such as 'Europe/Berlin', 'America/New_York' or 'UTC'.");
        }
    }

    private static long parseCount(String digits, String text) {
        String d = digits.trim().replace("_", "");
        if (d.isEmpty() || d.length() > 18 || !d.chars().allMatch(Character::isDigit)) {
            throw new InvalidRateLimitConfigurationException(
                    null,
                    text,
                    "invalid limit '" + text + "': '" + digits + "' is not a whole number from 1 to " + MAX_PERMITS,
                    SYNTAX);
        }
        long value = Long.parseLong(d);
        if (value < 1 || value > MAX_PERMITS) {
            throw new InvalidRateLimitConfigurationException(
                    null,
                    text,
                    "invalid limit '" + text + "': '" + digits + "' is not a whole number from 1 to " + MAX_PERMITS,
                    SYNTAX);
        }
        return value;
    }

    /**
     * @param epochNanos an instant, in nanoseconds since the epoch
     * @return the start of this limit's fixed window that holds it: the calendar's for a calendar quota, else a
     *         multiple of the period from the epoch (as fixed windows align)
     */
    public long windowStart(long epochNanos) {
        if (calendar != null) {
            return calendar.start(epochNanos);
        }
        long nanos = period.toNanos();
        return Math.floorDiv(epochNanos, nanos) * nanos;
    }

    /**
     * @param windowStart the start of a window, from {@link #windowStart}
     * @return the start of the next window
     */
    public long windowEnd(long windowStart) {
        return calendar != null ? calendar.next(windowStart) : windowStart + period.toNanos();
    }

    /**
     * @return the window's short name, its period in text form ({@code 1s}, {@code 1m}); unique within a rule
     */
    public String window() {
        return calendar != null ? calendar.toString() : Durations.format(period);
    }

    /**
     * @return the text form, parseable by {@link #parse(String)}
     */
    @Override
    public String toString() {
        String base = permits + "/" + window();
        return capacity == permits ? base : base + " burst=" + capacity;
    }
}
