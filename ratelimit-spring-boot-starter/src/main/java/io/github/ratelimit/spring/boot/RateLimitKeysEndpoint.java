package io.github.ratelimit.spring.boot;

import io.github.ratelimit.Limit;
import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.RedisLimitStore;
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
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code ratelimitkeys} Actuator endpoint (HTTP only): one key of one rule, for operations on a live system.
 *
 * <ul>
 *   <li>{@code GET /actuator/ratelimitkeys/{rule}}: a page of the rule's per-key limits ({@code ?cursor=&count=});
 *   <li>{@code GET /actuator/ratelimitkeys/{rule}/{key}}: one key's entry, with who set it and when;
 *   <li>{@code POST /actuator/ratelimitkeys/{rule}/{key}} with {@code {"limits": "5/1s,100/1m"}} or
 *       {@code {"plan": "gold"}}: sets the key's limits; with {@code {"reset": true}}: forgets what the key has
 *       counted, on every instance (unblocks it);
 *   <li>{@code DELETE /actuator/ratelimitkeys/{rule}/{key}}: back to the rule's limits.
 * </ul>
 *
 * <p>Limits and plans need {@code ratelimit.limit-store.enabled=true}; reset works with any store. Its access is
 * read-only unless {@code management.endpoint.ratelimitkeys.access=unrestricted}: writes must be switched on, and
 * then secured as Boot's own sensitive endpoints are (Spring Security on the management paths). Every change is
 * logged with the authenticated caller's name.
 */
@WebEndpoint(id = "ratelimitkeys", defaultAccess = Access.READ_ONLY)
public class RateLimitKeysEndpoint {

    private static final System.Logger AUDIT = System.getLogger("io.github.ratelimit.limits");

    private final RateLimiter limiter;
    private final LimitProvider limitStore;

    /**
     * @param limiter the limiter, for resets
     * @param limitStore the {@link RedisLimitStore}, or {@code null} when per-key limits are not kept in Redis
     */
    RateLimitKeysEndpoint(RateLimiter limiter, @Nullable LimitProvider limitStore) {
        this.limiter = limiter;
        this.limitStore = limitStore;
    }

    /**
     * @param rule a rule's name
     * @param cursor the previous page's {@code next}, or none for the first page
     * @param count about how many entries, 1 to 1,000 (default 100)
     * @return a page of the rule's per-key limits
     */
    @ReadOperation
    public WebEndpointResponse<Object> entries(@Selector String rule, @Nullable String cursor, @Nullable Integer count) {
        RedisLimitStore store = store();
        if (store == null) {
            return notKept();
        }
        try {
            RedisLimitStore.Page page = store.list(rule, cursor, count == null ? 100 : count);
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("rule", rule);
            body.put("entries", page.entries().stream().map(RateLimitKeysEndpoint::describe).toList());
            body.put("next", page.next());
            return new WebEndpointResponse<>(body);
        } catch (IllegalArgumentException e) {
            return bad(e.getMessage());
        } catch (RateLimitStoreException e) {
            return unavailable(e);
        }
    }

    /**
     * @param rule a rule's name
     * @param key a key, as the rule counts by it
     * @return the key's entry, or 404
     */
    @ReadOperation
    public WebEndpointResponse<Object> entry(@Selector String rule, @Selector String key) {
        RedisLimitStore store = store();
        if (store == null) {
            return notKept();
        }
        try {
            return store.get(rule, key).<WebEndpointResponse<Object>>map(e -> new WebEndpointResponse<>(describe(e)))
                    .orElseGet(() -> new WebEndpointResponse<>(Map.of("rule", rule, "key", key, "message",
                            "no limits of its own: the rule's apply"), WebEndpointResponse.STATUS_NOT_FOUND));
        } catch (IllegalArgumentException e) {
            return bad(e.getMessage());
        } catch (RateLimitStoreException e) {
            return unavailable(e);
        }
    }

