package io.github.ratelimit.internal.admin;

import io.github.ratelimit.redis.LimitAdmin;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The operations on a plan's limits at run time, with their answers, for every face that offers them (the Actuator's
 * {@code ratelimits} endpoint, the admin servlet): change them, or take them back to the configured ones. Answers as
 * {@link KeyOperations}: 200; 400 with the validation message for limits a rule that may use the plan cannot use or a
 * field of the wrong type; 404 for a plan that is not configured (naming the configured ones); 503 while Redis cannot
 * be reached. Thread-safe.
 */
public final class PlanOperations {

    private final LimitAdmin admin;

    /**
     * @param admin the operations over the application's limiters and limit store
     */
    public PlanOperations(LimitAdmin admin) {
        this.admin = Objects.requireNonNull(admin, "admin");
    }

    /**
     * @param plan a plan's name
     * @param limits its limits from now on, a string, comma-separated ({@code 2/1s,100/1m})
     * @param actor who asks, or {@code null} when not known
     * @return the plan's limits as configured and as changed
     */
    public KeyOperations.Answer change(String plan, @Nullable Object limits, @Nullable String actor) {
        return KeyOperations.answer(() -> {
            if (limits == null) {
                admin.planLimits(plan); // an unknown plan is 404 before a missing field is 400
                return KeyOperations.status(KeyOperations.BAD_REQUEST, "give the plan's limits, e.g. 100/1m");
            }
            return new KeyOperations.Answer(
                    KeyOperations.OK,
                    AdminViews.planLimits(admin.changePlan(plan, AdminInput.text("limits", limits), actor)));
        });
    }

    /**
     * @param plan a plan's name
     * @param actor who asks, or {@code null} when not known
     * @return whether the plan was changed, and its limits now (the configured ones)
     */
    public KeyOperations.Answer restore(String plan, @Nullable String actor) {
        return KeyOperations.answer(() -> {
            boolean restored = admin.restorePlan(plan, actor);
            Map<String, Object> body = new LinkedHashMap<>(AdminViews.planLimits(admin.planLimits(plan)));
            body.put("restored", restored);
            return new KeyOperations.Answer(KeyOperations.OK, body);
        });
    }

    /**
     * @param plan a plan's name
     * @return its limits as configured and as changed
     */
    public KeyOperations.Answer show(String plan) {
        return KeyOperations.answer(
                () -> new KeyOperations.Answer(KeyOperations.OK, AdminViews.planLimits(admin.planLimits(plan))));
    }

    /**
     * @return every configured plan's limits as configured and as changed; none when they cannot be read now (Redis
     *         away)
     */
    public List<Map<String, Object>> list() {
        try {
            return admin.planLimits().stream().map(AdminViews::planLimits).toList();
        } catch (RuntimeException e) {
            return List.of();
        }
    }
}
