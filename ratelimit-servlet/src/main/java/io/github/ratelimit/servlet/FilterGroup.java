package io.github.ratelimit.servlet;

import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.redis.LimitAdmin;
import io.github.ratelimit.redis.RedisLimitProvider;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletContext;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The limiters of every {@link RateLimitFilter} of one web application configured from a rules file: a filter
 * declared once per phase builds a limiter (and a store) of its own, and the admin each filter publishes must reach
 * the rules of all of them, or a reset of the other phase's rule would do nothing and answer success. Kept in a
 * servlet-context attribute, so it lives and dies with the application; thread-safe.
 */
final class FilterGroup {

    /** The servlet-context attribute holding the group's limiters. */
    static final String ATTRIBUTE = RateLimitFilter.class.getName() + ".limiters";

    private FilterGroup() {
    }

    /**
     * Publishes a filter's limiter, limit store and admin in the servlet context, under the filter's name, and joins
     * the filter's limiter to the group, so its admin reaches the rules of every filter of the application.
     *
     * @param config the filter's configuration
     * @param limiter its limiter
     * @param limitStore its limit store, or {@code null}
     * @param rules every URL rule of the rules file, whichever phase the filter decides
     * @return the application's context
     */
    static ServletContext publish(FilterConfig config, RateLimiter limiter, LimitProvider limitStore,
                                  List<UrlRule> rules) {
        ServletContext context = config.getServletContext();
        String name = config.getFilterName();
        context.setAttribute(RateLimitFilter.LIMITER_ATTRIBUTE + "." + name, limiter);
        if (limitStore != null) {
            context.setAttribute(RateLimitFilter.LIMIT_STORE_ATTRIBUTE + "." + name, limitStore);
        }
        List<RateLimiter> group = limiters(context);
        group.add(limiter);
        context.setAttribute(RateLimitFilter.ADMIN_ATTRIBUTE + "." + name, LimitAdmin.of(limiter,
                limitStore instanceof RedisLimitProvider redis ? redis : null,
                rules.stream().map(UrlRule::rule).toList(), () -> group));
        return context;
    }

    /**
     * @param context the application's context
     * @param limiter a filter's limiter, leaving the group when the filter is destroyed
     */
    static void leave(ServletContext context, RateLimiter limiter) {
        limiters(context).removeIf(l -> l == limiter);
    }

    @SuppressWarnings("unchecked")
    private static List<RateLimiter> limiters(ServletContext context) {
        // Containers start filters one at a time; the lock covers one that does not.
        synchronized (FilterGroup.class) {
            Object group = context.getAttribute(ATTRIBUTE);
            if (group == null) {
                group = new CopyOnWriteArrayList<RateLimiter>();
                context.setAttribute(ATTRIBUTE, group);
            }
            return (List<RateLimiter>) group;
        }
    }
}
