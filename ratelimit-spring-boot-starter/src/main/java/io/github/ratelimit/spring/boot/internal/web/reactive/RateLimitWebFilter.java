package io.github.ratelimit.spring.boot.internal.web.reactive;

import io.github.ratelimit.CallTooLargeException;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Guard;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimitHeaders;
import io.github.ratelimit.RateLimitHeaders.HeaderStyle;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.Charges;
import io.github.ratelimit.internal.web.ProblemDetails;
import io.github.ratelimit.internal.web.UrlGuards;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.spring.boot.internal.method.AuthorityPlans;
import io.github.ratelimit.spring.boot.internal.method.HandlerId;
import io.github.ratelimit.spring.boot.internal.method.SpelKeyResolverFactory;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToLongFunction;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.ErrorResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

/**
 * Rate limits Spring WebFlux requests: the reactive twin of the servlet {@code RateLimitFilter}, with the same
 * rules, keys, headers and responses.
 *
 * <h2>What applies to a request</h2>
 * Every URL rule whose path pattern and method match, and the {@code @RateLimit} rules of the handler method that
 * will serve it ({@link ReactiveHandlerRules}), in one decision: a rule that rejects costs the others nothing. The
 * advisor then lets that handler's call through without deciding again.
 *
 * <h2>Without blocking</h2>
 * Decisions go through {@link ReactiveDecider}: in memory on the calling thread, Redis on a bounded scheduler of
 * their own, SOFT delays on the limiter's timer. The principal of {@code user} keys is read from the exchange
 * ({@code exchange.getPrincipal()}, which Spring Security fills from its reactive security context) only when a
 * rule's key may need it.
 *
 * <h2>Responses</h2>
 * Allowed requests get the rate-limit headers. A rejection is the error {@link RateLimitExceededException}, which
 * {@link RateLimitWebExceptionHandler} answers with {@code Retry-After}, the headers and the problem+json body of
 * the servlet path, unless the application's own {@code WebExceptionHandler} of higher precedence answers it.
 *
 * <p>Every request the filter passes on carries the exchange in its Reactor context
 * ({@link #EXCHANGE_CONTEXT_KEY}), so {@code @RateLimit} methods called while serving it resolve keys from it.
 */
public final class RateLimitWebFilter implements WebFilter, Ordered {

    /** The most of a rejected request's body read before answering it. */
    static final long DRAIN_BYTES = 64 * 1024;

    /** The longest a rejected request's body is read before answering it. */
    static final Duration DRAIN_TIME = Duration.ofSeconds(1);

    /** The Reactor context key of the exchange a call serves. */
    static final String EXCHANGE_CONTEXT_KEY = RateLimitWebFilter.class.getName() + ".exchange";

    /** The exchange attribute holding the request's {@link Decision} (every rate-limit filter's, combined). */
    static final String DECISION_ATTRIBUTE = RateLimitWebFilter.class.getName() + ".decision";

    /**
     * The exchange attribute holding a rejection the response may describe: the request's own rules (URL rules, the
     * handler's). A rejection by any other method is answered without naming its rule.
     */
    static final String DISCLOSED_REJECTION_ATTRIBUTE = RateLimitWebFilter.class.getName() + ".disclosedRejection";

    /** The exchange attribute naming the {@link HandlerId} whose rules the filter decided. */
    static final String DECIDED_HANDLER_ATTRIBUTE = RateLimitWebFilter.class.getName() + ".decidedHandler";

    /**
     * The exchange attribute that marks a request as a failed attempt when {@link Boolean#TRUE}, for rules that
     * count only failures; a 401 response is one anyway.
     */
    static final String FAILED_ATTEMPT_ATTRIBUTE = RateLimitWebFilter.class.getName() + ".failedAttempt";

    /** The exchange attribute holding the filters' permitted decisions, for {@link #refund}. */
    private static final String DECIDED_ATTRIBUTE = RateLimitWebFilter.class.getName() + ".decided";

