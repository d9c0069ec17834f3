package io.github.ratelimit.internal.admin;

import io.github.ratelimit.Limit;
import io.github.ratelimit.Rule;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.redis.LimitAdmin;
import io.github.ratelimit.redis.RedisLimitProvider;
import io.github.ratelimit.store.BucketStore;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * What operators are shown, as insertion-ordered maps of strings, numbers, booleans, enums and lists, so each face
 * writes the same fields in the same order as JSON its own way (Jackson for the Actuator endpoints, the servlet
 * module's writer for the admin servlet).
 */
public final class AdminViews {

    /** The status of a store whose circuit breaker is closed. */
    public static final String UP = "UP";

    /** The status of a Redis store while Redis is unreachable: rules decide by their store-failure policies. */
    public static final String DEGRADED = "DEGRADED";

    private AdminViews() {}

    /**
     * @param rule a rule
     * @return its name, the name clients see, source, key, limits (or concurrency), mode, block and policies
     */
    public static Map<String, Object> rule(Rule rule) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("name", rule.name());
        r.put("publicName", rule.publicName());
        r.put("source", rule.source());
        r.put("key", rule.key());
        r.put("limits", rule.limits().stream().map(Limit::toString).toList());
        if (rule.concurrency() > 0) {
            r.put("concurrency", rule.concurrency());
        }
        r.put("mode", rule.mode());
        if (rule.maxDelay() != null) {
            r.put("maxDelay", rule.maxDelay().toString());
        }
        if (rule.blockFor() != null) {
            r.put("blockFor", rule.blockFor().toString());
        }
        r.put("cost", rule.cost());
        r.put("count", rule.count());
        r.put("algorithm", rule.algorithm());
        r.put("onStoreFailure", rule.onStoreFailure());
        r.put("onMissingKey", rule.onMissingKey());
        return r;
    }

    /**
     * @param rule a rule
     * @param now its limits and mode as configured and as changed at run time, or {@code null} when not known here
     * @return as {@link #rule(Rule)}, with {@code limits} and {@code mode} as the rule decides now; when it was changed
     *         at run time, also {@code configuredLimits}, {@code configuredMode}, who changed it and when, where the
     *         change applies, and why it is ignored, if it is
     */
    public static Map<String, Object> rule(Rule rule, LimitAdmin.@Nullable RuleLimits now) {
        Map<String, Object> r = rule(rule);
        if (now != null && now.changed()) {
            limitsAndModes(r, now);
            changed(r, now);
        }
        return r;
    }

    /**
     * @param now a rule's limits and mode as configured and as changed at run time
     * @return the rule's name, its limits and mode now and as configured, whether it is changed and, when it is, who
     *         changed it and when, where the change applies, and why it is ignored, if it is
     */
    public static Map<String, Object> ruleLimits(LimitAdmin.RuleLimits now) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("rule", now.rule());
        limitsAndModes(r, now);
        r.put("changed", now.changed());
        if (now.changed()) {
            changed(r, now);
        }
        return r;
    }

    private static void limitsAndModes(Map<String, Object> r, LimitAdmin.RuleLimits now) {
        r.put("limits", now.limits().stream().map(Limit::toString).toList());
        r.put("mode", now.mode());
        r.put(
                "configuredLimits",
                now.configuredLimits().stream().map(Limit::toString).toList());
        r.put("configuredMode", now.configuredMode());
    }

    private static void changed(Map<String, Object> r, LimitAdmin.RuleLimits now) {
        r.put("changedBy", now.changedBy());
        r.put("changedAt", now.changedAt() == null ? null : now.changedAt().toString());
        r.put("appliesTo", now.everyInstance() ? "every instance" : "this instance");
        if (now.problem() != null) {
            r.put("problem", now.problem());
        }
    }

    /**
     * @param now a plan's limits as configured and as changed at run time
     * @return the plan's name, its limits now and as configured, whether it is changed and, when it is, who changed it
     *         and when, where the change applies, and why it is ignored, if it is
     */
    public static Map<String, Object> planLimits(LimitAdmin.PlanLimits now) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("plan", now.plan());
        r.put("limits", now.limits().stream().map(Limit::toString).toList());
        r.put(
                "configuredLimits",
                now.configuredLimits().stream().map(Limit::toString).toList());
        r.put("changed", now.changed());
        if (now.changed()) {
            r.put("changedBy", now.changedBy());
            r.put("changedAt", now.changedAt() == null ? null : now.changedAt().toString());
            r.put("appliesTo", now.everyInstance() ? "every instance" : "this instance");
            if (now.problem() != null) {
                r.put("problem", now.problem());
            }
        }
        return r;
    }

    /**
     * @param store a bucket store
     * @param latencyP99 the store's recent 99th percentile latency in milliseconds, or {@code null} without metrics
     * @return its type and, for Redis, its breaker and counters (and the latency, when known)
     */
    public static Map<String, Object> store(BucketStore store, Supplier<OptionalDouble> latencyP99) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("type", store.getClass().getSimpleName());
        if (store instanceof JedisBucketStore redis) {
            JedisBucketStore.Stats stats = redis.stats();
            s.put("breaker", stats.breaker());
            s.put("operations", stats.decisions());
            s.put("roundTrips", stats.roundTrips());
            s.put("conflicts", stats.conflicts());
            s.put("failures", stats.failures());
            s.put("shortCircuited", stats.shortCircuited());
            s.put("contended", stats.contended());
            if (latencyP99 != null) {
                latencyP99.get().ifPresent(p99 -> s.put("latencyP99Millis", p99));
            }
        }
        return s;
    }

    /**
     * @param stats a Redis store's counters
     * @return {@value #UP} while its breaker is closed, else {@value #DEGRADED}
     */
    public static String status(JedisBucketStore.Stats stats) {
        return stats.breaker() == JedisBucketStore.BreakerState.CLOSED ? UP : DEGRADED;
    }

    /**
     * @param stats a Redis store's counters
     * @return the details of its health: breaker, failures, calls short-circuited by the open breaker
     */
    public static Map<String, Object> healthDetails(JedisBucketStore.Stats stats) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("breaker", stats.breaker());
        d.put("failures", stats.failures());
        d.put("shortCircuited", stats.shortCircuited());
        return d;
    }

    /**
     * @param rule a rule's name
     * @param field the field of the rule's hash an entry is (or would be) stored under
     * @param name the name of one more field
     * @param value its value
     * @return the rule, the key, its address and the field
     */
    public static Map<String, Object> key(String rule, byte[] field, String name, Object value) {
        return key(rule, LimitAdmin.shown(field), LimitAdmin.address(field), name, value);
    }

    private static Map<String, Object> key(String rule, String key, String address, String name, Object value) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("rule", rule);
        m.put("key", key);
        m.put("address", address);
        m.put(name, value);
        return m;
    }

    /**
     * @param e a key's entry of per-key limits
     * @return the rule, key, address, limits, plan, who changed it and when, and its problem, if any
     */
    public static Map<String, Object> entry(RedisLimitProvider.Entry e) {
        Map<String, Object> m = key(
                e.rule(),
                e.key(),
                e.address(),
                "limits",
                e.limits().stream().map(Limit::toString).toList());
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
}
