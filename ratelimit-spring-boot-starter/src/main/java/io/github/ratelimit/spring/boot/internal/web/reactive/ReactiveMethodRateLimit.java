package io.github.ratelimit.spring.boot.internal.web.reactive;

import io.github.ratelimit.CallTooLargeException;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimitHeaders;
import io.github.ratelimit.internal.config.RateLimitSettings;
import io.github.ratelimit.spring.boot.internal.method.HandlerId;
import io.github.ratelimit.spring.boot.internal.method.MethodCallContext;
import io.github.ratelimit.spring.boot.internal.method.MethodDecider;
import io.github.ratelimit.spring.boot.internal.method.RateLimitMethodInterceptor;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInvocation;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.core.Ordered;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.util.ClassUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.ContextView;

/**
 * Decides calls of {@code @RateLimit} methods that return a {@code Mono}, a {@code Flux} or another
 * {@link Publisher} when they are <em>subscribed</em>, not when they are called: a publisher assembled and never
 * subscribed costs nothing, and one subscribed twice (a retry) is decided twice. The method itself runs only after
 * a permit, so its work (and its publisher's) does not start for a rejected call. Nothing blocks: see
 * {@link ReactiveDecider}.
 *
 * <p>Keys are resolved from the exchange of the WebFlux request being served, which the rate-limit filter puts in
 * the Reactor context, and the principal from it ({@code exchange.getPrincipal()}), or, outside a request, from
 * Spring Security's reactive security context. A handler method the filter has decided already goes ahead without
 * a second decision; a rejection by the request's handler returns the filter's tokens; a rejection by any other
 * method is answered without naming its rule, as on Spring MVC.
 *
 * <p>A method returning a {@link CompletionStage} (declared as {@code CompletableFuture} or {@code CompletionStage})
 * that is called on a non-blocking thread (an event loop) is decided the same way, without the request's context,
 * and its future completes when the call is; on any other thread it is decided at the call, as before.
 */
public final class ReactiveMethodRateLimit implements MethodDecider, Ordered {

    /**
     * After the Spring MVC decider's ({@code ServletMethodRateLimit.ORDER}, 0): a call inside a servlet request is
     * decided there, whatever it returns.
     */
    public static final int ORDER = 100;

    private static final boolean SECURITY_PRESENT = ClassUtils.isPresent(
            "org.springframework.security.core.context.ReactiveSecurityContextHolder",
            ReactiveMethodRateLimit.class.getClassLoader());

    /** The exchange attribute of the handler Spring WebFlux chose ({@code HandlerMapping}'s constant). */
    private static final String BEST_MATCHING_HANDLER =
            "org.springframework.web.reactive.HandlerMapping.bestMatchingHandler";

    /** The name of the {@link ReactiveDecider} bean. */
    public static final String DECIDER_BEAN = "rateLimitReactiveDecider";

    /** The name of the WebFlux filter that decides handler methods' rules. */
    static final String FILTER_BEAN = "rateLimitWebFilter";

    private final Supplier<ReactiveDecider> decider;
    private final Supplier<RateLimitSettings> settings;
    private final Supplier<RateLimitWebFilter> filter;
    private volatile Optional<RateLimitWebFilter> resolvedFilter;
    private final Set<HandlerId> warnedBlocking = ConcurrentHashMap.newKeySet();

    ReactiveMethodRateLimit(
            Supplier<ReactiveDecider> decider,
            Supplier<RateLimitSettings> settings,
            Supplier<RateLimitWebFilter> filter) {
        this.decider = once(decider);
        this.settings = once(settings);
        this.filter = filter;
    }

    /** A bean looked up on first use, then kept: not a bean-factory lookup per call. */
    private static <T> Supplier<T> once(Supplier<T> lookup) {
        return new Supplier<>() {
            private volatile T value;

            @Override
            public T get() {
                T v = value;
                if (v == null) {
                    v = lookup.get();
                    value = v;
                }
                return v;
            }
        };
    }

