package io.github.ratelimit.spring.boot.actuate;

import io.github.ratelimit.internal.admin.KeyOperations;
import io.github.ratelimit.internal.admin.PlanOperations;
import io.github.ratelimit.internal.admin.RuleOperations;
import io.github.ratelimit.redis.LimitAdmin;
import java.security.Principal;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

/**
 * The {@code ratelimits} endpoint over HTTP: shows keys only to the callers
 * {@code management.endpoint.ratelimits.show-values} and {@code roles} allow; changes a rule's own limits or mode at
 * run time ({@code POST /actuator/ratelimits/{rule}} with {@code {"limits": "2/1s"}}, {@code {"mode": "SHADOW"}} or
 * both), or takes them back to the configured ones ({@code DELETE /actuator/ratelimits/{rule}}), through the core's
 * {@link LimitAdmin}: checked as at start-up (400 with the message), kept in Redis for every instance with a limit
 * store (else in this instance only, which the answer's {@code appliesTo} says), logged with the authenticated
 * caller's name. A plan's limits change the same way: {@code POST /actuator/ratelimits/plans/{plan}} with
 * {@code {"limits": "100/1m"}}, {@code DELETE /actuator/ratelimits/plans/{plan}}. Writes need {@code management.endpoint.ratelimits.access=unrestricted}, secured as the
 * {@code ratelimitkeys} endpoint's.
 */
@EndpointWebExtension(endpoint = RateLimitsEndpoint.class)
public class RateLimitsEndpointWebExtension {

    /** The first segment of a plan's route. */
    private static final String PLANS = "plans";

    private final RateLimitsEndpoint delegate;
    private final Show showValues;
    private final Set<String> roles;
    private final @Nullable RuleOperations rules;
    private final @Nullable PlanOperations plans;

    public RateLimitsEndpointWebExtension(RateLimitsEndpoint delegate, Show showValues, Set<String> roles) {
        this(delegate, showValues, roles, null);
    }

    /**
     * @param admin the admin operations that change rules at run time, or {@code null} for none (writes answer 404)
     */
    public RateLimitsEndpointWebExtension(
            RateLimitsEndpoint delegate, Show showValues, Set<String> roles, @Nullable LimitAdmin admin) {
        this.delegate = delegate;
        this.showValues = showValues;
        this.roles = Set.copyOf(roles);
        this.rules = admin == null ? null : new RuleOperations(admin);
        this.plans = admin == null ? null : new PlanOperations(admin);
    }

    /**
     * @param rule a rule's name
     * @param limits its limits from now on, a string, comma-separated ({@code 2/1s,100/1m})
     * @param mode its mode from now on, a string: {@code HARD} or {@code SHADOW}
     * @param security the caller
     * @return the rule's limits and mode, as configured and as changed
     */
    @WriteOperation
    public WebEndpointResponse<Object> changeRule(
            @Selector String rule, @Nullable Object limits, @Nullable Object mode, SecurityContext security) {
        return rules == null
                ? none()
                : response(KeyOperations.answer(() -> {
                    PathSelectors.checkOne("rule", rule);
                    return rules.change(rule, limits, mode, actor(security));
                }));
    }

    /**
     * @param rule a rule's name
     * @param security the caller
     * @return whether the rule was changed, and its limits and mode now
     */
    @DeleteOperation
    public WebEndpointResponse<Object> restoreRule(@Selector String rule, SecurityContext security) {
        return rules == null
                ? none()
                : response(KeyOperations.answer(() -> {
                    PathSelectors.checkOne("rule", rule);
                    return rules.restore(rule, actor(security));
                }));
    }

    /**
     * Changes a plan's limits: {@code POST /actuator/ratelimits/plans/{plan}}. Actuator has no literal path segments,
     * so the route is two selectors whose first must read {@code plans} (anything else answers 404); a rule named
     * {@code plans} is still changed at {@code /actuator/ratelimits/plans}, one segment.
     *
     * @param section must be {@code plans}
     * @param plan a configured plan's name
     * @param limits its limits from now on, a string, comma-separated ({@code 2/1s,100/1m})
     * @param security the caller
     * @return the plan's limits, as configured and as changed
     */
    @WriteOperation
    public WebEndpointResponse<Object> changePlan(
            @Selector String section, @Selector String plan, @Nullable Object limits, SecurityContext security) {
        if (plans == null || !PLANS.equals(section)) {
            return none();
        }
        return response(KeyOperations.answer(() -> {
            PathSelectors.checkOne("plan", plan);
            return plans.change(plan, limits, actor(security));
        }));
    }

    /**
     * Takes a plan back to its configured limits: {@code DELETE /actuator/ratelimits/plans/{plan}}.
     *
     * @param section must be {@code plans}
     * @param plan a configured plan's name
     * @param security the caller
     * @return whether the plan was changed, and its limits now
     */
    @DeleteOperation
    public WebEndpointResponse<Object> restorePlan(
            @Selector String section, @Selector String plan, SecurityContext security) {
        if (plans == null || !PLANS.equals(section)) {
            return none();
        }
        return response(KeyOperations.answer(() -> {
            PathSelectors.checkOne("plan", plan);
            return plans.restore(plan, actor(security));
        }));
    }

    private static WebEndpointResponse<Object> none() {
        return response(
                KeyOperations.status(KeyOperations.NOT_FOUND, "rules and plans are not changed at run time here"));
    }

    private static WebEndpointResponse<Object> response(KeyOperations.Answer answer) {
        return new WebEndpointResponse<>(answer.body(), answer.status());
    }

    private static @Nullable String actor(SecurityContext security) {
        Principal principal = security == null ? null : security.getPrincipal();
        return principal == null ? null : principal.getName();
    }

    /**
     * @param securityContext the caller
     * @return rules, store and the most-rejected keys, masked unless the caller may see them
     */
    @ReadOperation
    public Map<String, Object> rateLimits(SecurityContext securityContext) {
        return delegate.rateLimits(showValues.isShown(securityContext, roles));
    }
}
