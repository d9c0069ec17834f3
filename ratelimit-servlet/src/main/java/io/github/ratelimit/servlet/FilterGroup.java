package io.github.ratelimit.servlet;

import io.github.ratelimit.RateLimiter;
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
     * @param context the application's context
     * @param limiter a filter's limiter, joining the group
     * @return the group's limiters, a live view that grows as later filters start
     */
    static List<RateLimiter> join(ServletContext context, RateLimiter limiter) {
        List<RateLimiter> limiters = limiters(context);
        limiters.add(limiter);
        return limiters;
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