    /**
     * Sets a key's limits or plan, or resets what it has counted: exactly one of the three.
     *
     * @param rule a rule's name
     * @param key a key, as the rule counts by it
     * @param limits limits, comma-separated ({@code 5/1s,100/1m})
     * @param plan a plan's name
     * @param reset {@code true} to forget what the key has counted
     * @param security the caller
     * @return the entry now, or what was reset
     */
    @WriteOperation
    public WebEndpointResponse<Object> change(@Selector String rule, @Selector String key, @Nullable String limits,
                                              @Nullable String plan, @Nullable Boolean reset, SecurityContext security) {
        int given = (limits != null ? 1 : 0) + (plan != null ? 1 : 0) + (Boolean.TRUE.equals(reset) ? 1 : 0);
        if (given != 1) {
            return bad("give exactly one of \"limits\" (e.g. \"5/1s,100/1m\"), \"plan\" and \"reset\": true");
        }
        String actor = actor(security);
        try {
            if (Boolean.TRUE.equals(reset)) {
                try {
                    limiter.reset(rule, key);
                } catch (UnsupportedOperationException e) {
                    return bad("this application's store cannot reset a key: " + e.getMessage());
                }
                AUDIT.log(System.Logger.Level.INFO, () -> "Rule '" + rule + "' key '" + key + "' reset by "
                        + (actor == null ? "an unknown caller" : "'" + actor + "'"));
                return new WebEndpointResponse<>(Map.of("rule", rule, "key", key, "reset", true));
            }
            RedisLimitStore store = store();
            if (store == null) {
                return notKept();
            }
            if (limits != null) {
                List<Limit> parsed = Arrays.stream(limits.split(",")).map(String::trim).map(Limit::parse).toList();
                store.setLimits(rule, key, parsed, actor);
            } else {
                store.assignPlan(rule, key, plan, actor);
            }
            return entry(rule, key);
        } catch (IllegalArgumentException e) {
            // A limit that does not parse (InvalidRateLimitConfigurationException), an unknown plan, a blank rule.
            return bad(e.getMessage());
        } catch (RateLimitStoreException e) {
            return unavailable(e);
        }
    }

    /**
     * @param rule a rule's name
     * @param key a key
     * @param security the caller
     * @return whether the key had limits of its own
     */
    @DeleteOperation
    public WebEndpointResponse<Object> remove(@Selector String rule, @Selector String key, SecurityContext security) {
        RedisLimitStore store = store();
        if (store == null) {
            return notKept();
        }
        try {
            return new WebEndpointResponse<>(Map.of("rule", rule, "key", key, "removed",
                    store.remove(rule, key, actor(security))));
        } catch (IllegalArgumentException e) {
            return bad(e.getMessage());
        } catch (RateLimitStoreException e) {
            return unavailable(e);
        }
    }

    private RedisLimitStore store() {
        return limitStore instanceof RedisLimitStore redis ? redis : null;
    }

    private static String actor(SecurityContext security) {
        Principal principal = security == null ? null : security.getPrincipal();
        return principal == null ? null : principal.getName();
    }

    private static Map<String, Object> describe(RedisLimitStore.Entry e) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("rule", e.rule());
        m.put("key", e.key());
        m.put("limits", e.limits().stream().map(Limit::toString).toList());
        if (e.plan() != null) {
            m.put("plan", e.plan());
        }
        m.put("changedBy", e.changedBy());
        m.put("changedAt", e.changedAt() == null ? null : e.changedAt().toString());
        return m;
    }

    private static WebEndpointResponse<Object> notKept() {
        return new WebEndpointResponse<>(Map.of("message", "per-key limits are not kept at run time here: set "
                + "ratelimit.limit-store.enabled=true (with a Redis store)"), WebEndpointResponse.STATUS_NOT_FOUND);
    }

    private static WebEndpointResponse<Object> bad(String message) {
        return new WebEndpointResponse<>(Map.of("message", String.valueOf(message)), WebEndpointResponse.STATUS_BAD_REQUEST);
    }

    private static WebEndpointResponse<Object> unavailable(RateLimitStoreException e) {
        return new WebEndpointResponse<>(Map.of("message", "the store cannot be reached: " + e.getMessage()),
                WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
    }
}
