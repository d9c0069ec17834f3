package io.github.ratelimit.internal;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.support.LogText;
import java.util.Collection;
import java.util.TreeSet;

/**
 * The one rule for a plan's name, wherever a name comes from (configuration, {@code LimitProvider.builder()},
 * {@code RedisLimitProvider}'s builder and {@code assignPlan}, the admin operations over HTTP or in a {@code web.xml}
 * application, an entry read back from Redis), with one message for a name that breaks it and one for a plan not
 * known. Not part of the public API.
 */
public final class PlanNames {

    /** The longest name of a plan. */
    public static final int MAX_LENGTH = 64;

    /** What to do about a name that breaks the rule. */
    public static final String ACTION = "Name plans with 1 to " + MAX_LENGTH + " printable ASCII characters without "
            + "spaces, quotes, commas, braces or backslashes, e.g. 'gold'.";

    private PlanNames() {}

    /**
     * @param name a plan's name, or {@code null}
     * @return why it cannot be a plan's name (the constraint, naming the name escaped), or {@code null} when it can
     */
    public static String problem(String name) {
        if (name == null || name.isEmpty()) {
            return "plan name is empty";
        }
        if (name.length() > MAX_LENGTH) {
            return "plan name " + LogText.quote(name) + " is " + name.length() + " characters long, over the limit of "
                    + MAX_LENGTH;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c <= ' ' || c >= 0x7f || "'\",{}\\".indexOf(c) >= 0) {
                return "plan name " + LogText.quote(name) + " contains " + LogText.quote(String.valueOf(c))
                        + " at index " + i;
            }
        }
        return null;
    }

    /**
     * @param where where the name was given, for the message, or {@code null}
     * @param name the name
     * @throws InvalidRateLimitConfigurationException when it cannot be a plan's name
     */
    public static void check(String where, String name) {
        String problem = problem(name);
        if (problem != null) {
            throw new InvalidRateLimitConfigurationException(where, name, problem, ACTION);
        }
    }

    /**
     * @param name a valid plan name
     * @param known the names of the plans known
     * @return the constraint for a plan that is not known: {@code plan 'x' is not known; known plans: [a, b]}
     */
    public static String unknown(String name, Collection<String> known) {
        return "plan " + LogText.quote(name) + " is not known; known plans: " + new TreeSet<>(known);
    }
}
