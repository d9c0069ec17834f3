package io.github.ratelimit.spring.boot.actuate;

import io.github.ratelimit.Limit;
import io.github.ratelimit.redis.LimitAdmin;
import io.github.ratelimit.redis.RedisLimitProvider;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.support.LogText;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpoint;

import java.security.Principal;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The {@code ratelimitkeys} Actuator endpoint (HTTP only): one key of one rule, for operations on a live system,
 * through the core's {@link LimitAdmin} (the checks and the addressing that {@code web.xml} applications and plain
 * Java get too).
 *
 * <ul>
 *   <li>{@code GET /actuator/ratelimitkeys/{rule}}: a page of the rule's per-key limits ({@code ?cursor=&count=}),
 *       each entry with its {@code address}; with {@code ?key=}, one key's entry;
 *   <li>{@code GET /actuator/ratelimitkeys/{rule}/{key}}: one key's entry, with who set it and when;
 *   <li>{@code POST /actuator/ratelimitkeys/{rule}/{key}} with {@code {"limits": "5/1s,100/1m"}} or
 *       {@code {"plan": "gold"}}: sets the key's limits; with {@code {"reset": true}}: forgets what the key has
 *       counted, on every instance (unblocks it); {@code POST /actuator/ratelimitkeys/{rule}} with the key in the
 *       body ({@code {"key": "...", "reset": true}}) does the same for any key;
 *   <li>{@code DELETE /actuator/ratelimitkeys/{rule}/{key}}, or {@code DELETE /actuator/ratelimitkeys/{rule}?key=}:
 *       back to the rule's limits.
 * </ul>
 *
 * <p>Actuator merges query parameters and body fields over the path's selectors: on Spring MVC, a {@code rule} or
 * {@code key} given there that names another than the path is refused (400, {@link PathSelectors}), so an operation
 * acts on what its path names. A key in the path or the query is a key as decisions show it, or the {@code address} a listing gives (which
 * works for any key, one holding a {@code /} or a control character included). Every field has a strict JSON type
 * (strings, and {@code reset} the boolean {@code true}). Answers: 200; 400 with a message for bad input (limits the
 * rule cannot use, a cursor no page gave, a field of the wrong type); 404 for an unknown rule (naming the known ones),
 * a key without an entry, or per-key limits not kept here; 503 while Redis cannot be reached.
 *
 * <p>Limits and plans need {@code ratelimit.limit-store.enabled=true}; reset works with any store. Its access is
 * read-only unless {@code management.endpoint.ratelimitkeys.access=unrestricted}: writes must be switched on, and
 * then secured as Boot's own sensitive endpoints are (Spring Security on the management paths). Every change is
 * logged with the authenticated caller's name.
 */
@WebEndpoint(id = "ratelimitkeys", defaultAccess = Access.READ_ONLY)
public class RateLimitKeysEndpoint {

    private final LimitAdmin admin;

    /**
     * @param admin the admin operations over the application's limiter and limit store
     */
    public RateLimitKeysEndpoint(LimitAdmin admin) {
        this.admin = admin;
    }

    /**
     * @param rule a rule's name
     * @param key a key or its address: that key's entry instead of a page
     * @param cursor the previous page's {@code next}, or none for the first page
     * @param count about how many entries, 1 to 1,000 (default 100)
     * @return a page of the rule's per-key limits, or one key's entry
     */
    @ReadOperation
    public WebEndpointResponse<Object> entries(@Selector String rule, @Nullable Object key, @Nullable Object cursor,
                                               @Nullable Object count) {
        if (key != null) {
            return answer(() -> entry(rule, text("key", key)));
        }
        return answer(() -> {
            PathSelectors.check(rule, null);
            if (!admin.keepsLimits()) {
                return notKept();
            }
            String c = cursor == null ? null : text("cursor", cursor);
            int n = count == null ? 100 : number("count", count);
            RedisLimitProvider.Page page = admin.list(rule, c, n);
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("rule", rule);
            body.put("entries", page.entries().stream().map(RateLimitKeysEndpoint::describe).toList());
            body.put("next", page.next());
            return new WebEndpointResponse<>(body);
        });
    }

