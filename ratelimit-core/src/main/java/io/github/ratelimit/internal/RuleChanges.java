package io.github.ratelimit.internal;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Limit;
import io.github.ratelimit.Mode;
import io.github.ratelimit.Rule;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The one check of a change of a rule's limits or mode at run time, wherever it comes from (the admin operations on
 * every face, a change read back from Redis, {@link io.github.ratelimit.RateLimiter#changeRule}): the rule is built
 * again with the new values by {@link Rule.Builder}, so it passes the very checks, with the very messages, a rule
 * passes at start-up. Not part of the public API.
 *
 * <p>Which mode changes are safe: {@link Mode#HARD} and {@link Mode#SHADOW} into each other (both answer at once;
 * only whether a refusal is enforced differs). Into or out of {@link Mode#SOFT} is refused: a SOFT rule holds
 * callers while they wait ({@code max-delay}, {@code max-waiting}, and its place after every other rule of a call),
 * all fixed when the rule is compiled.
 */
public final class RuleChanges {

    private RuleChanges() {}

    /**
     * @param rule the rule as configured
     * @param limits its limits from now on, or {@code null} to keep its configured ones
     * @param mode its mode from now on, or {@code null} to keep its configured one
     * @return the rule with those limits and that mode
     * @throws InvalidRateLimitConfigurationException when the rule cannot use the limits (the start-up check and its
     *         message)
     * @throws IllegalArgumentException when nothing is changed, the rule is a concurrency rule given limits, or the
     *         mode change is not a safe one, saying why
     */
    public static Rule changed(Rule rule, @Nullable List<Limit> limits, @Nullable Mode mode) {
        if (limits == null && mode == null) {
            throw new IllegalArgumentException("nothing to change in rule '" + rule.name() + "': give its limits "
                    + "(e.g. \"limits\": \"2/1s\"), its mode (HARD or SHADOW), or both; to go back to its configured "
                    + "ones, delete the change");
        }
        if (limits != null && rule.concurrency() > 0) {
            throw new IllegalArgumentException("rule '" + rule.name() + "' is a concurrency rule (" + rule.concurrency()
                    + " calls in flight per key): it has no limits to change; change its concurrency in the "
                    + "configuration");
        }
        if (limits != null && limits.isEmpty()) {
            throw new IllegalArgumentException("no limits given for rule '" + rule.name() + "': give at least one, "
                    + "e.g. 2/1s; to go back to its configured ones, delete the change");
        }
        Mode m = mode == null ? rule.mode() : mode;
        String unsafe = unsafeModeChange(rule.mode(), m);
        if (unsafe != null) {
            throw new IllegalArgumentException("rule '" + rule.name() + "' cannot change mode at run time from "
                    + rule.mode() + " to " + m + ": " + unsafe);
        }
        Rule withLimits = limits == null ? rule : rule.withLimits(limits);
        return m == withLimits.mode()
                ? withLimits
                : withLimits.toBuilder().mode(m).build();
    }

    /**
     * @param from the configured mode
     * @param to the mode asked for
     * @return why the change is not safe at run time, or {@code null} when it is
     */
    static @Nullable String unsafeModeChange(Mode from, Mode to) {
        if (from == to || (from != Mode.SOFT && to != Mode.SOFT)) {
            return null;
        }
        return "a SOFT rule holds callers while they wait (max-delay, max-waiting, its place after every other rule of "
                + "a call), which are fixed when the rule starts; only HARD and SHADOW change into each other at run "
                + "time. Change it in the configuration and restart";
    }
}
