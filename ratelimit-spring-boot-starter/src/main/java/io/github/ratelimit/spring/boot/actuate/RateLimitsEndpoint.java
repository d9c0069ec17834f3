package io.github.ratelimit.spring.boot.actuate;

import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.internal.admin.AdminViews;
import io.github.ratelimit.internal.admin.PlanOperations;
import io.github.ratelimit.redis.LimitAdmin;
import io.github.ratelimit.store.BucketStore;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The {@code ratelimits} Actuator endpoint: every rule with its name, the name clients see for it in headers and
 * bodies ({@code publicName}: for an unnamed {@code @RateLimit} rule, a digest of its class and method, which this
 * endpoint ties back to them), its source, key, limits (none for a concurrency rule, which has {@code concurrency}
 * instead: the most calls per key in flight at once), mode and policies; the store and, for Redis, its breaker,
 * counters and, with metrics, the 99th percentile of its recent latency; the most-rejected keys.
 *
 * <p>Keys identify people (user names, client addresses, API keys), so they are shown as Spring Boot shows
 * sensitive values: {@code management.endpoint.ratelimits.show-values} is {@code never} by default (each key reads
 * {@value #MASK}), {@code when-authorized} (to an authenticated caller in one of
 * {@code management.endpoint.ratelimits.roles}, or any authenticated caller when no roles are set) or
 * {@code always}. Over JMX, which has no caller to ask, {@code when-authorized} shows them, as Boot's own
 * endpoints do. Expose and secure the endpoint like any other sensitive one.
 *
 * <p>Over HTTP ({@link RateLimitsEndpointWebExtension}), operators change a rule's own limits or mode at run time:
 * {@code POST /actuator/ratelimits/{rule}} with {@code {"limits": "2/1s"}} and/or {@code {"mode": "SHADOW"}}, and
 * {@code DELETE /actuator/ratelimits/{rule}} to go back to the configured ones. Like {@code ratelimitkeys}, its
 * access is read-only unless {@code management.endpoint.ratelimits.access=unrestricted}. A rule changed at run time
 * is listed with its {@code limits} and {@code mode} now, its {@code configuredLimits} and {@code configuredMode},
 * and {@code changedBy}, {@code changedAt} and {@code appliesTo}.
 */
@Endpoint(id = "ratelimits", defaultAccess = Access.READ_ONLY)
public class RateLimitsEndpoint {

    /** What a key reads when values are not shown. */
    static final String MASK = "******";

    private final RateLimiter limiter;
    private final BucketStore store;
    private final RejectedKeys rejected;
    private final Show showValues;
    private final @Nullable StoreLatency latency;
    private @Nullable Supplier<@Nullable LimitAdmin> admin;

    public RateLimitsEndpoint(RateLimiter limiter, BucketStore store, RejectedKeys rejected, Show showValues) {
        this(limiter, store, rejected, showValues, null);
    }

    /**
     * @param latency the store's latency percentiles from the metrics, or {@code null} without metrics
     */
    public RateLimitsEndpoint(
            RateLimiter limiter,
            BucketStore store,
            RejectedKeys rejected,
            Show showValues,
            @Nullable StoreLatency latency) {
        this.limiter = limiter;
        this.store = store;
        this.rejected = rejected;
        this.showValues = showValues;
        this.latency = latency;
    }

    /**
     * @return rules, store and the most-rejected keys (masked unless values are shown)
     */
    @ReadOperation
    public Map<String, Object> rateLimits() {
        return rateLimits(showValues.isShown(true));
    }

    /**
     * @param admin the admin operations, asked at each read, whose rules changed at run time are listed as such; or
     *        none, when the application has none
     */
    public void setAdmin(Supplier<@Nullable LimitAdmin> admin) {
        this.admin = admin;
    }

    Map<String, Object> rateLimits(boolean showKeys) {
        Map<String, Object> result = new LinkedHashMap<>();
        LimitAdmin operations = admin == null ? null : admin.get();
        result.put(
                "rules",
                limiter.rules().stream()
                        .map(r -> AdminViews.rule(r, operations == null ? null : changed(operations, r.name())))
                        .toList());
        if (operations != null) {
            result.put("plans", new PlanOperations(operations).list());
        }
        result.put("store", AdminViews.store(store, latency == null ? null : () -> latency.percentileMillis(0.99)));
        List<RejectedKeys.Entry> top = rejected.top(20);
        result.put(
                "topRejectedKeys",
                showKeys
                        ? top
                        : top.stream()
                                .map(e -> new RejectedKeys.Entry(e.rule(), MASK, e.count(), e.error()))
                                .toList());
        return result;
    }

    /** @return the rule's limits and mode as changed, or {@code null} when they cannot be told now */
    private static LimitAdmin.@Nullable RuleLimits changed(LimitAdmin admin, String rule) {
        try {
            return admin.ruleLimits(rule);
        } catch (RuntimeException e) {
            return null; // a rule of another limiter, or Redis away: listed as configured
        }
    }
}