    /**
     * @param beanFactory where the {@link ReactiveDecider} bean is, looked up on first use
     * @param settings the settings, looked up on first use
     */
    public static ReactiveMethodRateLimit create(BeanFactory beanFactory, Supplier<RateLimitSettings> settings) {
        return new ReactiveMethodRateLimit(
                () -> beanFactory.getBean(DECIDER_BEAN, ReactiveDecider.class),
                settings,
                () -> beanFactory.containsBean(FILTER_BEAN)
                                && beanFactory.getBean(FILTER_BEAN) instanceof RateLimitWebFilter f
                        ? f
                        : null);
    }

    /** The WebFlux filter, looked up on first use: none in any other application. */
    private Optional<RateLimitWebFilter> filter() {
        Optional<RateLimitWebFilter> f = resolvedFilter;
        if (f == null) {
            f = Optional.ofNullable(filter.get());
            resolvedFilter = f;
        }
        return f;
    }

    /**
     * @param returnType a method's declared return type
     * @return whether calls of such methods are decided here, whatever thread calls them
     */
    public static boolean decidesOnSubscription(Class<?> returnType) {
        return Publisher.class.isAssignableFrom(returnType);
    }

    /**
     * Ends a call decided elsewhere (inside a servlet request) whose method returned a Reactor publisher when the
     * publisher ends (an error or a cancellation is a failed call): {@link RateLimitMethodInterceptor.Ends}.
     *
     * @return the publisher, reporting its end; {@code null} for any other result
     */
    public static Object endWhenDone(Object result, Guard guard, Decision decision, MethodInvocation invocation) {
        if (result instanceof Mono<?> mono) {
            return PublisherEnds.ending(mono, invocation, guard, decision, Runnable::run);
        }
        if (result instanceof Flux<?> flux) {
            return PublisherEnds.ending(flux, invocation, guard, decision, Runnable::run);
        }
        return null;
    }

    /**
     * @return whether the calling thread is a non-blocking one (an event loop, Reactor's parallel scheduler)
     */
    public static boolean onEventLoop() {
        return Schedulers.isInNonBlockingThread();
    }

    /**
     * A WebFlux handler method that returns its result (not a publisher) is called by the dispatcher without the
     * request's Reactor context, so whether the filter decided this request cannot be read from the exchange. In a
     * WebFlux application the filter decides such a handler's rules for every request it serves (unless they read
     * the method's arguments): the call goes ahead without a second decision, which would also have waited on the
     * event loop. A direct call to that controller method from other code is then not limited.
     *
     * @param handler a method with rules
     * @return whether the WebFlux filter decides its rules
     */
    public boolean decidedByFilter(HandlerId handler) {
        Optional<RateLimitWebFilter> f = filter();
        return f.isPresent() && f.get().decidesHandler(handler);
    }

    /**
     * @return whether decisions may wait on I/O (and so run on the store's scheduler here)
     */
    public boolean offloads() {
        return decider.get().offloads();
    }

