package io.github.ratelimit.servlet;

import io.github.ratelimit.Rule;
import jakarta.servlet.http.HttpServletRequest;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The rules of the handler that will serve a request (a servlet's or a controller method's {@code @RateLimit}),
 * found before the handler runs, so that {@link RateLimitFilter} decides them together with its URL rules: one
 * decision per request, and a call one rule rejects costs the others nothing.
 *
 * <p>The filter finds the {@code @RateLimit} annotations of the servlets registered in {@code web.xml} itself;
 * the Spring Boot starter supplies an implementation for Spring MVC's handler methods.
 *
 * <p>Implementations are called on every request the filter sees: find the handler quickly, and return the same
 * list instance of rules for the same handler. Thread-safe.
 */
@FunctionalInterface
public interface HandlerRules {

    /**
     * A handler's rules, and the request as the handler will see it, for resolving their keys: a framework that
     * adds attributes while finding the handler (Spring MVC's path variables) hands over a view with them, which the
     * filter resolves every key of the decision against.
     *
     * @param rules the handler's rules; empty when it has none
     * @param view the request with the attributes the handler lookup added, or {@code null} for the request itself
     */
    record Match(List<Rule> rules, @Nullable HttpServletRequest view) {

        private static final Match NONE = new Match(List.of(), null);

        /**
         * @param rules the handler's rules; empty when it has none
         * @param view the request with the attributes the handler lookup added, or {@code null} for the request itself
         * @throws NullPointerException when {@code rules} is null
         */
        public Match {
            Objects.requireNonNull(rules, "rules");
        }

        /**
         * @return the match of a request whose handler has no rules
         */
        public static Match none() {
            return NONE;
        }
    }

    /**
     * @param request a request, before its handler runs
     * @return the rules of the handler that will serve it ({@link Match#none()} when it has none or none can be
     *         decided yet), and the view of the request to resolve their keys against
     */
    Match rulesFor(HttpServletRequest request);
}
