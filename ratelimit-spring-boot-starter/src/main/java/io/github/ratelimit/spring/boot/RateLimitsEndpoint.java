package io.github.ratelimit.spring.boot;

import io.github.ratelimit.Limit;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.JedisBucketStore;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code ratelimits} Actuator endpoint: every rule with its source, key, limits, mode and policies; the
 * store and, for Redis, its breaker and counters; the most-rejected keys. Keys can identify people: expose the
 * endpoint like any other sensitive one.
 */
@Endpoint(id = "ratelimits")
public class RateLimitsEndpoint {

    private final RateLimiter limiter;
    private final BucketStore store;
    private final RejectedKeys rejected;

    RateLimitsEndpoint(RateLimiter limiter, BucketStore store, RejectedKeys rejected) {
        this.limiter = limiter;
        this.store = store;
        this.rejected = rejected;
    }

    /**
     * @return rules, store and the most-rejected keys
     */
    @ReadOperation
    public Map<String, Object> rateLimits() {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("rules", limiter.rules().stream().map(RateLimitsEndpoint::describe).toList());
        result.put("store", store());
        result.put("topRejectedKeys", rejected.top(20));
        return result;
    }

    private static Map<String, Object> describe(Rule rule) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("name", rule.name());
        r.put("source", rule.source());
        r.put("key", rule.key());
        r.put("limits", rule.limits().stream().map(Limit::toString).toList());
        r.put("mode", rule.mode());
        if (rule.maxDelay() != null) {
            r.put("maxDelay", rule.maxDelay().toString());
        }
        r.put("cost", rule.cost());
        r.put("algorithm", rule.algorithm());
        r.put("onStoreFailure", rule.onStoreFailure());
        r.put("onMissingKey", rule.onMissingKey());
        return r;
    }

    private Map<String, Object> store() {
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
        }
        return s;
    }
}
