package io.github.ratelimit.servlet;

import io.github.ratelimit.Rule;
import jakarta.servlet.http.HttpServletRequest;

import java.util.List;

/**
 * The rules of the handler that will serve a request (a servlet's or a controller method's {@code @RateLimit}),
 * found before the handler runs, so that {@link RateLimitFilter} decides them together with its URL rules: one
 * decision per request, and a call one rule rejects costs the others nothing.
 *
 * <p>The filter finds the {@code @RateLimit} annotations of the servlets registered in {@code web.xml} itself;
 * the Spring Boot starter supplies an implementation for Spring MVC's handler methods.
 *
 * <p>Implementations are called on every request the filter sees: find the handler quickly, leave the request as
 * it was (no attributes of the lookup's own), and return the same list instance for the same handler, which the
 * filter's cache of guards is keyed by. Thread-safe.
 */
@FunctionalInterface
public interface HandlerRules {

    /**
     * @param request a request, before its handler runs
     * @return the rules of the handler that will serve it; empty when it has none or none can be decided yet
     */
    List<Rule> rulesFor(HttpServletRequest request);
}
