package io.github.ratelimit.servlet;

import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.internal.admin.RejectedKeySummary;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.redis.LimitAdmin;
import io.github.ratelimit.redis.RedisLimitProvider;
import io.github.ratelimit.store.BucketStore;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletContext;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The limiters of every {@link RateLimitFilter} of one web application configured from a rules file: a filter
 * declared once per phase builds a limiter (and a store) of its own, and the admin each filter publishes must reach
 * the rules of all of them, or a reset of the other phase's rule would do nothing and answer success. The group also
 * keeps the filters' most-rejected keys (one summary, every filter's limiter reports to it) and each filter's
 * limiter, store and admin, for {@link RateLimitAdminServlet}. Kept in servlet-context attributes, so it lives and
 * dies with the application; thread-safe.
 */
final class FilterGroup {

    /** The servlet-context attribute holding the group's limiters. */
    static final String ATTRIBUTE = RateLimitFilter.class.getName() + ".limiters";

    /** The servlet-context attribute holding the group's members, in the order their filters started. */
    static final String MEMBERS_ATTRIBUTE = RateLimitFilter.class.getName() + ".members";

    /** The servlet-context attribute holding the group's most-rejected keys. */
    static final String REJECTED_KEYS_ATTRIBUTE = RateLimitFilter.class.getName() + ".rejectedKeys";

    /** How many keys the most-rejected summary tracks, as the Spring Boot starter's. */
    static final int REJECTED_KEYS_CAPACITY = 1000;

    /**
     * One filter of the group.
     *
     * @param filter the filter's name
     * @param limiter its limiter
     * @param store its limiter's bucket store
     * @param admin the admin it published
     */
    record Member(String filter, RateLimiter limiter, BucketStore store, LimitAdmin admin) {}

    private FilterGroup() {}

    /**
     * Publishes a filter's limiter, limit store and admin in the servlet context, under the filter's name, and joins
     * the filter's limiter to the group, so its admin reaches the rules of every filter of the application.
     *
     * @param config the filter's configuration
     * @param settings what its rules file configures, with every URL rule, whichever phase the filter decides
     * @return the application's context
     */
    static ServletContext publish(FilterConfig config, RulesFile.Settings settings) {
        ServletContext context = config.getServletContext();
        String name = config.getFilterName();
        RateLimiter limiter = settings.limiter();
        LimitProvider limitStore = settings.limitStore();
        context.setAttribute(RateLimitFilter.LIMITER_ATTRIBUTE + "." + name, limiter);
        if (limitStore != null) {
            context.setAttribute(RateLimitFilter.LIMIT_STORE_ATTRIBUTE + "." + name, limitStore);
        }
        List<RateLimiter> group = list(context, ATTRIBUTE);
        group.add(limiter);
        LimitAdmin admin = LimitAdmin.of(
                limiter,
                limitStore instanceof RedisLimitProvider redis ? redis : null,
                settings.rules().stream().map(UrlRule::rule).toList(),
                () -> group);
        context.setAttribute(RateLimitFilter.ADMIN_ATTRIBUTE + "." + name, admin);
        FilterGroup.<Member>list(context, MEMBERS_ATTRIBUTE).add(new Member(name, limiter, settings.store(), admin));
        return context;
    }

    /**
     * @param context the application's context
     * @param limiter a filter's limiter, leaving the group when the filter is destroyed
     */
    static void leave(ServletContext context, RateLimiter limiter) {
        FilterGroup.<RateLimiter>list(context, ATTRIBUTE).removeIf(l -> l == limiter);
        FilterGroup.<Member>list(context, MEMBERS_ATTRIBUTE).removeIf(m -> m.limiter() == limiter);
    }

    /**
     * @param context the application's context
     * @return the filters of the group, in the order they started; empty before any has
     */
    static List<Member> members(ServletContext context) {
        return List.copyOf(list(context, MEMBERS_ATTRIBUTE));
    }

    /**
     * @param config a filter's configuration
     * @return the application's most-rejected keys, which the filter's limiter reports to
     */
    static RejectedKeySummary rejectedKeys(FilterConfig config) {
        return rejectedKeys(config.getServletContext());
    }

    /**
     * @param context the application's context
     * @return the application's most-rejected keys, made on first use
     */
    static RejectedKeySummary rejectedKeys(ServletContext context) {
        synchronized (FilterGroup.class) {
            if (context.getAttribute(REJECTED_KEYS_ATTRIBUTE) instanceof RejectedKeySummary rejected) {
                return rejected;
            }
            RejectedKeySummary rejected = new RejectedKeySummary(REJECTED_KEYS_CAPACITY);
            context.setAttribute(REJECTED_KEYS_ATTRIBUTE, rejected);
            return rejected;
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> List<T> list(ServletContext context, String attribute) {
        // Containers start filters one at a time; the lock covers one that does not.
        synchronized (FilterGroup.class) {
            Object group = context.getAttribute(attribute);
            if (group == null) {
                group = new CopyOnWriteArrayList<T>();
                context.setAttribute(attribute, group);
            }
            return (List<T>) group;
        }
    }
}
