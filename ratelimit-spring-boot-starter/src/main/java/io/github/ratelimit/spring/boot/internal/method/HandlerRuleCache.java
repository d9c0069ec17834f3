package io.github.ratelimit.spring.boot.internal.method;

import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.config.RateLimitAnnotations;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The {@code @RateLimit} rules of handler methods that a web filter decides together with the URL rules, one
 * decision per request, on Spring MVC and on WebFlux alike: a handler's rules, learnt once per handler. A handler
 * whose rules read the method's arguments is left to the advisor, which decides at the call (and returns the
 * filter's tokens when it rejects); so is a JDK interface proxy, whose target class is not known from the handler.
 */
public final class HandlerRuleCache {

    /**
     * A handler's rules the filter decides.
     *
     * @param handler the handler, or {@code null} for {@link #NONE}
     * @param rules its rules: empty when it has none, or when some read the call's arguments
     */
    public record Entry(@Nullable HandlerId handler, List<Rule> rules) {}

    /** No rules for the filter to decide. */
    public static final Entry NONE = new Entry(null, List.of());

    private final Predicate<Rule> readsInvocation;
    private final Map<HandlerId, Entry> entries = new ConcurrentHashMap<>();

    /**
     * @param readsInvocation whether a rule's key needs the method call (its arguments) to be resolved
     */
    public HandlerRuleCache(Predicate<Rule> readsInvocation) {
        this.readsInvocation = readsInvocation;
    }

    /**
     * @param beanType the handler's bean type, as the handler mapping gives it
     * @param method the handler method
     * @return its rules the filter decides, or {@link #NONE}
     */
    public Entry entry(Class<?> beanType, Method method) {
        if (Proxy.isProxyClass(beanType)) {
            return NONE;
        }
        return entries.computeIfAbsent(HandlerId.of(beanType, method), handler -> {
            List<Rule> rules = RateLimitAnnotations.rulesFor(handler.type(), handler.method());
            boolean decidable = rules.stream().noneMatch(readsInvocation);
            return new Entry(handler, decidable ? List.copyOf(rules) : List.of());
        });
    }

    /**
     * @param handler a handler method
     * @return whether the filter decides its rules (it has some, and none reads the call's arguments), as learnt
     *         from the lookups so far: a filter looks a request's handler up before the handler runs
     */
    public boolean decides(HandlerId handler) {
        Entry entry = entries.get(handler);
        return entry != null && !entry.rules().isEmpty();
    }

    /**
     * @param beanType a handler's bean type
     * @param method the handler method
     * @return whether it has rules (when no handler has, a filter need not look handlers up at all)
     */
    public static boolean hasRules(Class<?> beanType, Method method) {
        return !RateLimitAnnotations.rulesFor(beanType, method).isEmpty();
    }
}