    /**
     * @param rule a rule's name
     * @param key a key as decisions show it, or its address
     * @return the key's entry, or 404
     */
    @ReadOperation
    public WebEndpointResponse<Object> entry(@Selector String rule, @Selector String key) {
        if (!admin.keepsLimits()) {
            return notKept();
        }
        return answer(() -> {
            PathSelectors.check(rule, key);
            return admin.get(rule, key).<WebEndpointResponse<Object>>map(e -> new WebEndpointResponse<>(describe(e)))
                    .orElseGet(() -> new WebEndpointResponse<>(key(rule, LimitAdmin.storedKey(key), "message",
                            "no limits of its own: the rule's apply"), WebEndpointResponse.STATUS_NOT_FOUND));
        });
    }

    /**
     * Sets a key's limits or plan, or resets what it has counted: exactly one of the three.
     *
     * @param rule a rule's name
     * @param key a key as decisions show it, or its address
     * @param limits limits, a string, comma-separated ({@code 5/1s,100/1m})
     * @param plan a plan's name, a string
     * @param reset {@code true} to forget what the key has counted
     * @param security the caller
     * @return the entry now, or what was reset
     */
    @WriteOperation
    public WebEndpointResponse<Object> change(@Selector String rule, @Selector String key, @Nullable Object limits,
                                              @Nullable Object plan, @Nullable Object reset, SecurityContext security) {
        return answer(() -> {
            PathSelectors.check(rule, key);
            return apply(rule, key, limits, plan, reset, security);
        });
    }

    /**
     * As {@link #change}, with the key (as decisions show it, or its address) in the body: for any key.
     *
     * @param rule a rule's name
     * @param key a key or its address, a string
     * @param limits limits, a string
     * @param plan a plan's name, a string
     * @param reset {@code true} to forget what the key has counted
     * @param security the caller
     * @return the entry now, or what was reset
     */
    @WriteOperation
    public WebEndpointResponse<Object> changeKey(@Selector String rule, @Nullable Object key, @Nullable Object limits,
                                                 @Nullable Object plan, @Nullable Object reset, SecurityContext security) {
        return answer(() -> {
            PathSelectors.check(rule, null);
            return apply(rule, text("key", required("key", key)), limits, plan, reset, security);
        });
    }

    /**
     * @param rule a rule's name
     * @param key a key as decisions show it, or its address
     * @param security the caller
     * @return whether the key had limits of its own
     */
    @DeleteOperation
    public WebEndpointResponse<Object> remove(@Selector String rule, @Selector String key, SecurityContext security) {
        if (!admin.keepsLimits()) {
            return notKept();
        }
        return answer(() -> {
            PathSelectors.check(rule, key);
            return new WebEndpointResponse<>(key(rule, LimitAdmin.storedKey(key), "removed",
                    admin.remove(rule, key, actor(security))));
        });
    }

    /**
     * @param rule a rule's name
     * @param key a key or its address, in the query
     * @param security the caller
     * @return whether the key had limits of its own
     */
    @DeleteOperation
    public WebEndpointResponse<Object> removeKey(@Selector String rule, @Nullable Object key, SecurityContext security) {
        return answer(() -> remove(rule, text("key", required("key", key)), security));
    }

