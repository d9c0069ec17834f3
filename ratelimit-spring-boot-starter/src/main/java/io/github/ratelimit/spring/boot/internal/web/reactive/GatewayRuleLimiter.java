package io.github.ratelimit.spring.boot.internal.web.reactive;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.RateLimitHeaders;
import io.github.ratelimit.RateLimitHeaders.HeaderStyle;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.key.KeyResolver;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Spring Cloud Gateway's {@code RateLimiter}, for its {@code RequestRateLimiter} filter, backed by this library's
 * engine: the route's rules are {@code ratelimit.rules} of {@code phase=gateway}, decided with the application's
 * limiter (its store, plans, per-key limits, listeners and metrics), answered with the configured rate-limit headers.
 *
 * <h2>Which rules a route decides</h2>
 * The ones its filter names ({@code ratelimit.rules: a, b} among the filter's arguments), else the one named as the
 * route's id. A name that is no rule of {@code phase=gateway} stops the route's definition with a message naming
 * the route and the rules there are; a route without either fails each request it limits with the same message.
 *
 * <h2>Keys</h2>
 * The key the route's {@code KeyResolver} resolved is the key {@value #GATEWAY_KEY}; every other key
 * ({@code ip}, {@code user}, headers, SpEL over {@code #exchange}, a custom {@code KeyResolver} bean) reads the
 * request, which reaches the limiter in the Reactor context ({@link ServerWebExchangeContextFilter}). Without that
 * filter only {@value #GATEWAY_KEY} resolves.
 *
 * <h2>No double counting</h2>
 * Rules of {@code phase=gateway} are no URL rules: the library's WebFlux filter never decides them, and the rules it
 * does decide are never a route's. Where both decide a request, the response's headers describe both decisions
 * combined, once.
 *
 * <p>Thread-safe. Guards are compiled once per combination of rules.
 */
public final class GatewayRuleLimiter extends AbstractRateLimiter<GatewayRuleLimiter.Config> {

    /** The prefix of this limiter's arguments among the {@code RequestRateLimiter} filter's. */
    public static final String CONFIGURATION_PROPERTY_NAME = "ratelimit";

    /** The key that the route's {@code KeyResolver} resolved. */
    public static final String GATEWAY_KEY = "gateway-key";

    /** The exchange (and request context) attribute holding the key the route's {@code KeyResolver} resolved. */
    public static final String GATEWAY_KEY_ATTRIBUTE = GatewayRuleLimiter.class.getName() + ".key";

    private final RateLimiter limiter;
    private final Map<String, Rule> rules = new LinkedHashMap<>();
    private final Map<List<String>, Guard> guards = new ConcurrentHashMap<>();
    private final ReactiveDecider decider;
    private final Set<HeaderStyle> headers;
    private final boolean addressAsReported;
    private final boolean plansFromAuthorities;

    /**
     * @param limiter the application's limiter
     * @param gatewayRules the rules of {@code phase=gateway}, each compiled (and so checked) here
     * @param decider decides without blocking an event loop
     * @param headers the rate-limit header styles
     * @param addressAsReported whether the {@code ip} key reads the address the request reports
     * @param plansFromAuthorities whether plans come from granted authorities, so the principal is always read
     * @param configurationService binds the filter's arguments, or {@code null} when the gateway has none
     */
    public GatewayRuleLimiter(
            RateLimiter limiter,
            List<Rule> gatewayRules,
            ReactiveDecider decider,
            Set<HeaderStyle> headers,
            boolean addressAsReported,
            boolean plansFromAuthorities,
            ConfigurationService configurationService) {
        super(Config.class, CONFIGURATION_PROPERTY_NAME, configurationService);
        this.limiter = limiter;
        this.decider = decider;
        this.headers = headers;
        this.addressAsReported = addressAsReported;
        this.plansFromAuthorities = plansFromAuthorities;
        for (Rule rule : gatewayRules) {
            rules.put(rule.name(), rule);
            guards.put(List.of(rule.name()), limiter.guard(rule));
        }
    }

    /**
     * @return the key resolver of {@value #GATEWAY_KEY}: the key the route's {@code KeyResolver} resolved
     */
    public static KeyResolver gatewayKey() {
        return context -> context.attribute(GATEWAY_KEY_ATTRIBUTE) instanceof String key ? key : null;
    }

    /** Binds a route's arguments, and checks at once that the rules they name exist. */
    @Override
    public void onApplicationEvent(FilterArgsEvent event) {
        super.onApplicationEvent(event);
        if (getConfig().containsKey(event.getRouteId())) {
            guardFor(event.getRouteId());
        }
    }

    @Override
    public Mono<Response> isAllowed(String routeId, String id) {
        Guard guard;
        try {
            guard = guardFor(routeId);
        } catch (InvalidRateLimitConfigurationException e) {
            return Mono.error(e);
        }
        return Mono.deferContextual(view -> {
            Optional<ServerWebExchange> found = ServerWebExchangeContextFilter.getExchange(view);
            if (found.isEmpty()) {
                RequestContext context = RequestContext.builder()
                        .attribute(GATEWAY_KEY_ATTRIBUTE, id)
                        .build();
                return decider.decide(guard, context).map(decision -> response(decision, decision));
            }
            ServerWebExchange exchange = found.get();
            exchange.getAttributes().put(GATEWAY_KEY_ATTRIBUTE, id);
            boolean needsPrincipal = plansFromAuthorities
                    || !guard.rules().stream().allMatch(r -> RateLimitWebFilter.readsNoPrincipal(r.key()));
            return RateLimitWebFilter.principal(exchange, needsPrincipal)
                    .flatMap(name -> decider.decide(
                            guard, new ExchangeRequestContext(exchange, name.orElse(null), addressAsReported, null)))
                    .map(decision -> {
                        // One set of headers for the request: the WebFlux filter's decision (URL rules) and this one.
                        Decision shown = RateLimitWebFilter.record(exchange, decision);
                        Response response = response(decision, shown);
                        response.getHeaders()
                                .keySet()
                                .forEach(exchange.getResponse().getHeaders()::remove);
                        return response;
                    });
        });
    }

    private Response response(Decision decision, Decision shown) {
        Map<String, String> written = new LinkedHashMap<>();
        RateLimitHeaders.write(shown, headers, written::put);
        return new Response(decision.permitted(), written);
    }

    /**
     * @param routeId a route
     * @return the guard of the rules the route names, or of the rule named as the route
     * @throws InvalidRateLimitConfigurationException when a name is no rule of {@code phase=gateway}
     */
    private Guard guardFor(String routeId) {
        Config config = getConfig().get(routeId);
        List<String> names = config == null || config.getRules().isEmpty() ? List.of(routeId) : config.getRules();
        Guard guard = guards.get(names);
        if (guard != null) {
            return guard;
        }
        List<Rule> chosen = new ArrayList<>();
        for (String name : names) {
            Rule rule = rules.get(name);
            if (rule == null) {
                String where = "spring.cloud.gateway route '" + routeId + "', filter RequestRateLimiter";
                throw new InvalidRateLimitConfigurationException(
                        config == null ? where : where + ", argument " + CONFIGURATION_PROPERTY_NAME + ".rules",
                        name,
                        "'" + name + "' is no rule of phase gateway (those are " + rules.keySet() + ")",
                        config == null
                                ? "Name the route's rules with the filter's argument " + CONFIGURATION_PROPERTY_NAME
                                        + ".rules, or give a rule the route's id as its name, with phase=gateway."
                                : "Define ratelimit.rules[i].name=" + name + " with phase=gateway, or name another.");
            }
            chosen.add(rule);
        }
        return guards.computeIfAbsent(List.copyOf(names), n -> limiter.guard(chosen));
    }

    /** A route's arguments: {@code ratelimit.rules}. */
    public static final class Config {

        private List<String> rules = new ArrayList<>();

        /** @return the names of the rules the route decides; empty for the rule named as the route */
        public List<String> getRules() {
            return rules;
        }

        /**
         * @param rules the names of the rules the route decides
         * @return this
         */
        public Config setRules(List<String> rules) {
            this.rules = rules == null
                    ? new ArrayList<>()
                    : rules.stream().map(String::trim).filter(s -> !s.isEmpty()).toList();
            return this;
        }

        @Override
        public String toString() {
            return "Config{rules=" + rules + "}";
        }
    }
}