    /**
     * @param returnType a method's declared return type
     * @return whether the call is decided here: a future-returning method called on a non-blocking thread
     */
    public static boolean decidesFuture(Class<?> returnType) {
        return (returnType == CompletableFuture.class || returnType == CompletionStage.class)
                && Schedulers.isInNonBlockingThread();
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    /**
     * Takes a method returning a publisher, a handler the WebFlux filter decides, and a future-returning method
     * called on an event loop. A call it leaves on an event loop is decided there, blocking it: said once per method,
     * when its rules could wait at all.
     */
    @Override
    public boolean decides(MethodInvocation invocation, Guard guard, HandlerId handler) {
        Class<?> returned = invocation.getMethod().getReturnType();
        if (decidesOnSubscription(returned) || decidedByFilter(handler) || decidesFuture(returned)) {
            return true;
        }
        if (onEventLoop()) {
            warnBlocking(handler, guard);
        }
        return false;
    }

    /**
     * @return the publisher or future the method's caller gets, of the method's declared type; or, for a handler the
     *         filter decided, the call's own result
     */
    @Override
    public Object invoke(MethodInvocation invocation, Guard guard, HandlerId handler) throws Throwable {
        Class<?> type = invocation.getMethod().getReturnType();
        if (!decidesOnSubscription(type) && decidedByFilter(handler)) {
            return invocation.proceed();
        }
        // Each subscription's decision reaches its call through a hand-off: a call cancelled before it has it (its
        // client went away while Redis answered) gives back what the decision took, as nothing else would end it.
        // The method runs inside the settled publisher, so one that throws (or returns null) ends the call too.
        if (Mono.class.isAssignableFrom(type)) {
            return Mono.deferContextual(context -> {
                ReactiveDecider.Handoff handoff = decider.get().handoff(guard);
                return decided(invocation, guard, handler, context, handoff)
                        .flatMap(go -> handoff.take()
                                ? settled(
                                        Mono.defer(() -> Mono.from(this.<Publisher<Object>>call(invocation))),
                                        go,
                                        invocation)
                                : Mono.empty())
                        .doOnCancel(handoff::cancel);
            });
        }
        if (decidesOnSubscription(type)) {
            return Flux.deferContextual(context -> {
                ReactiveDecider.Handoff handoff = decider.get().handoff(guard);
                return decided(invocation, guard, handler, context, handoff)
                        .flatMapMany(go -> handoff.take()
                                ? settled(
                                        Flux.defer(() -> Flux.from(this.<Publisher<Object>>call(invocation))),
                                        go,
                                        invocation)
                                : Flux.empty())
                        .doOnCancel(handoff::cancel);
            });
        }
        return Mono.deferContextual(context -> {
                    ReactiveDecider.Handoff handoff = decider.get().handoff(guard);
                    return decided(invocation, guard, handler, context, handoff)
                            .flatMap(go -> handoff.take()
                                    ? settled(
                                            Mono.defer(() -> Mono.fromCompletionStage(
                                                    this.<CompletionStage<Object>>call(invocation))),
                                            go,
                                            invocation)
                                    : Mono.empty())
                            .doOnCancel(handoff::cancel);
                })
                .toFuture();
    }

    /**
     * A method that returns its result (not a publisher) called on an event loop is decided there: a SOFT wait or
     * a store's round trip would hold the loop. Said once per method, when its rules could wait at all.
     */
    private void warnBlocking(HandlerId method, Guard guard) {
        if (warnedBlocking.contains(method)) {
            return;
        }
        boolean mayWait = offloads() || guard.rules().stream().anyMatch(r -> r.mode() == Mode.SOFT);
        if (mayWait && warnedBlocking.add(method)) {
            System.getLogger(RateLimitMethodInterceptor.class.getName())
                    .log(
                            System.Logger.Level.WARNING,
                            "@RateLimit method " + method.type().getSimpleName() + "#"
                                    + method.method().getName() + " was "
                                    + "called on the non-blocking thread "
                                    + Thread.currentThread().getName() + ", where its decision "
                                    + "can wait (a SOFT delay, or the store's round trip) and hold the event loop. Declare it to return "
                                    + "a Mono or a Flux (decided when subscribed, without blocking), or call it off the event loop "
                                    + "(publishOn(Schedulers.boundedElastic())).");
        }
    }

    /** What the call goes ahead with: the guard and decision to settle when it ends, if they count failures. */
    private record Go(Guard guard, Decision decision, ServerWebExchange markFailedOn) {}

    private Mono<Go> decided(
            MethodInvocation invocation,
            Guard guard,
            HandlerId handler,
            ContextView context,
            ReactiveDecider.Handoff handoff) {
        ServerWebExchange exchange = context.getOrDefault(RateLimitWebFilter.EXCHANGE_CONTEXT_KEY, null);
        if (exchange != null && handler.equals(exchange.getAttribute(RateLimitWebFilter.DECIDED_HANDLER_ATTRIBUTE))) {
            // The filter decided this handler's rules with the URL rules; a call that fails is a failed attempt.
            return Mono.just(new Go(null, null, guard.settlesOnCompletion() ? exchange : null));
        }
        RateLimitSettings s = settings.get();
        return principal(exchange)
                .flatMap(name -> handoff.decide(
                        exchange != null
                                ? new ExchangeRequestContext(
                                        exchange, name.orElse(null), s.trustContainerForwarding(), invocation)
                                : new MethodCallContext(invocation, name.orElse(null))))
                .doOnError(CallTooLargeException.class, e -> {
                    // A call no window could hold (413): the URL rules that let the request through get their
                    // tokens back.
                    if (isHandler(exchange, handler)) {
                        RateLimitWebFilter.refund(exchange);
                    }
                })
                .flatMap(decision -> {
                    boolean isHandler = isHandler(exchange, handler);
                    boolean disclosed = isHandler || s.methodHeaders();
                    if (!decision.permitted() && isHandler) {
                        // The URL rules that let the request through get their tokens back, before the headers
                        // report them.
                        RateLimitWebFilter.refund(exchange);
                    }
                    if (exchange != null && !exchange.getResponse().isCommitted()) {
                        if (disclosed) {
                            Decision shown = RateLimitWebFilter.record(exchange, decision);
                            RateLimitHeaders.write(
                                    shown, s.headers(), exchange.getResponse().getHeaders()::set);
                        } else if (!decision.permitted()) {
                            RateLimitHeaders.write(
                                    decision, Set.of(), exchange.getResponse().getHeaders()::set);
                        }
                    }
                    if (!decision.permitted()) {
                        if (disclosed && exchange != null) {
                            exchange.getAttributes().put(RateLimitWebFilter.DISCLOSED_REJECTION_ATTRIBUTE, decision);
                        }
                        return Mono.error(new RateLimitExceededException(decision));
                    }
                    return Mono.just(
                            new Go(guard.settlesOnCompletion() || guard.charges() ? guard : null, decision, null));
                });
    }

    /** @return whether the method is the handler of the exchange's request */
    private static boolean isHandler(ServerWebExchange exchange, HandlerId handler) {
        return exchange != null
                && exchange.getAttribute(BEST_MATCHING_HANDLER) instanceof HandlerMethod h
                && handler.equals(HandlerId.of(h.getBeanType(), h.getMethod()));
    }

    private static Mono<Optional<String>> principal(ServerWebExchange exchange) {
        if (exchange != null) {
            return RateLimitWebFilter.principal(exchange, true);
        }
        if (SECURITY_PRESENT) {
            return SecurityContextPrincipal.name();
        }
        return Mono.just(Optional.empty());
    }

    /**
     * The call, settled with its rules that count failures or charge what it used when it ends (off the event loop when the store blocks): a
     * call that does not complete failed.
     */
    private Mono<Object> settled(Mono<Object> call, Go go, MethodInvocation invocation) {
        if (go.guard() != null) {
            return PublisherEnds.ending(
                    call,
                    invocation,
                    go.guard(),
                    go.decision(),
                    task -> decider.get().offload(task));
        }
        return go.markFailedOn() == null ? call : call.doOnError(e -> markFailed(go.markFailedOn()));
    }

    private Flux<Object> settled(Flux<Object> call, Go go, MethodInvocation invocation) {
        if (go.guard() != null) {
            return PublisherEnds.ending(
                    call,
                    invocation,
                    go.guard(),
                    go.decision(),
                    task -> decider.get().offload(task));
        }
        return go.markFailedOn() == null ? call : call.doOnError(e -> markFailed(go.markFailedOn()));
    }

    private static void markFailed(ServerWebExchange exchange) {
        exchange.getAttributes().put(RateLimitWebFilter.FAILED_ATTEMPT_ATTRIBUTE, Boolean.TRUE);
    }

    /** Runs the method once per subscription: each gets its own copy of the invocation. */
    @SuppressWarnings("unchecked")
    private <T> T call(MethodInvocation invocation) {
        MethodInvocation own = invocation instanceof ProxyMethodInvocation proxy ? proxy.invocableClone() : invocation;
        try {
            Object result = own.proceed();
            if (result == null) {
                throw new IllegalStateException(invocation.getMethod() + " returned null instead of a publisher");
            }
            return (T) result;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Exceptions.propagate(t);
        }
    }

    /** Spring Security's reactive security context. Loaded only when Spring Security is present. */
    private static final class SecurityContextPrincipal {
        static Mono<Optional<String>> name() {
            return ReactiveSecurityContextHolder.getContext()
                    .map(c -> ReactivePrincipal.nameOf(c.getAuthentication()))
                    .defaultIfEmpty(Optional.empty());
        }
    }
}