    private WebEndpointResponse<Object> apply(String rule, String key, Object limits, Object plan, Object reset,
                                              SecurityContext security) {
        // Actuator hands an operation its body's fields as text (JSON true arrives as "true"): exactly that is reset.
        if (reset != null && !Boolean.TRUE.equals(reset) && !"true".equals(reset)) {
            throw new IllegalArgumentException("\"reset\" is " + json(reset) + "; it can only be the JSON boolean true");
        }
        int given = (limits != null ? 1 : 0) + (plan != null ? 1 : 0) + (reset != null ? 1 : 0);
        if (given != 1) {
            throw new IllegalArgumentException("give exactly one of \"limits\" (a string, e.g. \"5/1s,100/1m\"), "
                    + "\"plan\" (a string) and \"reset\": true");
        }
        String actor = actor(security);
        if (reset != null) {
            try {
                admin.reset(rule, key, actor);
            } catch (UnsupportedOperationException e) {
                throw new IllegalArgumentException("this application's store cannot reset a key: " + e.getMessage());
            }
            return new WebEndpointResponse<>(key(rule, LimitAdmin.key(key), "reset", true));
        }
        if (!admin.keepsLimits()) {
            return notKept();
        }
        if (limits != null) {
            admin.setLimits(rule, key, text("limits", limits), actor);
        } else {
            admin.assignPlan(rule, key, text("plan", plan), actor);
        }
        return entry(rule, key);
    }

    private WebEndpointResponse<Object> answer(Supplier<WebEndpointResponse<Object>> operation) {
        try {
            return operation.get();
        } catch (LimitAdmin.UnknownRuleException e) {
            return status(WebEndpointResponse.STATUS_NOT_FOUND, e.getMessage());
        } catch (IllegalArgumentException e) {
            // Limits that do not parse or that the rule cannot use, an unknown plan, a bad cursor, address or field.
            return status(WebEndpointResponse.STATUS_BAD_REQUEST, e.getMessage());
        } catch (RateLimitStoreException e) {
            return status(WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE, "the store cannot be reached: " + e.getMessage());
        }
    }

    private static Object required(String field, Object value) {
        if (value == null) {
            throw new IllegalArgumentException("\"" + field + "\" is missing: give the key as decisions show it, or the "
                    + "address a listing gives");
        }
        return value;
    }

    private static String text(String field, Object value) {
        if (!(value instanceof String s)) {
            throw new IllegalArgumentException("\"" + field + "\" is " + json(value) + "; it must be one string");
        }
        return s;
    }

    private static int number(String field, Object value) {
        String s = text(field, value);
        if (!s.matches("[0-9]{1,4}")) {
            throw new IllegalArgumentException("\"" + field + "\" is " + LogText.quote(s) + "; it must be a whole "
                    + "number, 1 to 1000");
        }
        return Integer.parseInt(s);
    }

    private static String json(Object value) {
        return value instanceof String s ? LogText.quote(s)
                : value instanceof Boolean b ? String.valueOf(b)
                : value instanceof Number ? "a number" : value instanceof java.util.Collection<?> ? "a list (given twice?)"
                : value instanceof Map<?, ?> ? "an object" : "of another type";
    }

    private static String actor(SecurityContext security) {
        Principal principal = security == null ? null : security.getPrincipal();
        return principal == null ? null : principal.getName();
    }

    private static Map<String, Object> key(String rule, String key, String name, Object value) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("rule", rule);
        m.put("key", key);
        m.put("address", LimitAdmin.address(key));
        m.put(name, value);
        return m;
    }

    private static Map<String, Object> describe(RedisLimitProvider.Entry e) {
        Map<String, Object> m = key(e.rule(), e.key(), "limits", e.limits().stream().map(Limit::toString).toList());
        if (e.plan() != null) {
            m.put("plan", e.plan());
        }
        m.put("changedBy", e.changedBy());
        m.put("changedAt", e.changedAt() == null ? null : e.changedAt().toString());
        if (e.problem() != null) {
            m.put("problem", e.problem());
        }
        return m;
    }

    private static WebEndpointResponse<Object> notKept() {
        return status(WebEndpointResponse.STATUS_NOT_FOUND, "per-key limits are not kept at run time here: set "
                + "ratelimit.limit-store.enabled=true (with a Redis store)");
    }

    private static WebEndpointResponse<Object> status(int status, String message) {
        return new WebEndpointResponse<>(Map.of("message", String.valueOf(message)), status);
    }
}
