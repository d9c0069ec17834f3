package io.github.ratelimit.spring.boot.internal.method;

import io.github.ratelimit.Guard;
import io.github.ratelimit.Limit;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;

/**
 * The application's {@link RateLimiter}, looked up when first used, so the infrastructure beans that apply
 * {@code @RateLimit} do not force the limiter and its store to be created while post-processors are registered.
 */
public final class LazyLimiter implements RateLimiter {

    private final ObjectProvider<RateLimiter> provider;
    private volatile @Nullable RateLimiter limiter;

    public LazyLimiter(ObjectProvider<RateLimiter> provider) {
        this.provider = provider;
    }

    private RateLimiter limiter() {
        RateLimiter l = limiter;
        if (l == null) {
            l = provider.getObject();
            limiter = l;
        }
        return l;
    }

    @Override
    public Guard guard(Collection<Rule> rules) {
        return limiter().guard(rules);
    }

    @Override
    public List<Rule> rules() {
        return limiter().rules();
    }

    @Override
    public void reset(String rule, String key) {
        limiter().reset(rule, key);
    }

    @Override
    public void changeRule(String rule, @Nullable Rule changed) {
        limiter().changeRule(rule, changed);
    }

    @Override
    public Map<String, List<Limit>> plans() {
        return limiter().plans();
    }

    @Override
    public void changePlan(String plan, @Nullable List<Limit> limits) {
        limiter().changePlan(plan, limits);
    }

    @Override
    public void checkPlan(String plan, List<Limit> limits) {
        limiter().checkPlan(plan, limits);
    }

    @Override
    public void close() {
        // The limiter bean's own lifecycle closes it.
    }
}
