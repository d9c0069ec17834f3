package io.github.ratelimit.spring.boot.internal.web.reactive;

import io.github.ratelimit.Rule;
import io.github.ratelimit.spring.boot.internal.method.HandlerId;
import io.github.ratelimit.spring.boot.internal.method.HandlerRuleCache;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.web.cors.reactive.CorsUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.result.method.AbstractHandlerMethodMapping;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * The {@code @RateLimit} rules of the WebFlux handler method that will serve a request, for the reactive filter to
 * decide together with the URL rules: one decision per request, as {@code MvcHandlerRules} does for Spring MVC, with
 * the same cache of each handler's rules ({@link HandlerRuleCache}).
 *
 * <p>The handler is found as the {@code DispatcherHandler} will find it, through the application context's
 * handler-method mappings ({@code RequestMappingHandlerMapping}), by their own lookup without the CORS processing
 * that {@code getHandler} adds; the lookup sets the exchange attributes the dispatcher sets again (path variables,
 * the best matching pattern), which the keys of the decision can read. Functional endpoints ({@code RouterFunction})
 * have no handler methods and no annotations; URL rules cover them. Nothing is looked up unless some handler
 * method has rules. A handler whose rules read the method's arguments is decided by the advisor at the call, which
 * returns the filter's tokens when it rejects.
 */
public final class ReactiveHandlerRules {

    private static final HandlerRuleCache.Entry NONE = HandlerRuleCache.NONE;

    private final ListableBeanFactory beanFactory;
    private final HandlerRuleCache rules;
    private volatile List<AbstractHandlerMethodMapping<?>> mappings;

    /**
     * @param beanFactory where the handler mappings are
     * @param readsInvocation whether a rule's key needs the method call (its arguments) to be resolved
     */
    public ReactiveHandlerRules(ListableBeanFactory beanFactory, Predicate<Rule> readsInvocation) {
        this.beanFactory = beanFactory;
        this.rules = new HandlerRuleCache(readsInvocation);
    }

    /**
     * @param exchange a request
     * @return the rules of its handler the filter decides, or an empty entry (never an empty {@code Mono})
     */
    Mono<HandlerRuleCache.Entry> rulesFor(ServerWebExchange exchange) {
        List<AbstractHandlerMethodMapping<?>> all = mappings();
        if (all.isEmpty()) {
            return Mono.just(NONE);
        }
        if (CorsUtils.isPreFlightRequest(exchange.getRequest())) {
            // A CORS preflight is answered by the CORS processing; the handler does not run.
            return Mono.just(NONE);
        }
        return lookup(exchange, all, 0)
                .map(method -> rules.entry(method.getBeanType(), method.getMethod()))
                .defaultIfEmpty(NONE);
    }

    private static Mono<HandlerMethod> lookup(
            ServerWebExchange exchange, List<AbstractHandlerMethodMapping<?>> all, int index) {
        if (index >= all.size()) {
            return Mono.empty();
        }
        return all.get(index)
                .getHandlerInternal(exchange)
                // The dispatcher answers this request itself (404, 405, 406, 400): no handler method runs here.
                .onErrorResume(e -> Mono.empty())
                .switchIfEmpty(Mono.defer(() -> lookup(exchange, all, index + 1)));
    }

    /**
     * @param handler a handler method
     * @return whether the filter decides its rules (it has some, and none reads the call's arguments), as learnt
     *         from the lookups so far: the filter looks a request's handler up before the handler runs
     */
    boolean decides(HandlerId handler) {
        return rules.decides(handler);
    }

    /** The handler-method mappings, or none when no handler method has rules (nothing to look up then). */
    private List<AbstractHandlerMethodMapping<?>> mappings() {
        List<AbstractHandlerMethodMapping<?>> m = mappings;
        if (m == null) {
            List<AbstractHandlerMethodMapping<?>> found = new ArrayList<>();
            boolean anyRules = false;
            for (AbstractHandlerMethodMapping<?> mapping :
                    beanFactory.getBeansOfType(AbstractHandlerMethodMapping.class, false, false).values().stream()
                            .map(x -> (AbstractHandlerMethodMapping<?>) x)
                            .sorted(AnnotationAwareOrderComparator.INSTANCE)
                            .toList()) {
                found.add(mapping);
                anyRules |= mapping.getHandlerMethods().values().stream()
                        .anyMatch(h -> HandlerRuleCache.hasRules(h.getBeanType(), h.getMethod()));
            }
            m = anyRules ? List.copyOf(found) : List.of();
            mappings = m;
        }
        return m;
    }
}
