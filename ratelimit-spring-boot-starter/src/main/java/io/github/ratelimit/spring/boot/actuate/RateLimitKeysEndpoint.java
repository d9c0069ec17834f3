package io.github.ratelimit.spring.boot.actuate;

import io.github.ratelimit.internal.admin.KeyOperations;
import io.github.ratelimit.redis.LimitAdmin;
import java.security.Principal;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpoint;

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
 * rule cannot use, a malformed cursor, a field of the wrong type); 404 for an unknown rule (naming the known ones),
 * a key without an entry, or per-key limits not kept here; 503 while Redis cannot be reached.
 *
 * <p>Limits and plans need {@code ratelimit.limit-store.enabled=true}; reset works with any store. Its access is
 * read-only unless {@code management.endpoint.ratelimitkeys.access=unrestricted}: writes must be switched on, and
 * then secured as Boot's own sensitive endpoints are (Spring Security on the management paths). Every change is
 * logged with the authenticated caller's name. The operations, their checks and their answers are the core's, which a
 * {@code web.xml} application's admin servlet offers too.
 */
@WebEndpoint(id = "ratelimitkeys", defaultAccess = Access.READ_ONLY)
public class RateLimitKeysEndpoint {

    private final KeyOperations operations;

    /**
     * @param admin the admin operations over the application's limiter and limit store
     */
    public RateLimitKeysEndpoint(LimitAdmin admin) {
        this.operations = new KeyOperations(admin, PathSelectors::check);
    }

    /**
     * @param rule a rule's name
     * @param key a key or its address: that key's entry instead of a page
     * @param cursor the previous page's {@code next}, or none for the first page
     * @param count about how many entries, 1 to 1,000 (default 100)
     * @return a page of the rule's per-key limits, or one key's entry
     */
    @ReadOperation
    public WebEndpointResponse<Object> entries(
            @Selector String rule, @Nullable Object key, @Nullable Object cursor, @Nullable Object count) {
        return response(operations.entries(rule, key, cursor, count));
    }

    /**
     * @param rule a rule's name
     * @param key a key as decisions show it, or its address
     * @return the key's entry, or 404
     */
    @ReadOperation
    public WebEndpointResponse<Object> entry(@Selector String rule, @Selector String key) {
        return response(operations.entry(rule, key));
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
     * @return the entry as the change wrote it, or what was reset
     */
    @WriteOperation
    public WebEndpointResponse<Object> change(
            @Selector String rule,
            @Selector String key,
            @Nullable Object limits,
            @Nullable Object plan,
            @Nullable Object reset,
            SecurityContext security) {
        return response(operations.change(rule, key, limits, plan, reset, actor(security)));
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
     * @return the entry as the change wrote it, or what was reset
     */
    @WriteOperation
    public WebEndpointResponse<Object> changeKey(
            @Selector String rule,
            @Nullable Object key,
            @Nullable Object limits,
            @Nullable Object plan,
            @Nullable Object reset,
            SecurityContext security) {
        return response(operations.changeKey(rule, key, limits, plan, reset, actor(security)));
    }

    /**
     * @param rule a rule's name
     * @param key a key as decisions show it, or its address
     * @param security the caller
     * @return whether the key had limits of its own
     */
    @DeleteOperation
    public WebEndpointResponse<Object> remove(@Selector String rule, @Selector String key, SecurityContext security) {
        return response(operations.remove(rule, key, actor(security)));
    }

    /**
     * @param rule a rule's name
     * @param key a key or its address, in the query
     * @param security the caller
     * @return whether the key had limits of its own
     */
    @DeleteOperation
    public WebEndpointResponse<Object> removeKey(
            @Selector String rule, @Nullable Object key, SecurityContext security) {
        return response(operations.removeKey(rule, key, actor(security)));
    }

    private static WebEndpointResponse<Object> response(KeyOperations.Answer answer) {
        return new WebEndpointResponse<>(answer.body(), answer.status());
    }

    private static @Nullable String actor(SecurityContext security) {
        Principal principal = security == null ? null : security.getPrincipal();
        return principal == null ? null : principal.getName();
    }
}
