package io.github.ratelimit.internal.admin;

import io.github.ratelimit.redis.LimitAdmin;
import io.github.ratelimit.redis.RedisLimitProvider;
import io.github.ratelimit.store.RateLimitStoreException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * The operations on one key of one rule, with their answers, for every face that offers them (the Actuator's
 * {@code ratelimitkeys} endpoint, the admin servlet): a page of a rule's per-key limits or one key's entry; setting a
 * key's limits or plan, or resetting what it has counted; removing its limits. Input is checked by
 * {@link AdminInput}, keys are addressed and rules named through {@link LimitAdmin}. Answers: 200; 400 with a
 * message for bad input (limits the rule cannot use, a malformed cursor, a field of the wrong type, a change of a
 * key the rule never counts by); 404 for an unknown rule (naming the known ones), a key without an entry, or per-key
 * limits not kept here; 503 while the store cannot be reached. Thread-safe.
 */
public final class KeyOperations {

    /** The status of a successful answer. */
    public static final int OK = 200;
    /** The status of an answer to bad input. */
    public static final int BAD_REQUEST = 400;
    /** The status of an answer naming what does not exist here. */
    public static final int NOT_FOUND = 404;
    /** The status of an answer while the store cannot be reached. */
    public static final int SERVICE_UNAVAILABLE = 503;

    /**
     * An answer: its HTTP status and its body, whose {@code message} says what went wrong when the status is 400 or
     * more.
     *
     * @param status the HTTP status
     * @param body the body, an insertion-ordered map (see {@link AdminViews})
     */
    public record Answer(int status, Map<String, Object> body) {}

    private final LimitAdmin admin;
    private final BiConsumer<String, String> selectors;

    /**
     * @param admin the operations over the application's limiter and limit store
     * @param selectors checks, before an operation, that the request names no other rule or key (the second argument,
     *        {@code null} when the operation takes its key from elsewhere) than its path; throws
     *        {@link IllegalArgumentException} ({@link AdminInput#sameAsPath}) when it does
     */
    public KeyOperations(LimitAdmin admin, BiConsumer<String, String> selectors) {
        this.admin = Objects.requireNonNull(admin, "admin");
        this.selectors = Objects.requireNonNull(selectors, "selectors");
    }

    /**
     * @param rule a rule's name
     * @param key a key or its address: that key's entry instead of a page; {@code null} for a page
     * @param cursor the previous page's {@code next}, or {@code null} for the first page
     * @param count about how many entries, 1 to 1,000, or {@code null} for 100
     * @return a page of the rule's per-key limits, or one key's entry
     */
    public Answer entries(String rule, Object key, Object cursor, Object count) {
        if (key != null) {
            return answer(() -> entry(rule, AdminInput.text("key", key)));
        }
        return answer(() -> {
            selectors.accept(rule, null);
            if (!admin.keepsLimits()) {
                return notKept();
            }
            String c = cursor == null ? null : AdminInput.text("cursor", cursor);
            int n = count == null ? 100 : AdminInput.number("count", count);
            RedisLimitProvider.Page page = admin.list(rule, c, n);
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("rule", rule);
            body.put("entries", page.entries().stream().map(AdminViews::entry).toList());
            body.put("next", page.next());
            return new Answer(OK, body);
        });
    }

    /**
     * @param rule a rule's name
     * @param key a key as decisions show it, or its address
     * @return the key's entry, or 404
     */
    public Answer entry(String rule, String key) {
        if (!admin.keepsLimits()) {
            return notKept();
        }
        return answer(() -> {
            selectors.accept(rule, key);
            return admin.get(rule, key)
                    .map(e -> new Answer(OK, AdminViews.entry(e)))
                    .orElseGet(() -> new Answer(
                            NOT_FOUND,
                            AdminViews.key(
                                    rule, LimitAdmin.field(key), "message", "no limits of its own: the rule's apply")));
        });
    }

