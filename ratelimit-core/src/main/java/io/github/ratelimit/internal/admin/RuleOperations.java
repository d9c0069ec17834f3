package io.github.ratelimit.internal.admin;

import io.github.ratelimit.redis.LimitAdmin;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The operations on a rule's own limits and mode at run time, with their answers, for every face that offers them
 * (the Actuator's {@code ratelimits} endpoint, the admin servlet): change them, or take them back to the configured
 * ones. Answers as {@link KeyOperations}: 200; 400 with the validation message for limits the rule cannot use, a mode
 * change that is not safe or a field of the wrong type; 404 for an unknown rule (naming the known ones); 503 while
 * Redis cannot be reached. Thread-safe.
 */
public final class RuleOperations {

    private final LimitAdmin admin;

    /**
     * @param admin the operations over the application's limiter and limit store
     */
    public RuleOperations(LimitAdmin admin) {
        this.admin = Objects.requireNonNull(admin, "admin");
    }

    /**
     * @param rule a rule's name
     * @param limits its limits from now on, a string, comma-separated ({@code 2/1s,100/1m}), or {@code null}
     * @param mode its mode from now on, a string ({@code HARD} or {@code SHADOW}), or {@code null}
     * @param actor who asks, or {@code null} when not known
     * @return the rule's limits and mode as configured and as changed
     */
    public KeyOperations.Answer change(
            String rule, @Nullable Object limits, @Nullable Object mode, @Nullable String actor) {
        return KeyOperations.answer(() -> new KeyOperations.Answer(
                KeyOperations.OK,
                AdminViews.ruleLimits(admin.changeRule(
                        rule,
                        limits == null ? null : AdminInput.text("limits", limits),
                        mode == null ? null : AdminInput.text("mode", mode),
                        actor))));
    }

    /**
     * @param rule a rule's name
     * @param actor who asks, or {@code null} when not known
     * @return whether the rule was changed, and its limits and mode now (the configured ones)
     */
    public KeyOperations.Answer restore(String rule, @Nullable String actor) {
        return KeyOperations.answer(() -> {
            boolean restored = admin.restoreRule(rule, actor);
            Map<String, Object> body = new LinkedHashMap<>(AdminViews.ruleLimits(admin.ruleLimits(rule)));
            body.put("restored", restored);
            return new KeyOperations.Answer(KeyOperations.OK, body);
        });
    }

    /**
     * @param rule a rule's name
     * @return its limits and mode as configured and as changed
     */
    public KeyOperations.Answer show(String rule) {
        return KeyOperations.answer(
                () -> new KeyOperations.Answer(KeyOperations.OK, AdminViews.ruleLimits(admin.ruleLimits(rule))));
    }
}
