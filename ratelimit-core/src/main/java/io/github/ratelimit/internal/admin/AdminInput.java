package io.github.ratelimit.internal.admin;

import io.github.ratelimit.support.LogText;
import java.util.Collection;
import java.util.Map;

/**
 * The checks of an operator's input, with one message for each mistake, whichever face it comes through (the
 * Actuator endpoint, whose values are JSON's: strings, booleans, numbers, lists, objects; the admin servlet, whose
 * values are request parameters: a string, or a list when one is given twice). Each check throws
 * {@link IllegalArgumentException} with the message an operator reads in a 400 answer.
 */
public final class AdminInput {

    /** The most a {@code count} parameter may ask for. */
    public static final int MAX_COUNT = 1000;

    private AdminInput() {}

    /**
     * @param field the field's name
     * @param value its value, or {@code null} when missing
     * @return the value
     * @throws IllegalArgumentException when it is missing
     */
    public static Object required(String field, Object value) {
        if (value == null) {
            throw new IllegalArgumentException("\"" + field
                    + "\" is missing: give the key as decisions show it, or the " + "address a listing gives");
        }
        return value;
    }

    /**
     * @param field the field's name
     * @param value its value
     * @return the value, a string
     * @throws IllegalArgumentException when it is anything but one string
     */
    public static String text(String field, Object value) {
        if (!(value instanceof String s)) {
            throw new IllegalArgumentException("\"" + field + "\" is " + describe(value) + "; it must be one string");
        }
        return s;
    }

    /**
     * @param field the field's name
     * @param value its value, a string of digits
     * @return the number
     * @throws IllegalArgumentException when it is not one string of 1 to 4 digits
     */
    public static int number(String field, Object value) {
        String s = text(field, value);
        if (!s.matches("[0-9]{1,4}")) {
            throw new IllegalArgumentException(
                    "\"" + field + "\" is " + LogText.quote(s) + "; it must be a whole " + "number, 1 to " + MAX_COUNT);
        }
        return Integer.parseInt(s);
    }

    /**
     * @param field the field's name
     * @param value its value, a string of digits, or {@code null} for the default
     * @param defaultCount the count when none is given
     * @return the count, 1 to {@value #MAX_COUNT}
     * @throws IllegalArgumentException when it is not a whole number in that range
     */
    public static int count(String field, Object value, int defaultCount) {
        int n = value == null ? defaultCount : number(field, value);
        if (n < 1 || n > MAX_COUNT) {
            throw new IllegalArgumentException("\"" + field + "\" is " + LogText.quote(String.valueOf(value))
                    + "; it must be a whole number, 1 to " + MAX_COUNT);
        }
        return n;
    }

    /**
     * Checks a change of a key: exactly one of limits, a plan and a reset, and a reset only as {@code true}.
     *
     * @param limits the limits given, or {@code null}
     * @param plan the plan given, or {@code null}
     * @param reset the reset flag given, or {@code null}
     * @throws IllegalArgumentException when the reset flag is anything but {@code true}, or not exactly one is given
     */
    public static void checkChange(Object limits, Object plan, Object reset) {
        // Actuator hands an operation its body's fields as text (JSON true arrives as "true"): exactly that is reset.
        if (reset != null && !Boolean.TRUE.equals(reset) && !"true".equals(reset)) {
            throw new IllegalArgumentException(
                    "\"reset\" is " + describe(reset) + "; it can only be the JSON boolean true");
        }
        int given = (limits != null ? 1 : 0) + (plan != null ? 1 : 0) + (reset != null ? 1 : 0);
        if (given != 1) {
            throw new IllegalArgumentException("give exactly one of \"limits\" (a string, e.g. \"5/1s,100/1m\"), "
                    + "\"plan\" (a string) and \"reset\": true");
        }
    }

    /**
     * @param name {@code rule} or {@code key}
     * @param inPath the value the request's path names
     * @param given the value a query parameter or body field names
     * @param keysPath the path that takes a key in the body or query, for the message (e.g.
     *        {@code …/ratelimitkeys/{rule}})
     * @throws IllegalArgumentException when they differ, saying to give the value once
     */
    public static void sameAsPath(String name, String inPath, String given, String keysPath) {
        if (!inPath.equals(given)) {
            throw new IllegalArgumentException("the path names " + name + " " + LogText.quote(inPath) + ", but a query "
                    + "parameter or body field \"" + name + "\" names " + LogText.quote(given) + "; give the " + name
                    + " once, in the path or (for a key) in the body or query of "
                    + (name.equals("key") ? keysPath : "the request"));
        }
    }

    /**
     * @param value a value given
     * @return what it is, for a message: a string quoted, {@code true}/{@code false}, or its kind
     */
    public static String describe(Object value) {
        return value instanceof String s
                ? LogText.quote(s)
                : value instanceof Boolean b
                        ? String.valueOf(b)
                        : value instanceof Number
                                ? "a number"
                                : value instanceof Collection<?>
                                        ? "a list (given twice?)"
                                        : value instanceof Map<?, ?> ? "an object" : "of another type";
    }
}
