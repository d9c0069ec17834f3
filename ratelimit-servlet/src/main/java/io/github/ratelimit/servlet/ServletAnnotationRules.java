package io.github.ratelimit.servlet;

import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.config.RateLimitAnnotations;
import jakarta.servlet.ServletContext;
import jakarta.servlet.http.HttpServletMapping;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.lang.reflect.Method;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The {@code @RateLimit} annotations of the servlets registered in a web application: on the servlet's class, and
 * on the {@code doGet}, {@code doPost}, ... method for the request's method. Found once, from the servlet
 * registrations; immutable afterwards.
 */
final class ServletAnnotationRules implements HandlerRules {

    private static final List<String> HTTP_METHODS =
            List.of("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE");
    /** The entry of a servlet's rules for methods without a {@code doXxx} of their own. */
    private static final String OTHER_METHODS = "";

    /** servlet name → HTTP method → rules from its annotations. */
    private final Map<String, Map<String, Match>> servletRules;

    private ServletAnnotationRules(Map<String, Map<String, Match>> servletRules) {
        this.servletRules = servletRules;
    }

    /**
     * @param context the web application
     * @return the annotations of its registered servlets
     */
    static ServletAnnotationRules scan(ServletContext context) {
        ClassLoader loader = context.getClassLoader();
        Map<String, Map<String, Match>> all = new HashMap<>();
        context.getServletRegistrations().forEach((servletName, registration) -> {
            String className = registration.getClassName();
            if (className == null) {
                return;
            }
            Class<?> type;
            try {
                type = Class.forName(className, false, loader);
            } catch (ClassNotFoundException | LinkageError e) {
                return; // The container reports a servlet it cannot load itself.
            }
            Map<String, Match> byMethod = new HashMap<>();
            List<Rule> ofType = RateLimitAnnotations.rulesOfType(type);
            for (String method : HTTP_METHODS) {
                Method handler = handlerMethod(type, method);
                if (handler == null && method.equals("HEAD")) {
                    // HttpServlet answers HEAD with doGet unless the servlet has a doHead of its own.
                    handler = handlerMethod(type, "GET");
                }
                List<Rule> rules = handler != null ? RateLimitAnnotations.rulesFor(type, handler) : ofType;
                if (!rules.isEmpty()) {
                    byMethod.put(method, new Match(List.copyOf(rules), null));
                }
            }
            if (!ofType.isEmpty()) {
                // Any other method (lower case, WebDAV, made up) reaches only a servlet's service(): its type's rules.
                byMethod.put(OTHER_METHODS, new Match(List.copyOf(ofType), null));
            }
            if (!byMethod.isEmpty()) {
                all.put(servletName, Map.copyOf(byMethod));
            }
        });
        return new ServletAnnotationRules(Map.copyOf(all));
    }

    /** The {@code doXxx} method a servlet class handles an HTTP method with, searching superclasses. */
    private static @Nullable Method handlerMethod(Class<?> type, String httpMethod) {
        String name = "do" + httpMethod.charAt(0) + httpMethod.substring(1).toLowerCase(Locale.ROOT);
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            if (c.getName().startsWith("jakarta.servlet.")) {
                return null;
            }
            try {
                return c.getDeclaredMethod(name, HttpServletRequest.class, HttpServletResponse.class);
            } catch (NoSuchMethodException e) {
                // try the superclass
            }
        }
        return null;
    }

    /**
     * @return every list of rules a request can get, to compile at start-up
     */
    Collection<List<Rule>> all() {
        return servletRules.values().stream()
                .flatMap(m -> m.values().stream())
                .map(Match::rules)
                .toList();
    }

    @Override
    public Match rulesFor(HttpServletRequest request) {
        if (servletRules.isEmpty()) {
            return Match.none();
        }
        HttpServletMapping mapping = request.getHttpServletMapping();
        Map<String, Match> byMethod = mapping == null ? null : servletRules.get(mapping.getServletName());
        if (byMethod == null) {
            return Match.none();
        }
        String method = request.getMethod();
        Match rules = byMethod.get(HTTP_METHODS.contains(method) ? method : OTHER_METHODS);
        return rules == null ? Match.none() : rules;
    }
}
