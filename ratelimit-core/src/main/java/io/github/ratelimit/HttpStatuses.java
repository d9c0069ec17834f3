package io.github.ratelimit;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;

/**
 * A set of HTTP response statuses, for rules that keep their tokens only for responses with one of them
 * ({@link Rule.Counted#STATUSES}): {@code 404} for a limit on what a scanner guesses, {@code 404,5xx} for one on
 * requests that fail. Written as codes ({@code 100} to {@code 599}) and classes ({@code 4xx}), separated by commas.
 * Immutable and thread-safe.
 *
 * <pre>{@code
 * HttpStatuses.parse("404,5xx").contains(503);   // true
 * }</pre>
 */
public final class HttpStatuses {

    private static final int LOWEST = 100;
    private static final int HIGHEST = 599;

    private final BitSet codes;
    private final String text;

    private HttpStatuses(BitSet codes, String text) {
        this.codes = codes;
        this.text = text;
    }

    /**
     * @param text codes and classes separated by commas, e.g. {@code 404,5xx}; spaces around items are ignored
     * @return the set
     * @throws InvalidRateLimitConfigurationException naming the item that is neither a code from 100 to 599 nor a
     *         class from {@code 1xx} to {@code 5xx}, or an empty set
     */
    public static HttpStatuses parse(String text) {
        if (text == null || text.isBlank()) {
            throw new InvalidRateLimitConfigurationException(
                    "statuses",
                    text,
                    "no status is given",
                    "Give the statuses whose responses keep their tokens, e.g. '404' or '404,5xx'.");
        }
        BitSet codes = new BitSet(HIGHEST + 1);
        List<String> items = new ArrayList<>();
        for (String raw : text.split(",", -1)) {
            String item = raw.trim().toLowerCase(Locale.ROOT);
            if (item.length() == 3 && item.endsWith("xx") && item.charAt(0) >= '1' && item.charAt(0) <= '5') {
                int from = (item.charAt(0) - '0') * 100;
                codes.set(from, from + 100);
            } else if (item.length() == 3
                    && item.chars().allMatch(c -> c >= '0' && c <= '9')
                    && Integer.parseInt(item) >= LOWEST
                    && Integer.parseInt(item) <= HIGHEST) {
                codes.set(Integer.parseInt(item));
            } else {
                throw new InvalidRateLimitConfigurationException(
                        "statuses",
                        text,
                        "'" + raw.trim() + "' is neither a status code from 100 to 599 nor a class from 1xx to 5xx",
                        "Write codes and classes separated by commas, e.g. '404,5xx'.");
            }
            items.add(item);
        }
        return new HttpStatuses(codes, String.join(",", items));
    }

    /**
     * @param status a response's status
     * @return whether it is in the set (a status outside 100 to 599 never is)
     */
    public boolean contains(int status) {
        return status >= LOWEST && status <= HIGHEST && codes.get(status);
    }

    /** @return the set as it was written, normalized ({@code 404,5xx}) */
    @Override
    public String toString() {
        return text;
    }

    @Override
    public boolean equals(Object o) {
        return o == this || o instanceof HttpStatuses other && codes.equals(other.codes);
    }

    @Override
    public int hashCode() {
        return codes.hashCode();
    }
}
