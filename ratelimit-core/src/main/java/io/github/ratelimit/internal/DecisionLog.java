package io.github.ratelimit.internal;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Decision.Verdict;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.support.RateLimitedLog;
import java.lang.System.Logger.Level;

/**
 * A {@link RateLimiter.Listener} that logs what a shadow rule would have rejected (at INFO), so a limit can be tried
 * in production before it is enforced. At most one line per rule family every 10 s, with a count of the ones held
 * back; never the key, which may identify a person. Thread-safe.
 */
public final class DecisionLog implements RateLimiter.Listener {

    private final RateLimitedLog shadowLog = new RateLimitedLog(10_000_000_000L);

    @Override
    public void onDecision(Decision decision) {
        if (decision.outcome() != Outcome.SHADOW_REJECTED) {
            return;
        }
        for (Verdict v : decision.verdicts()) {
            if (v.outcome() == Outcome.SHADOW_REJECTED) {
                shadowLog.log(
                        Level.INFO, "Shadow rate limit rule '" + v.rule() + "' would have rejected a request", null);
            }
        }
    }
}
