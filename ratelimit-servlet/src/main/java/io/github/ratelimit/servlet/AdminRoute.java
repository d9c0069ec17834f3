package io.github.ratelimit.servlet;

import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A path of {@link RateLimitAdminServlet}, from the request's path info (decoded by the container), and the methods
 * it answers.
 *
 * @param kind what the path shows or changes
 * @param rule the rule it names, or {@code null}
 * @param key the key it names, or {@code null}
 */
record AdminRoute(
        Kind kind, @Nullable String rule, @Nullable String key) {

    /** What a path shows or changes. */
    enum Kind {
        /** {@code /}: rules, stores and the most-rejected keys. */
        SUMMARY(Set.of("GET")),
        /** {@code /rejected}: the most-rejected keys. */
        REJECTED(Set.of("GET")),
        /** {@code /health}: the stores' health. */
        HEALTH(Set.of("GET")),
        /** {@code /keys/{rule}}: the rule's per-key limits, or a key given as a parameter. */
        RULE_KEYS(Set.of("GET", "POST", "DELETE")),
        /** {@code /keys/{rule}/{key}}: one key. */
        KEY(Set.of("GET", "POST", "DELETE")),
        /** {@code /rules/{rule}}: a rule's own limits and mode, as configured and as changed at run time. */
        RULE(Set.of("GET", "POST", "DELETE")),
        /** {@code /plans/{plan}}: a plan's limits, as configured and as changed at run time (the plan in rule). */
        PLAN(Set.of("GET", "POST", "DELETE"));

        private final Set<String> methods;

        Kind(Set<String> methods) {
            this.methods = methods;
        }
    }

    /** Every path the servlet answers, for the message of a 404. */
    static final String PATHS =
            "GET /, GET /rejected, GET /health, and GET, POST or DELETE /keys/{rule}, /keys/{rule}/{key}, "
                    + "/rules/{rule} and /plans/{plan}";

    /**
     * @param pathInfo the request's path info: the path after the servlet's mapping, or {@code null}
     * @return the route, or {@code null} for a path the servlet does not answer
     */
    static @Nullable AdminRoute of(String pathInfo) {
        if (pathInfo == null || pathInfo.equals("/")) {
            return new AdminRoute(Kind.SUMMARY, null, null);
        }
        String[] segments = pathInfo.substring(1).split("/", -1);
        for (String s : segments) {
            if (s.isEmpty()) {
                return null;
            }
        }
        return switch (segments[0]) {
            case "rejected" -> segments.length == 1 ? new AdminRoute(Kind.REJECTED, null, null) : null;
            case "health" -> segments.length == 1 ? new AdminRoute(Kind.HEALTH, null, null) : null;
            case "keys" ->
                segments.length == 2
                        ? new AdminRoute(Kind.RULE_KEYS, segments[1], null)
                        : segments.length == 3 ? new AdminRoute(Kind.KEY, segments[1], segments[2]) : null;
            case "rules" -> segments.length == 2 ? new AdminRoute(Kind.RULE, segments[1], null) : null;
            case "plans" -> segments.length == 2 ? new AdminRoute(Kind.PLAN, segments[1], null) : null;
            default -> null;
        };
    }

    /**
     * @param method an HTTP method
     * @return whether the path answers it ({@code HEAD} wherever {@code GET})
     */
    boolean allows(String method) {
        return kind.methods.contains(method) || (method.equals("HEAD") && kind.methods.contains("GET"));
    }

    /** @return the value of an {@code Allow} header for the path */
    String allow() {
        return kind.methods.size() == 1 ? "GET, HEAD" : "GET, HEAD, POST, DELETE";
    }
}