    private final UrlGuards<Matched> guards;
    private final ReactiveHandlerRules handlerRules;
    private final ReactiveDecider decider;
    private final Set<HeaderStyle> headers;
    private final boolean addressAsReported;
    private final int order;
    /** The status a rejection is answered with ({@code ratelimit.reject-status}), for rules that count statuses. */
    private final int rejectStatus;
    /** Whether plans come from granted authorities, so the principal is read for every request a rule decides. */
    private final boolean plansFromAuthorities;

    /** A guard, and whether any of its rules' keys may read the principal. */
    private record Matched(Guard guard, boolean needsPrincipal) {

        static Matched of(Guard guard) {
            return new Matched(guard, !guard.rules().stream().allMatch(r -> readsNoPrincipal(r.key())));
        }
    }

    /**
     * @param handlerRules the handler methods' rules, or {@code null} to decide URL rules only
     * @param rejectStatus the status rejections are answered with
     * @param plansFromAuthorities whether plans come from granted authorities ({@code plan-from=authority:...})
     */
    public RateLimitWebFilter(
            RateLimiter limiter,
            List<UrlRule> urlRules,
            ReactiveHandlerRules handlerRules,
            ReactiveDecider decider,
            Set<HeaderStyle> headers,
            boolean addressAsReported,
            int order,
            int rejectStatus,
            boolean plansFromAuthorities) {
        this.rejectStatus = rejectStatus;
        this.plansFromAuthorities = plansFromAuthorities;
        this.guards = new UrlGuards<>(limiter, urlRules, Matched::of);
        this.handlerRules = handlerRules;
        this.decider = decider;
        this.headers = headers;
        this.addressAsReported = addressAsReported;
        this.order = order;
    }

    /**
     * @param handler a handler method
     * @return whether this filter decides the handler's rules for every request it serves
     */
    boolean decidesHandler(HandlerId handler) {
        return handlerRules != null && handlerRules.decides(handler);
    }

    @Override
    public int getOrder() {
        return order;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (guards.urlRules().isEmpty() && handlerRules == null) {
            return chain.filter(exchange);
        }
        Mono<Void> proceed = chain.filter(exchange).contextWrite(c -> c.put(EXCHANGE_CONTEXT_KEY, exchange));
        String method = exchange.getRequest().getMethod().name();
        String path = ExchangeRequestContext.pathOf(exchange.getRequest());
        if (handlerRules == null) {
            Matched matched = guards.forRequest(method, path, List.of());
            return matched == null ? proceed : decide(exchange, matched, null, proceed);
        }
        return handlerRules.rulesFor(exchange).flatMap(entry -> {
            Matched matched = guards.forRequest(method, path, entry.rules());
            return matched == null
                    ? proceed
                    : decide(exchange, matched, entry.rules().isEmpty() ? null : entry.handler(), proceed);
        });
    }

    /**
     * @param key a rule's key expression
     * @return whether every part of it is a built-in key that reads the request only; {@code user}, SpEL and custom
     *         keys may read the principal, which on WebFlux must be resolved (a {@code Mono}) before deciding
     */
    static boolean readsNoPrincipal(String key) {
        if (SpelKeyResolverFactory.isSpel(key)) {
            return false;
        }
        for (String alternative : key.split("\\|", -1)) {
            for (String part : alternative.split("\\+", -1)) {
                String atom = part.trim();
                boolean requestOnly = atom.equals("global")
                        || atom.equals("ip")
                        || atom.equals("basic-user")
                        || atom.equals("form-user")
                        || atom.startsWith("form-user:")
                        || atom.startsWith("header:")
                        || atom.startsWith("param:");
                if (!requestOnly) {
                    return false;
                }
            }
        }
        return true;
    }

    private Mono<Void> decide(ServerWebExchange exchange, Matched matched, HandlerId handler, Mono<Void> proceed) {
        if (handler != null) {
            exchange.getAttributes().put(DECIDED_HANDLER_ATTRIBUTE, handler);
        }
        return Mono.defer(() -> {
            // A request cancelled before it has its decision (its client went away while Redis answered) gives back
            // what the decision took: nothing else would end it.
            ReactiveDecider.Handoff handoff = decider.handoff(matched.guard());
            return principal(exchange, matched.needsPrincipal() || plansFromAuthorities)
                    .flatMap(name -> handoff.decide(
                            new ExchangeRequestContext(exchange, name.orElse(null), addressAsReported, null)))
                    // A request no window could hold (413): what the other phase's filter took for it comes back.
                    .doOnError(CallTooLargeException.class, e -> refund(exchange))
                    .flatMap(decision -> handoff.take()
                            ? proceedOrReject(exchange, matched.guard(), decision, proceed, handler != null)
                            : Mono.<Void>empty())
                    .doOnCancel(handoff::cancel);
        });
    }

