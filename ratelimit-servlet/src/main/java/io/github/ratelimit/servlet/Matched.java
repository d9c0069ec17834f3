package io.github.ratelimit.servlet;

import io.github.ratelimit.Guard;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.web.UrlGuards;
import jakarta.servlet.http.HttpServletRequest;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The guard of the rules that apply to a request (the URL rules that match it and its handler's rules), the request
 * to resolve their keys against, and whether the handler's own rules count failures (so a handler that throws is a
 * failed attempt).
 *
 * @param guard the guard of every rule that applies
 * @param view the request as the keys see it (with the attributes a handler lookup added, such as path variables)
 * @param handlerCountsFailures whether some rule of the handler counts only failed calls
 */
record Matched(Guard guard, HttpServletRequest view, boolean handlerCountsFailures) {

    /**
     * @param request a request
     * @param sources where the rules of its handler come from
     * @param guards the guards of the URL rules and handlers' rules, per combination
     * @return the guard of the rules that apply to the request, or {@code null} when none does
     */
    static @Nullable Matched of(HttpServletRequest request, List<HandlerRules> sources, UrlGuards<Guard> guards) {
        List<Rule> ofHandler = List.of();
        HttpServletRequest view = request;
        for (HandlerRules source : sources) {
            HandlerRules.Match match = source.rulesFor(request);
            if (!match.rules().isEmpty()) {
                ofHandler = ofHandler.isEmpty() ? match.rules() : concat(ofHandler, match.rules());
                view = match.view() != null ? match.view() : view;
            }
        }
        Guard guard =
                guards.forRequest(request.getMethod(), HttpRequestContext.pathWithinApplication(request), ofHandler);
        return guard == null ? null : new Matched(guard, view, countsFailures(ofHandler));
    }

    private static boolean countsFailures(List<Rule> rules) {
        for (Rule r : rules) {
            if (r.count() == Rule.Counted.FAILURES) {
                return true;
            }
        }
        return false;
    }

    private static List<Rule> concat(List<Rule> a, List<Rule> b) {
        List<Rule> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }
}