    /**
     * Sets a key's limits or plan, or resets what it has counted: exactly one of the three.
     *
     * @param rule a rule's name
     * @param key a key as decisions show it, or its address
     * @param limits limits, a string, comma-separated ({@code 5/1s,100/1m}), or {@code null}
     * @param plan a plan's name, a string, or {@code null}
     * @param reset {@code true} to forget what the key has counted, or {@code null}
     * @param actor who asks, or {@code null} when not known
     * @return the entry as the change wrote it, or what was reset
     */
    public Answer change(String rule, String key, Object limits, Object plan, Object reset, String actor) {
        return answer(() -> {
            selectors.accept(rule, key);
            return apply(rule, key, limits, plan, reset, actor);
        });
    }

    /**
     * As {@link #change}, with the key (as decisions show it, or its address) given apart from the path: for any key.
     *
     * @param rule a rule's name
     * @param key a key or its address, a string
     * @param limits limits, a string, or {@code null}
     * @param plan a plan's name, a string, or {@code null}
     * @param reset {@code true} to forget what the key has counted, or {@code null}
     * @param actor who asks, or {@code null} when not known
     * @return the entry as the change wrote it, or what was reset
     */
    public Answer changeKey(String rule, Object key, Object limits, Object plan, Object reset, String actor) {
        return answer(() -> {
            selectors.accept(rule, null);
            return apply(rule, AdminInput.text("key", AdminInput.required("key", key)), limits, plan, reset, actor);
        });
    }

    /**
     * @param rule a rule's name
     * @param key a key as decisions show it, or its address
     * @param actor who asks, or {@code null} when not known
     * @return whether the key had limits of its own
     */
    public Answer remove(String rule, String key, String actor) {
        if (!admin.keepsLimits()) {
            return notKept();
        }
        return answer(() -> {
            selectors.accept(rule, key);
            return new Answer(
                    OK, AdminViews.key(rule, LimitAdmin.field(key), "removed", admin.remove(rule, key, actor)));
        });
    }

    /**
     * @param rule a rule's name
     * @param key a key or its address, given apart from the path
     * @param actor who asks, or {@code null} when not known
     * @return whether the key had limits of its own
     */
    public Answer removeKey(String rule, Object key, String actor) {
        return answer(() -> remove(rule, AdminInput.text("key", AdminInput.required("key", key)), actor));
    }

    private Answer apply(String rule, String key, Object limits, Object plan, Object reset, String actor) {
        AdminInput.checkChange(limits, plan, reset);
        if (reset != null) {
            try {
                admin.reset(rule, key, actor);
            } catch (UnsupportedOperationException e) {
                throw new IllegalArgumentException("this application's store cannot reset a key: " + e.getMessage());
            }
            // The key reset, as the limiter counts by it: its bytes, not read again as an address.
            return new Answer(
                    OK, AdminViews.key(rule, LimitAdmin.key(key).getBytes(StandardCharsets.UTF_8), "reset", true));
        }
        if (!admin.keepsLimits()) {
            return notKept();
        }
        // The entry as this change wrote it: read back, it could be another operator's change made since, or gone.
        return new Answer(
                OK,
                AdminViews.entry(
                        limits != null
                                ? admin.setLimits(rule, key, AdminInput.text("limits", limits), actor)
                                : admin.assignPlan(rule, key, AdminInput.text("plan", plan), actor)));
    }

    /**
     * @param operation an operation
     * @return its answer, or the answer to what it threw: 404 for an unknown rule, 400 for bad input, 503 while the
     *         store cannot be reached
     */
    public static Answer answer(Supplier<Answer> operation) {
        try {
            return operation.get();
        } catch (LimitAdmin.UnknownRuleException | LimitAdmin.UnknownPlanException e) {
            return status(NOT_FOUND, e.getMessage());
        } catch (IllegalArgumentException e) {
            // Limits that do not parse or that the rule cannot use, an unknown plan, a bad cursor, address or field.
            return status(BAD_REQUEST, e.getMessage());
        } catch (RateLimitStoreException e) {
            return status(SERVICE_UNAVAILABLE, "the store cannot be reached: " + e.getMessage());
        }
    }

    private static Answer notKept() {
        return status(
                NOT_FOUND,
                "per-key limits are not kept at run time here: set "
                        + "ratelimit.limit-store.enabled=true (with a Redis store)");
    }

    /**
     * @param status an HTTP status
     * @param message what happened, for people
     * @return an answer whose body is the message
     */
    public static Answer status(int status, String message) {
        return new Answer(status, Map.of("message", String.valueOf(message)));
    }
}