    /** The authenticated principal's name, read only when a rule's key may need it. */
    static Mono<Optional<String>> principal(ServerWebExchange exchange, boolean needed) {
        if (!needed) {
            return Mono.just(Optional.empty());
        }
        // Kept for plans named by granted authorities (ratelimit.plan-from=authority:...).
        return exchange.getPrincipal()
                .doOnNext(p -> exchange.getAttributes().put(AuthorityPlans.PRINCIPAL_ATTRIBUTE, p))
                .map(ReactivePrincipal::nameOf)
                .defaultIfEmpty(Optional.empty());
    }

    /**
     * @param handlerDecided whether the handler's own rules were decided too: a handler that fails (or whose client
     *        goes away) is then a failed attempt for rules that count failures
     */
    private Mono<Void> proceedOrReject(
            ServerWebExchange exchange, Guard guard, Decision decision, Mono<Void> proceed, boolean handlerDecided) {
        Decision shown = record(exchange, decision);
        RateLimitHeaders.write(shown, headers, exchange.getResponse().getHeaders()::set);
        if (decision.outcome() == Outcome.REJECTED) {
            exchange.getAttributes().put(DISCLOSED_REJECTION_ATTRIBUTE, decision);
            // The rejection is answered once the request has been read to its end (a body is read and released; a
            // GET's end is there at once). Answered before Reactor Netty had seen the end, the next request on that
            // keep-alive connection now and then got no answer at all (the samples' login tests, which send hundreds
            // of rejected requests on one connection, saw it; never once the end is read first). Bounded: at most
            // DRAIN_BYTES or DRAIN_TIME of a body is read before answering, so a rejected upload costs no more (the
            // connection is then closed rather than reused).
            AtomicLong read = new AtomicLong();
            return exchange.getRequest()
                    .getBody()
                    .doOnNext(buffer -> {
                        read.addAndGet(buffer.readableByteCount());
                        DataBufferUtils.release(buffer);
                    })
                    .takeUntil(buffer -> read.get() >= DRAIN_BYTES)
                    .take(DRAIN_TIME)
                    .then(Mono.error(new RateLimitExceededException(decision)));
        }
        Decided decided = new Decided(guard, decision, decider);
        if (!decision.verdicts().isEmpty()) {
            exchange.getAttributes().computeIfAbsent(DECIDED_ATTRIBUTE, k -> new CopyOnWriteArrayList<Decided>());
            decidedOf(exchange).add(decided);
        }
        if (!guard.settlesOnCompletion() && !guard.charges()) {
            return proceed;
        }
        // Rules that count only some requests: the tokens come back unless the request turns out a failed attempt (an
        // error answering 401, or any error when the handler's own rules were decided here; any other error, a 500, a
        // 404, or a client that goes away costs URL rules that count failures, limits on logins, nothing), or for
        // rules that count statuses, unless its status is one of theirs. An error's status is the one its handler
        // will answer: an ErrorResponse's (a 404 for no handler), else 500.
        AtomicInteger errorStatus = new AtomicInteger();
        // Rules that charge what a request used read the response header they name once the request is handled (an
        // error or a client that went away keeps the request's estimate).
        return proceed.doOnError(e -> errorStatus.set(statusOf(e)))
                .doFinally(signal -> decided.completed(
                        errorStatus.get() == 401
                                || failedAttempt(exchange)
                                || (handlerDecided && signal != SignalType.ON_COMPLETE),
                        status(exchange, errorStatus.get(), signal),
                        rule -> used(rule, exchange, signal == SignalType.ON_COMPLETE && errorStatus.get() == 0)));
    }

