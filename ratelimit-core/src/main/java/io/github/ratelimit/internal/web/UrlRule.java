package io.github.ratelimit.internal.web;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.KeyExpressions;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A rule and the requests it applies to: path patterns (Ant style: {@code /api/**}, {@code /users/*}) and,
 * optionally, HTTP methods. A request to which several URL rules apply is decided by all of them together.
 * Immutable and thread-safe.
 *
 * <p>Methods match regardless of case, and a rule for {@code GET} also applies to {@code HEAD}: servlets and Spring
 * MVC answer a HEAD with the GET handler (without the body), so a GET limit that HEAD could bypass would be no
 * limit.
 */
public final class UrlRule {

    private final Rule rule;
    private final List<PathPattern> paths;
    private final Set<String> methods;
    private final Phase phase;

    private UrlRule(Rule rule, List<PathPattern> paths, Set<String> methods, Phase phase) {
        this.rule = rule;
        this.paths = paths;
        this.methods = methods;
        this.phase = phase;
    }

    /**
     * @param rule the rule
     * @param paths path patterns within the application, at least one
     * @param methods HTTP methods, or empty for all
     * @return the URL rule
     * @throws InvalidRateLimitConfigurationException naming the rule's source when a pattern is malformed or
     *         none is given
     */
    public static UrlRule of(Rule rule, List<String> paths, Set<String> methods) {
        return of(rule, paths, methods, Phase.AFTER_AUTHENTICATION);
    }

    /**
     * @param rule the rule
     * @param paths path patterns within the application, at least one
     * @param methods HTTP methods, or empty for all
     * @param phase where the rule decides; a rule before authentication cannot be keyed by {@code user}
     * @return the URL rule
     * @throws InvalidRateLimitConfigurationException naming the rule's source when a pattern is malformed or
     *         none is given, or a rule before authentication is keyed by the user
     */
    public static UrlRule of(Rule rule, List<String> paths, Set<String> methods, Phase phase) {
        Objects.requireNonNull(rule, "rule");
        Objects.requireNonNull(phase, "phase");
        if (phase == Phase.BEFORE_AUTHENTICATION
                && KeyExpressions.atoms(rule.key()).contains("user")) {
            throw new InvalidRateLimitConfigurationException(
                    rule.source(),
                    rule.key(),
                    "key '" + rule.key()
                            + "' uses 'user', but the rule decides before authentication, when no user is known",
                    "Key it by "
                            + "'ip', 'basic-user' or 'form-user' (the user name a login claims), 'param:<name>' or a header, or "
                            + "decide after authentication.");
        }
        if (paths == null || paths.isEmpty()) {
            throw new InvalidRateLimitConfigurationException(
                    rule.source(), null, "no path is given", "Give at least one pattern, e.g. '/api/**'.");
        }
        List<PathPattern> patterns =
                paths.stream().map(p -> PathPattern.parse(p, rule.source())).toList();
        Set<String> upper = methods == null
                ? Set.of()
                : methods.stream()
                        .map(m -> m.trim().toUpperCase(Locale.ROOT))
                        .filter(m -> !m.isEmpty())
                        .collect(Collectors.toUnmodifiableSet());
        return new UrlRule(rule, patterns, upper, phase);
    }

    /** @return where the rule decides */
    public Phase phase() {
        return phase;
    }

    /** @return the rule */
    public Rule rule() {
        return rule;
    }

    /** @return the path patterns */
    public List<String> paths() {
        return paths.stream().map(PathPattern::toString).toList();
    }

    /** @return the HTTP methods, upper case, empty for all */
    public Set<String> methods() {
        return methods;
    }

    /**
     * @param method the request method
     * @param path the request path within the application
     * @return whether the rule applies to the request
     */
    public boolean matches(String method, String path) {
        if (!methods.isEmpty() && !matchesMethod(method)) {
            return false;
        }
        for (PathPattern p : paths) {
            if (p.matches(path)) {
                return true;
            }
        }
        return false;
    }

    private boolean matchesMethod(String method) {
        if (method == null) {
            return false;
        }
        if (methods.contains(method)) {
            return true;
        }
        String upper = method.toUpperCase(Locale.ROOT);
        return methods.contains(upper) || (upper.equals("HEAD") && methods.contains("GET"));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof UrlRule other
                && rule.equals(other.rule)
                && paths().equals(other.paths())
                && methods.equals(other.methods)
                && phase == other.phase;
    }

    @Override
    public int hashCode() {
        return Objects.hash(rule, paths(), methods, phase);
    }

    @Override
    public String toString() {
        return "UrlRule[" + paths + (methods.isEmpty() ? "" : " " + methods) + " -> " + rule.name()
                + (phase == Phase.BEFORE_AUTHENTICATION ? ", before authentication" : "") + "]";
    }
}
