package io.github.ratelimit.spring.boot.actuate;

import io.github.ratelimit.internal.admin.AdminInput;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;

/**
 * Refuses a request to the {@code ratelimitkeys} or {@code ratelimits} endpoint whose query parameters or JSON body
 * name another rule, key or plan than its path. Actuator merges both over the path's selectors before an operation sees them (Boot 4.1:
 * {@code POST …/ratelimitkeys/api/alice?key=bob}, or with {@code {"key": "bob"}}, acts on {@code bob}), so an
 * operation cannot tell from its arguments alone; on Spring MVC, the path's own values are still in the request
 * (the handler mapping's URI template variables), and are compared here. Elsewhere (WebFlux, Jersey) there is no
 * request bound to the thread, and the operation takes the merged values, as documented.
 */
final class PathSelectors {

    /** Spring MVC's {@code HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE}, named so WebFlux apps need no MVC. */
    static final String URI_TEMPLATE_VARIABLES = "org.springframework.web.servlet.HandlerMapping.uriTemplateVariables";

    private static final boolean SPRING_WEB = isPresent("org.springframework.web.context.request.RequestContextHolder");

    private PathSelectors() {}

    /**
     * @param rule the rule the operation was given
     * @param key the key the operation was given from its path selector, or {@code null} when it has none
     * @throws IllegalArgumentException when the path names another rule or key than the operation was given
     */
    static void check(String rule, String key) {
        Map<?, ?> path = SPRING_WEB ? pathVariables() : null;
        if (path == null) {
            return;
        }
        same(path, "rule", rule);
        if (key != null) {
            same(path, "key", key);
        }
    }

    /**
     * @param name a path selector's name ({@code rule}, {@code plan})
     * @param given the value the operation was given for it
     * @throws IllegalArgumentException when the path names another value than the operation was given
     */
    static void checkOne(String name, String given) {
        Map<?, ?> path = SPRING_WEB ? pathVariables() : null;
        if (path != null) {
            same(path, name, given);
        }
    }

    private static void same(Map<?, ?> path, String name, String given) {
        if (path.get(name) instanceof String inPath) {
            AdminInput.sameAsPath(name, inPath, given, "…/ratelimitkeys/{rule}");
        }
    }

    private static @Nullable Map<?, ?> pathVariables() {
        RequestAttributes request = RequestContextHolder.getRequestAttributes();
        Object variables =
                request == null ? null : request.getAttribute(URI_TEMPLATE_VARIABLES, RequestAttributes.SCOPE_REQUEST);
        return variables instanceof Map<?, ?> m ? m : null;
    }

    private static boolean isPresent(String className) {
        try {
            Class.forName(className, false, PathSelectors.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
