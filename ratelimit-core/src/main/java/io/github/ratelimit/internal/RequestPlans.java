package io.github.ratelimit.internal;

import io.github.ratelimit.Limit;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.key.KeyResolver;
import io.github.ratelimit.support.RateLimitedLog;

import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Plans chosen by the call itself ({@code ratelimit.plan-from}): a plan a trusted gateway names in a header, a
 * user's granted authority. For the keys of the rules it applies to that have no limits of their own from the limit
 * provider. Immutable; thread-safe.
 *
 * @param resolver gives a call's plan name, or {@code null} when it names none
 * @param plans the plans by name
 * @param rules the names of the rules it applies to; empty for every rule keyed by the user
 */
record RequestPlans(KeyResolver resolver, Map<String, List<Limit>> plans, Set<String> rules) {

    private static final RateLimitedLog LOG = new RateLimitedLog(10_000_000_000L);

    /**
     * @param rule a rule
     * @return whether the call's plan applies to it
     */
    boolean appliesTo(Rule rule) {
        // A concurrency rule has no windows for a plan to replace: plans are for it only when named (and then refused).
        return rules.isEmpty() ? rule.concurrency() == 0 && KeyExpressions.atoms(rule.key()).contains("user")
                : rules.contains(rule.name());
    }

    /**
     * @param context a call
     * @return the plan the call names, or {@code null} when it names none (or its resolver fails)
     */
    String planOf(RequestContext context) {
        try {
            return resolver.resolve(context);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Resolving the plan of a call (ratelimit.plan-from) failed; the rule's own limits "
                    + "apply", e);
            return null;
        }
    }
}
