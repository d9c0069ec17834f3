package io.github.ratelimit.spring.boot.internal.method;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Verdict;
import java.util.List;

/**
 * A rejection by a limit inside the application (a service's limit on an outbound call, not the request's own
 * rules), as the response shows it: when to come back, and neither the rule's name (which names a class and a
 * method) nor its windows. Spring MVC and WebFlux answer it alike.
 */
public final class MaskedRejection {

    /** The rule name a response shows for a limit inside the application. */
    static final String RULE = "internal";

    private MaskedRejection() {}

    /**
     * @param decision a rejection
     * @return the decision with its rules' names replaced by {@value #RULE} and no windows
     */
    public static Decision of(Decision decision) {
        List<Verdict> verdicts = decision.verdicts().stream()
                .map(v -> new Verdict(RULE, null, v.mode(), v.outcome(), v.basis(), List.of(), v.waitNanos()))
                .toList();
        return new Decision(decision.outcome(), verdicts, decision.delayNanos(), decision.retryAfterNanos());
    }
}
