package io.github.ratelimit.internal;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CallTooLargeException;
import io.github.ratelimit.Limit;
import io.github.ratelimit.store.BucketStore;

/**
 * What one call takes from a rule: its permits times the rule's cost, checked against what the key's windows can ever
 * hold, so a call that could never pass is an error at once rather than a rejection forever.
 */
final class CallPermits {

    private CallPermits() {}

    /** @return the call's permits times what its rule's permits expression gave */
    static long multiply(CompiledRule rule, long permits, long own) {
        try {
            return Math.multiplyExact(permits, own);
        } catch (ArithmeticException e) {
            throw tooLarge(rule, Long.MAX_VALUE, 0, "more permits than a long holds");
        }
    }

    /** @return the tokens a call of {@code permits} takes from the rule */
    static long cost(CompiledRule rule, long permits) {
        if (rule.rule.algorithm() == Algorithm.SLIDING_WINDOW_LOG) {
            throw new IllegalArgumentException("Rule '" + rule.name + "' uses SLIDING_WINDOW_LOG, whose log counts "
                    + "every call at the rule's own cost, so a call of " + permits + " permits cannot be counted: "
                    + "give the rule another algorithm (SLIDING_WINDOW_COUNTER is the nearest), or a cost of its own");
        }
        try {
            return Math.multiplyExact(rule.cost, permits);
        } catch (ArithmeticException e) {
            throw tooLarge(
                    rule,
                    permits,
                    0,
                    "at its cost of " + rule.cost + " per permit that is more tokens than a " + "long holds");
        }
    }

    /**
     * A call dearer than a window of its key's limits can ever hold would be rejected forever: an error instead.
     *
     * @param key the call's key under the rule
     * @param cost the tokens the call takes
     * @param limits the key's limits
     * @param permits the call's permits, for the message
     */
    static void checkHolds(CompiledRule rule, String key, long cost, BucketStore.Limits limits, long permits) {
        Algorithm algorithm = limits.algorithm();
        for (Limit limit : limits.limits()) {
            long capacity = algorithm.capacity(limit);
            if (cost > capacity) {
                long most = Long.MAX_VALUE;
                for (Limit l : limits.limits()) {
                    most = Math.min(most, algorithm.capacity(l) / rule.cost);
                }
                throw tooLarge(
                        rule,
                        permits,
                        most,
                        (key == KeyExpressions.SHARED_MISSING_KEY ? "" : "for its key, ")
                                + "it takes " + cost + " tokens, and the window " + limit + " holds at most " + capacity
                                + ". Split the call, or give the rule a larger limit");
            }
        }
    }

    private static CallTooLargeException tooLarge(CompiledRule rule, long permits, long most, String why) {
        return new CallTooLargeException(
                "A call of " + permits + " permits can never pass rule '" + rule.name + "': " + why + ".",
                rule.publicName,
                permits,
                most);
    }
}
