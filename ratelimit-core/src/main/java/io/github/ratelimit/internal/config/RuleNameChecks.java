package io.github.ratelimit.internal.config;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.KeyExpressions;
import io.github.ratelimit.internal.MapLimitProvider;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The checks of settings that name rules, run once every rule is known (URL rules, and the annotations compiled at
 * start-up): by the rules file's filter in {@code init}, and by the Spring Boot starter once its singletons exist.
 */
public final class RuleNameChecks {

    private RuleNameChecks() {}

    /**
     * Checks per-key limits from configuration against every rule now known (URL rules and annotations), and warns
     * about keys no rule counts by: the one check the rules file and Spring Boot both run once their rules exist.
     *
     * @param keyLimits the per-key limits of {@code ratelimit.keys}
     * @param known every rule
     * @throws InvalidRateLimitConfigurationException when an entry names an unknown rule or limits a rule cannot use
     */
    public static void checkKeyLimits(MapLimitProvider keyLimits, Collection<Rule> known) {
        keyLimits.checkRules(known);
        List<String> unused = keyLimits.keysNoRuleCounts(known);
        if (!unused.isEmpty()) {
            System.getLogger(RuleNameChecks.class.getName())
                    .log(
                            System.Logger.Level.WARNING,
                            "No rate-limit rule "
                                    + "counts by these keys' expressions, so their limits apply to none: " + unused
                                    + ". A key is "
                                    + "'<key expression of a rule>:<value>', e.g. user:241531; check for a typo.");
        }
    }

    /**
     * Checks that plans from the call apply to some rule: {@code ratelimit.plan-rules} names rules that exist, and
     * without it, some rule counts by the user. Once every rule is known.
     *
     * @param planFrom where a call's plan comes from, or {@code null} when plans come from stored entries only
     * @param planRules the names, or {@code null} for none
     * @param known every rule
     * @throws InvalidRateLimitConfigurationException naming the first name no rule has, or saying no rule takes plans
     */
    public static void checkPlanRules(String planFrom, List<String> planRules, Collection<Rule> known) {
        if (planFrom == null || planRules == null) {
            return;
        }
        if (planRules.isEmpty()
                && known.stream()
                        .noneMatch(r -> r.concurrency() == 0
                                && KeyExpressions.atoms(r.key()).contains("user"))) {
            throw new InvalidRateLimitConfigurationException(
                    "ratelimit.plan-from",
                    planFrom,
                    "chooses plans for every " + "rule of windows counting by the user, and no rule does",
                    "Name the rules plans are for in " + "ratelimit.plan-rules.");
        }
        Set<String> names = new TreeSet<>();
        known.forEach(r -> names.add(r.name()));
        for (String name : planRules) {
            if (!names.contains(name)) {
                throw new InvalidRateLimitConfigurationException(
                        "ratelimit.plan-rules",
                        name,
                        "names rule '" + name + "', which no URL rule or annotation has",
                        "Use one of " + names + ".");
            }
        }
    }
}
