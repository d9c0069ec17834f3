package io.github.ratelimit.servlet;

import io.github.ratelimit.Decision;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.RateLimitHeaders.HeaderStyle;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.MapLimitProvider;
import io.github.ratelimit.internal.config.RuleNameChecks;
import io.github.ratelimit.internal.web.Phase;
import io.github.ratelimit.internal.web.UrlRule;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Rate limits requests with the core engine, as a plain Jakarta Servlet filter: no Spring needed.
 *
 * <h2>In {@code web.xml}</h2>
 * <pre>{@code
 * <filter>
 *   <filter-name>rateLimit</filter-name>
 *   <filter-class>io.github.ratelimit.servlet.RateLimitFilter</filter-class>
 *   <async-supported>true</async-supported>
 *   <init-param>
 *     <param-name>config</param-name>
 *     <param-value>/WEB-INF/ratelimit.properties</param-value>
 *   </init-param>
 * </filter>
 * <filter-mapping>
 *   <filter-name>rateLimit</filter-name>
 *   <url-pattern>/*</url-pattern>
 *   <dispatcher>REQUEST</dispatcher>
 * </filter-mapping>
 * }</pre>
 *
 * <p>The {@code config} init-param names the rules file: a path in the web application ({@code /WEB-INF/...},
 * the default {@code /WEB-INF/ratelimit.properties}), {@code classpath:...} or {@code file:...}. Init-params and
 * context-params named {@code ratelimit.*} override the file's properties (filter over context). Everything is
 * read and checked in {@link #init}: a bad file fails deployment with a {@link ServletException} naming the
 * property, never the first request.
 *
 * <h2>What applies to a request</h2>
 * Every URL rule whose path pattern and method match, and the rules of the handler that will serve it: the
 * {@code @RateLimit} annotations of the servlet (on its class, and on its {@code doGet}, {@code doPost}, ... method
 * for the request's method), found from the servlet registrations once at {@code init}, and those of any
 * {@link HandlerRules} added (the Spring Boot starter's, for Spring MVC's handler methods). All of them decide
 * together: one decision per request, and a rule that rejects costs the others nothing.
 *
 * <h2>Responses</h2>
 * Allowed requests get the rate-limit headers. A rejection gets {@code Retry-After}, the headers and the
 * {@link RejectionHandler}'s answer (default: 429 with an RFC 9457 problem+json body). A {@code SOFT} delay is
 * waited out with async processing when the filter and servlet support it ({@code startAsync}, then a timed
 * {@code dispatch()}), holding no container thread; otherwise the thread waits, and the limiter's cap on waiting
 * requests bounds how many do. A request whose client goes away meanwhile stops waiting and returns its tokens
 * when the filter can tell: through {@link #clientConnections}, or the servlet context's
 * {@link #CLIENT_CONNECTIONS_ATTRIBUTE} (which Tomcat's valve
 * {@code io.github.ratelimit.servlet.tomcat.TomcatClientConnections} and Jetty's initializer
 * {@code io.github.ratelimit.servlet.jetty.JettyClientConnections} set, for HTTP/1.x), or the container's
 * {@code AsyncListener} events (a reset HTTP/2 stream, on Tomcat and Jetty). A {@code SHADOW} rule's would-be rejection is logged and the request
 * served.
 *
 * <p>Rules that count failures ({@code count=failures}) keep the tokens of failed attempts only: a 401 response,
 * a request marked with {@link #FAILED_ATTEMPT_ATTRIBUTE}, or a handler whose own rules count failures that
 * throws. A 404, a 403 or a server error elsewhere costs them nothing.
 *
 * <p>For registration in code (the Spring Boot starter uses it), see {@link #builder(RateLimiter)}. This class is
 * the filter's configuration: what {@code web.xml} gives it, or the builder; the requests themselves take the same
 * path either way. Thread-safe after {@code init}. {@link #destroy()} closes the limiter if the filter built it.
 */
public class RateLimitFilter implements Filter {

    /** The request attribute that holds the request's {@link Decision} (every rate-limit filter's, combined). */
    public static final String DECISION_ATTRIBUTE = RateLimitFilter.class.getName() + ".decision";

    /**
     * The request attribute that marks a request as a failed attempt when set to {@link Boolean#TRUE}, for rules
     * that count only failures ({@link io.github.ratelimit.Rule.Counted#FAILURES}). A response with status 401 is a
     * failed attempt anyway; an application whose failed logins answer otherwise (a form login redirecting to
     * {@code /login?error}) sets this attribute, and the Spring Boot starter sets it on Spring Security's
     * authentication failure events.
     */
    public static final String FAILED_ATTEMPT_ATTRIBUTE = RateLimitFilter.class.getName() + ".failedAttempt";

    private static final String DEFAULT_CONFIG = "/WEB-INF/ratelimit.properties";

    /**
     * The servlet-context attribute, followed by {@code .} and the filter's name, under which a filter configured
     * from its rules file publishes its {@link RateLimiter}: for an application's own operations servlet, to
     * {@link RateLimiter#reset reset} a key without Spring.
     */
    public static final String LIMITER_ATTRIBUTE = RateLimitFilter.class.getName() + ".limiter";

    /**
     * The servlet-context attribute, followed by {@code .} and the filter's name, under which a filter with
     * {@code ratelimit.limit-store.enabled=true} publishes its {@link io.github.ratelimit.redis.RedisLimitProvider}: to
     * set, read, list and remove per-key limits without Spring.
     */
    public static final String LIMIT_STORE_ATTRIBUTE = RateLimitFilter.class.getName() + ".limitStore";

    /**
     * The servlet-context attribute, followed by {@code .} and the filter's name, under which a filter configured from
     * its rules file publishes its {@link io.github.ratelimit.redis.LimitAdmin}: the operations on live keys (per-key
     * limits with {@code ratelimit.limit-store.enabled=true}, resets with any store), with the checks and the
     * addressing the Spring Boot endpoint has, knowing every rule of the rules file.
     */
    public static final String ADMIN_ATTRIBUTE = RateLimitFilter.class.getName() + ".admin";

    /**
     * The servlet-context attribute from which filters configured from their rules file take the application's
     * Micrometer {@code io.micrometer.observation.ObservationRegistry}, to make their decisions observations named
     * {@code ratelimit.decision} (spans, with Micrometer Tracing): set it before the filters start, from a
     * {@code ServletContextListener}. Unset (the default), decisions are not observed. A value that is not an
     * {@code ObservationRegistry} stops the filter at start-up.
     */
    public static final String OBSERVATION_REGISTRY_ATTRIBUTE =
            RateLimitFilter.class.getName() + ".observationRegistry";

    /**
     * The servlet-context attribute from which the filter takes, unless {@link #clientConnections} gave it one, how to
     * tell that the client of a request waiting out a {@code SOFT} delay has gone: a {@link ClientConnections}, or a
     * {@code Function<HttpServletRequest, BooleanSupplier>} giving each request's probe (or {@code null} when it cannot
     * be checked), the form in which {@code io.github.ratelimit.servlet.tomcat.TomcatClientConnections}, a valve of
     * Tomcat's, and {@code io.github.ratelimit.servlet.jetty.JettyClientConnections}, an initializer of Jetty's
     * contexts, publish themselves across class loaders. Another value stops the filter at start-up.
     */
    public static final String CLIENT_CONNECTIONS_ATTRIBUTE = RateLimitFilter.class.getName() + ".clientConnections";

    /**
     * How long a request waits out a {@code SOFT} delay before the filter first asks {@link ClientConnections}
     * whether its client is still there, and how often it asks after that: a quarter of a second, so a client that
     * goes away gives its tokens back within about that long, for at most one non-blocking check per waiting request
     * and interval (the {@code max-waiting} caps bound the waiting requests).
     */
    public static final Duration CONNECTION_CHECK_INTERVAL = Duration.ofMillis(250);

    private RateLimiter limiter;
    private boolean ownsLimiter;
    /** The application's context, once this filter joined its {@link FilterGroup}; {@code null} before. */
    private @Nullable ServletContext context;

    private LimitProvider limitStore;
    private List<UrlRule> urlRules;
    private Set<HeaderStyle> headerStyles;
    private RejectionHandler rejectionHandler;
    private boolean scanAnnotations;
    private boolean enabled = true;
    private boolean trustContainerForwarding;
    /** Per-key limits of the rules file whose rule names to check once every rule is known, or {@code null}. */
    private @Nullable MapLimitProvider keyLimitsToCheck;

    private Consumer<List<Rule>> planRulesCheck = known -> {};
    /** Every URL rule of the rules file, whichever phase this instance decides. */
    private List<UrlRule> allUrlRules = List.of();

    /** Waits out SOFT delays, ending the wait of a request whose client has gone. */
    private final SoftDelays delays = new SoftDelays(CONNECTION_CHECK_INTERVAL);
    /** Where the rules of a request's handler come from: the servlets' annotations, a framework's handlers. */
    private final List<HandlerRules> handlerRules = new CopyOnWriteArrayList<>();
    /** What the filter does with each request; {@code null} until configured. */
    private @Nullable RequestDecider decider;

    /**
     * For {@code web.xml}: configured in {@link #init(FilterConfig)} from the rules file.
     */
    public RateLimitFilter() {}

    private RateLimitFilter(Builder builder) {
        this.limiter = builder.limiter;
        this.urlRules = List.copyOf(builder.urlRules);
        this.headerStyles = builder.headerStyles;
        this.rejectionHandler = builder.rejectionHandler;
        this.scanAnnotations = builder.scanAnnotations;
        this.trustContainerForwarding = builder.trustContainerForwarding;
        this.ownsLimiter = false;
        this.decider = newDecider();
    }

    /**
     * Starts a filter configured in code rather than by {@code web.xml}, for containers configured in code (the Spring
     * Boot starter registers its filters this way).
     *
     * @param limiter the limiter that decides; the filter does not close it
     * @return a builder
     */
    public static Builder builder(RateLimiter limiter) {
        return new Builder(limiter);
    }

    @Override
    @SuppressWarnings("NullAway.Init") // the fields come from the programmatic constructor, or from configureFrom here
    public void init(FilterConfig config) throws ServletException {
        String name = config.getFilterName();
        try {
            if (limiter == null) {
                configureFrom(config);
                // Compile every rule now, so an unknown key or a name clash fails deployment rather than a request (a
                // filter built in code compiled its rules already).
                decider = newDecider();
            }
            if (scanAnnotations) {
                ServletAnnotationRules servlets = ServletAnnotationRules.scan(config.getServletContext());
                servlets.all().forEach(limiter::guard);
                handlerRules.add(servlets);
            }
            delays.connectionsIfNone(config.getServletContext().getAttribute(CLIENT_CONNECTIONS_ATTRIBUTE));
            List<Rule> known = new ArrayList<>(limiter.rules());
            allUrlRules.forEach(u -> known.add(u.rule()));
            if (keyLimitsToCheck != null) {
                RuleNameChecks.checkKeyLimits(keyLimitsToCheck, known);
            }
            planRulesCheck.accept(known);
        } catch (InvalidRateLimitConfigurationException e) {
            destroy();
            throw new ServletException("RateLimitFilter '" + name + "' cannot start: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            destroy();
            throw new ServletException("RateLimitFilter '" + name + "' cannot start: " + e, e);
        }
    }

    private RequestDecider newDecider() {
        return new RequestDecider(
                limiter, urlRules, headerStyles, rejectionHandler, trustContainerForwarding, handlerRules, delays);
    }

    private void configureFrom(FilterConfig config) {
        String location = config.getInitParameter("config");
        if (location == null || location.isBlank()) {
            location = DEFAULT_CONFIG;
        }
        Map<String, String> properties = RulesFile.read(config, location.trim());
        ClassLoader loader = config.getServletContext().getClassLoader();
        RulesFile.Settings settings = RulesFile.parse(
                properties,
                location,
                loader,
                FilterGroup.rejectedKeys(config),
                ObservationBinding.observer(config.getServletContext()));
        this.limiter = settings.limiter();
        this.ownsLimiter = true;
        this.limitStore = settings.limitStore();
        this.context = FilterGroup.publish(config, settings);
        this.enabled = settings.enabled();
        this.urlRules = settings.rules();
        this.headerStyles = settings.headers();
        this.rejectionHandler = settings.rejectionHandler();
        this.scanAnnotations = settings.annotations();
        this.trustContainerForwarding = settings.trustContainerForwarding();
        this.allUrlRules = settings.rules();
        this.keyLimitsToCheck = settings.keyLimits();
        this.planRulesCheck = known -> RuleNameChecks.checkPlanRules(settings.planFrom(), settings.planRules(), known);
        String phase = config.getInitParameter("phase");
        if (phase != null && !phase.isBlank()) {
            Phase only = RulesFile.phase(phase.trim());
            this.urlRules = urlRules.stream().filter(r -> r.phase() == only).toList();
            // Annotations are the servlet's own: they decide after authentication, with the servlet.
            this.scanAnnotations = scanAnnotations && only == Phase.AFTER_AUTHENTICATION;
            // The instance after authentication knows the annotations' rules: it checks the keys' rule names.
            this.keyLimitsToCheck = only == Phase.AFTER_AUTHENTICATION ? keyLimitsToCheck : null;
            this.planRulesCheck = only == Phase.AFTER_AUTHENTICATION ? planRulesCheck : known -> {};
        }
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        if (!enabled) {
            chain.doFilter(req, res);
            return;
        }
        RequestDecider decider = this.decider;
        if (decider == null) {
            // A container calls init first; a filter whose init failed is not put in service. Never let a request
            // through unlimited because of it.
            throw new IllegalStateException("RateLimitFilter used before init(FilterConfig) configured it");
        }
        decider.doFilter(req, res, chain);
    }

    /**
     * Adds a source of handler rules (the Spring Boot starter adds Spring MVC's): the rules of the handler that
     * will serve a request are decided with the URL rules that match it, in one decision. Call before the filter
     * serves requests.
     *
     * @param rules finds the rules of a request's handler
     * @return this filter
     */
    public RateLimitFilter handlerRules(HandlerRules rules) {
        handlerRules.add(Objects.requireNonNull(rules, "rules"));
        return this;
    }

    /**
     * Sets how the filter tells that the client of a request waiting out a {@code SOFT} delay has closed its
     * connection, to end the wait and return the request's tokens (the Spring Boot starter sets Tomcat's; on Jetty,
     * {@code new io.github.ratelimit.servlet.jetty.JettyClientConnections()}). Without
     * it, only the container's {@code AsyncListener} events end a wait early. Call before the filter serves
     * requests.
     *
     * @param connections checks waiting requests' connections, or {@code null} for none
     * @return this filter
     */
    public RateLimitFilter clientConnections(ClientConnections connections) {
        delays.connections(connections);
        return this;
    }

    /**
     * Returns the tokens that the rate-limit filters took for a request they let through, for a layer that refuses
     * the request after them (the Spring Boot starter's advisor, when a handler's rule that reads the method's
     * arguments rejects the call): a rejected call costs the filters' rules nothing. Afterwards the request's
     * {@link #DECISION_ATTRIBUTE} reports the filters' windows with their tokens back, so the headers of the response
     * that refuses the request tell what is left. At most once per request; no effect on a request no filter decided.
     *
     * @param request the request
     */
    public static void refund(ServletRequest request) {
        RequestDecider.refund(request);
    }

    @Override
    public void destroy() {
        delays.close();
        if (context != null) {
            FilterGroup.leave(context, limiter);
        }
        if (limitStore instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception e) {
                System.getLogger(RateLimitFilter.class.getName())
                        .log(System.Logger.Level.WARNING, "Could not close the limit store: " + e);
            }
        }
        if (ownsLimiter && limiter != null) {
            limiter.close();
        }
    }

    /**
     * Configures a filter in code: its URL rules, headers and rejections. Not thread-safe; build once.
     */
    public static final class Builder {

        private final RateLimiter limiter;
        private final List<UrlRule> urlRules = new ArrayList<>();
        private Phase phase = Phase.AFTER_AUTHENTICATION;
        private Set<HeaderStyle> headerStyles = EnumSet.allOf(HeaderStyle.class);
        private RejectionHandler rejectionHandler = new ProblemDetailsRejectionHandler();
        private boolean scanAnnotations;
        private boolean trustContainerForwarding;

        private Builder(RateLimiter limiter) {
            this.limiter = Objects.requireNonNull(limiter, "limiter");
        }

        /**
         * Adds a URL rule: the rule decides the requests whose path matches one of the patterns, whatever their method.
         *
         * @param rule the rule
         * @param paths path patterns within the application, Ant style ({@code /api/**}, {@code /users/*}), at
         *        least one
         * @return this builder
         * @throws InvalidRateLimitConfigurationException naming the rule's source when a pattern is malformed or none
         *         is given
         */
        public Builder urlRule(Rule rule, String... paths) {
            return urlRule(rule, Set.of(), Arrays.asList(Objects.requireNonNull(paths, "paths")));
        }

        /**
         * Adds a URL rule: the rule decides the requests whose path matches one of the patterns and whose method is
         * one of the methods ({@code GET} includes {@code HEAD}).
         *
         * @param rule the rule
         * @param methods HTTP methods, any case, or empty for all
         * @param paths path patterns within the application, Ant style ({@code /api/**}, {@code /users/*}), at
         *        least one
         * @return this builder
         * @throws InvalidRateLimitConfigurationException naming the rule's source when a pattern is malformed or none
         *         is given
         */
        public Builder urlRule(Rule rule, Set<String> methods, List<String> paths) {
            urlRules.add(UrlRule.of(rule, paths, methods, Phase.AFTER_AUTHENTICATION));
            return this;
        }

        /**
         * Says that the filter decides before authentication (registered ahead of the security filters, to limit
         * authentication attempts): none of its rules may then be keyed by the {@code user}, whom nobody knows yet.
         * By default the filter decides after authentication.
         *
         * @return this builder
         */
        public Builder beforeAuthentication() {
            this.phase = Phase.BEFORE_AUTHENTICATION;
            return this;
        }

        /**
         * @param headerStyles the rate-limit headers to write on responses, or none; by default every style
         * @return this builder
         */
        public Builder headers(Set<HeaderStyle> headerStyles) {
            this.headerStyles = Set.copyOf(Objects.requireNonNull(headerStyles, "headerStyles"));
            return this;
        }

        /**
         * @param rejectionHandler writes rejections; by default a {@link ProblemDetailsRejectionHandler} with status
         *        429
         * @return this builder
         */
        public Builder rejectionHandler(RejectionHandler rejectionHandler) {
            this.rejectionHandler = Objects.requireNonNull(rejectionHandler, "rejectionHandler");
            return this;
        }

        /**
         * @param scanAnnotations whether to apply the {@code @RateLimit} annotations of the registered servlets (read
         *        at {@code init}); by default not
         * @return this builder
         */
        public Builder annotations(boolean scanAnnotations) {
            this.scanAnnotations = scanAnnotations;
            return this;
        }

        /**
         * @param trustContainerForwarding whether the {@code ip} key takes the address the request reports (rewritten
         *        by the container's forwarding configuration) instead of the connection's; by default not
         * @return this builder
         */
        public Builder trustContainerForwarding(boolean trustContainerForwarding) {
            this.trustContainerForwarding = trustContainerForwarding;
            return this;
        }

        /**
         * @return the filter, its rules compiled
         * @throws InvalidRateLimitConfigurationException when a rule is invalid for the limiter (an unknown key), or
         *         keyed by the user before authentication
         */
        public RateLimitFilter build() {
            if (phase == Phase.BEFORE_AUTHENTICATION) {
                urlRules.replaceAll(r -> UrlRule.of(r.rule(), r.paths(), r.methods(), phase));
            }
            return new RateLimitFilter(this);
        }
    }
}