    /** @return the tokens a request used under a charging URL rule, read from the response header the rule names */
    private static long used(Rule rule, ServerWebExchange exchange, boolean handled) {
        if (!handled) {
            Charges.unusable(rule, "the request ended in an error, or its client went away");
            return Charges.UNUSABLE;
        }
        String header = Charges.responseHeader(rule.charge());
        return Charges.tokens(
                rule,
                header == null ? null : exchange.getResponse().getHeaders().getFirst(header));
    }

    /** @return the status an error is answered with: an ErrorResponse's, a rejection's, a too-large call's, else 500 */
    private int statusOf(Throwable e) {
        if (e instanceof ErrorResponse r) {
            return r.getStatusCode().value();
        }
        if (e instanceof RateLimitExceededException) {
            return rejectStatus;
        }
        return e instanceof CallTooLargeException ? ProblemDetails.TOO_LARGE : 500;
    }

    /** @return the status a request is answered with, or 0 when it is not known (the client went away first) */
    private static int status(ServerWebExchange exchange, int errorStatus, SignalType signal) {
        if (errorStatus != 0) {
            return errorStatus;
        }
        HttpStatusCode code = exchange.getResponse().getStatusCode();
        if (code != null) {
            return code.value();
        }
        return signal == SignalType.ON_COMPLETE ? 200 : 0;
    }

    private static boolean failedAttempt(ServerWebExchange exchange) {
        ServerHttpResponse response = exchange.getResponse();
        return HttpStatus.UNAUTHORIZED.equals(response.getStatusCode())
                || Boolean.TRUE.equals(exchange.getAttribute(FAILED_ATTEMPT_ATTRIBUTE));
    }

    /** Combines this decision with an earlier filter's (the other phase) for the headers, and records it. */
    static Decision record(ServerWebExchange exchange, Decision decision) {
        Decision shown = exchange.getAttribute(DECISION_ATTRIBUTE) instanceof Decision earlier
                ? earlier.combine(decision)
                : decision;
        exchange.getAttributes().put(DECISION_ATTRIBUTE, shown);
        return shown;
    }

    @SuppressWarnings("unchecked")
    private static List<Decided> decidedOf(ServerWebExchange exchange) {
        Object all = exchange.getAttribute(DECIDED_ATTRIBUTE);
        return all instanceof List<?> list ? (List<Decided>) list : List.of();
    }

    /**
     * Returns the tokens the filters took for a request they let through, when a later layer (the advisor, on a
     * handler rule that reads the method's arguments) rejects it; afterwards {@link #DECISION_ATTRIBUTE} reports the
     * filters' windows with their tokens back. At most once per request. Runs where the advisor's decision
     * completed: a thread of the store's scheduler (or the limiter's timer) whenever decisions are offloaded, so the
     * store work never runs on an event loop; in memory otherwise.
     *
     * @param exchange the request
     */
    static void refund(ServerWebExchange exchange) {
        Decision shown = null;
        for (Decided d : decidedOf(exchange)) {
            Decision now = d.settle() ? d.guard.refund(d.decision) : d.decision;
            shown = shown == null ? now : shown.combine(now);
        }
        if (shown != null) {
            exchange.getAttributes().put(DECISION_ATTRIBUTE, shown);
        }
    }

    /**
     * A filter's permitted decision, settled (refunded, or completed for failure-counting rules) at most once, off the
     * event loop when the store blocks.
     */
    private static final class Decided {
        final Guard guard;
        final Decision decision;
        final ReactiveDecider decider;
        private final AtomicBoolean settled = new AtomicBoolean();

        Decided(Guard guard, Decision decision, ReactiveDecider decider) {
            this.guard = guard;
            this.decision = decision;
            this.decider = decider;
        }

        boolean settle() {
            return settled.compareAndSet(false, true);
        }

        void completed(boolean failed, int status, ToLongFunction<Rule> used) {
            if (settle()) {
                decider.offload(() -> {
                    if (guard.charges() && decision.permitted()) {
                        guard.settle(decision, used);
                    }
                    guard.completed(decision, failed, status);
                });
            }
        }
    }
}
