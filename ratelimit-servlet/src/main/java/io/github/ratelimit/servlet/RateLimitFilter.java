package io.github.ratelimit.servlet;


import io.github.ratelimit.CallTooLargeException;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.RateLimitHeaders.HeaderStyle;
import io.github.ratelimit.RateLimitHeaders;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.config.RateLimitSettings;
import io.github.ratelimit.internal.config.RuleNameChecks;
import io.github.ratelimit.internal.web.Phase;
import io.github.ratelimit.internal.web.UrlGuards;
import io.github.ratelimit.internal.web.UrlRule;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

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
 * when the filter can tell: through {@link #clientConnections} (the Spring Boot starter's, on Tomcat), or the
 * container's {@code AsyncListener} events. A {@code SHADOW} rule's would-be rejection is logged and the request
 * served.
 *
 * <p>Rules that count failures ({@code count=failures}) keep the tokens of failed attempts only: a 401 response,
 * a request marked with {@link #FAILED_ATTEMPT_ATTRIBUTE}, or a handler whose own rules count failures that
 * throws. A 404, a 403 or a server error elsewhere costs them nothing.
 *
 * <p>For programmatic registration (the Spring Boot starter uses it), see {@link #RateLimitFilter(RateLimiter,
 * List, Set, RejectionHandler, boolean)}. Thread-safe after {@code init}. {@link #destroy()} closes the limiter if
 * the filter built it.
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

    private static final java.util.concurrent.atomic.AtomicInteger INSTANCES = new java.util.concurrent.atomic.AtomicInteger();

    private static final String DEFAULT_CONFIG = "/WEB-INF/ratelimit.properties";
    /** Every decision the rate-limit filters took on a request, for {@link #refund}. */
    private static final String DECISIONS_ATTRIBUTE = RateLimitFilter.class.getName() + ".decisions";

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

    private RateLimiter limiter;
    private boolean ownsLimiter;
    /** The application's context, once this filter joined its {@link FilterGroup}; {@code null} before. */
    private jakarta.servlet.ServletContext context;
    private io.github.ratelimit.LimitProvider limitStore;
    private List<UrlRule> urlRules;
    private Set<HeaderStyle> headerStyles;
    private RejectionHandler rejectionHandler;
    private boolean scanAnnotations;
    private boolean enabled = true;
    private boolean trustContainerForwarding;
    /** Per-key limits of the rules file whose rule names to check once every rule is known, or {@code null}. */
    private io.github.ratelimit.internal.MapLimitProvider keyLimitsToCheck;
    private java.util.function.Consumer<List<Rule>> planRulesCheck = known -> { };
    /** Every URL rule of the rules file, whichever phase this instance decides. */
    private List<UrlRule> allUrlRules = List.of();
    private volatile boolean warnedAboutRemoteIp;
    /** Marks the requests this filter instance decided, so another instance (the other phase) still decides. */
    private final String decidedAttribute = RateLimitFilter.class.getName() + ".decided." + INSTANCES.incrementAndGet();

    /**
     * How long a request waits out a {@code SOFT} delay before the filter first asks {@link ClientConnections}
     * whether its client is still there, and how often it asks after that: a quarter of a second, so a client that
     * goes away gives its tokens back within about that long, for at most one non-blocking check per waiting request
     * and interval (the {@code max-waiting} caps bound the waiting requests).
     */
    public static final java.time.Duration CONNECTION_CHECK_INTERVAL = java.time.Duration.ofMillis(250);

    /** Waits out SOFT delays, ending the wait of a request whose client has gone. */
    private final SoftDelays delays = new SoftDelays(CONNECTION_CHECK_INTERVAL);

    /** Where the rules of a request's handler come from: the servlets' annotations, a framework's handlers. */
    private final List<HandlerRules> handlerRules = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** The guards of the URL rules and handlers' rules, per combination. */
    private UrlGuards<Guard> guards;

    /**
     * For {@code web.xml}: configured in {@link #init(FilterConfig)} from the rules file.
     */
    public RateLimitFilter() {
    }

    /**
     * For programmatic registration.
     *
     * @param limiter the limiter; not closed by the filter
     * @param urlRules the URL rules
     * @param headerStyles the rate-limit headers to write
     * @param rejectionHandler writes rejections
     * @param scanAnnotations whether to apply the {@code @RateLimit} annotations of registered servlets
     * @throws InvalidRateLimitConfigurationException when a rule is invalid for the limiter (an unknown key)
     */
    public RateLimitFilter(RateLimiter limiter, List<UrlRule> urlRules, Set<HeaderStyle> headerStyles,
                           RejectionHandler rejectionHandler, boolean scanAnnotations) {
        this(limiter, urlRules, headerStyles, rejectionHandler, scanAnnotations, false);
    }

    /**
     * For programmatic registration.
     *
     * @param limiter the limiter; not closed by the filter
     * @param urlRules the URL rules
     * @param headerStyles the rate-limit headers to write
     * @param rejectionHandler writes rejections
     * @param scanAnnotations whether to apply the {@code @RateLimit} annotations of registered servlets
     * @param trustContainerForwarding whether the {@code ip} key takes the address the request reports (rewritten
     *        by the container's forwarding configuration) instead of the connection's
     * @throws InvalidRateLimitConfigurationException when a rule is invalid for the limiter (an unknown key)
     */
    public RateLimitFilter(RateLimiter limiter, List<UrlRule> urlRules, Set<HeaderStyle> headerStyles,
                           RejectionHandler rejectionHandler, boolean scanAnnotations, boolean trustContainerForwarding) {
        this.limiter = Objects.requireNonNull(limiter, "limiter");
        this.urlRules = List.copyOf(urlRules);
        this.headerStyles = headerStyles.isEmpty() ? EnumSet.noneOf(HeaderStyle.class) : EnumSet.copyOf(headerStyles);
        this.rejectionHandler = Objects.requireNonNull(rejectionHandler, "rejectionHandler");
        this.scanAnnotations = scanAnnotations;
        this.trustContainerForwarding = trustContainerForwarding;
        this.ownsLimiter = false;
        this.guards = new UrlGuards<>(limiter, this.urlRules, guard -> guard);
    }

    @Override
    public void init(FilterConfig config) throws ServletException {
        String name = config.getFilterName();
        try {
            if (limiter == null) {
                configureFrom(config);
            }
            // Compile every rule now, so an unknown key or a name clash fails deployment rather than a request (the
            // programmatic constructor compiled its rules already).
            if (guards == null) {
                guards = new UrlGuards<>(limiter, urlRules, guard -> guard);
            }
            if (scanAnnotations) {
                ServletAnnotationRules servlets = ServletAnnotationRules.scan(config.getServletContext());
                servlets.all().forEach(limiter::guard);
                handlerRules.add(servlets);
            }
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

    private void configureFrom(FilterConfig config) {
        String location = config.getInitParameter("config");
        if (location == null || location.isBlank()) {
            location = DEFAULT_CONFIG;
        }
        Map<String, String> properties = RulesFile.read(config, location.trim());
        ClassLoader loader = config.getServletContext().getClassLoader();
        RulesFile.Settings settings = RulesFile.parse(properties, location, loader, FilterGroup.rejectedKeys(config));
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
            this.planRulesCheck = only == Phase.AFTER_AUTHENTICATION ? planRulesCheck : known -> { };
        }
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        if (!enabled || !(req instanceof HttpServletRequest request) || !(res instanceof HttpServletResponse response)) {
            chain.doFilter(req, res);
            return;
        }
        if (request.getAttribute(decidedAttribute) instanceof Decided decided) {
            // Decided by this filter already: the async re-dispatch after its delay, or a forward, an error page.
            if (decided.claimChain()) {
                proceedOrReject(request, response, chain, decided);
            } else {
                chain.doFilter(req, res);
            }
            return;
        }
        Matched matched = Matched.of(request, handlerRules, guards);
        if (matched == null) {
            chain.doFilter(req, res);
            return;
        }
        Guard guard = matched.guard();
        if (!trustContainerForwarding && !warnedAboutRemoteIp && HttpRequestContext.containerRewroteAddress(request)) {
            warnedAboutRemoteIp = true;
            HttpRequestContext.warnContainerRewritesAddresses();
        }
        CompletableFuture<Decision> future;
        try {
            future = guard.acquireAsync(new HttpRequestContext(matched.view(), trustContainerForwarding));
        } catch (CallTooLargeException e) { // no window could ever hold the request: 413, nothing taken here
            refund(request);   // nor by the other phase's filter
            ProblemDetailsRejectionHandler.tooLarge(request, response, e);
            return;
        }
        if (future.isDone()) {
            Decided decided = record(request, response, matched, future.join());
            decided.claimChain();
            proceedOrReject(request, response, chain, decided);
            return;
        }
        if (request.isAsyncSupported() && request.getDispatcherType() == DispatcherType.REQUEST) {
            // The async dispatch that resumes the request may not pass this filter (web.xml maps it to REQUEST
            // only): a rejection is answered here, and the decision settled when the request ends, whichever does.
            Decided.AfterWait afterWait = new Decided.AfterWait(guard);
            delays.awaitAsync(request, response, future, afterWait, decision -> {
                Decided decided = afterWait.decided(decision, d -> record(request, response, matched, d));
                if (decision.outcome() != Outcome.REJECTED) {
                    return null;
                }
                decided.claimChain();
                return () -> rejectionHandler.reject(request, response, decision);
            });
            return;
        }
        // No async support: this thread waits.
        Decision decision = delays.awaitBlocking(request, response, future, guard);
        if (decision == null) {
            return; // the client went away while it waited: its tokens are back, and nobody reads an answer
        }
        Decided decided = record(request, response, matched, decision);
        decided.claimChain();
        proceedOrReject(request, response, chain, decided);
    }

    /** Records this filter's decision on the request (and in the combined decision attribute), and the headers. */
    private Decided record(HttpServletRequest request, HttpServletResponse response, Matched matched,
                           Decision decision) {
        Decided decided = new Decided(matched.guard(), decision, matched.handlerCountsFailures());
        request.setAttribute(decidedAttribute, decided);
        if (decision.permitted() && !decision.verdicts().isEmpty()) {
            Decided.Decisions all = request.getAttribute(DECISIONS_ATTRIBUTE) instanceof Decided.Decisions d ? d
                    : new Decided.Decisions();
            all.add(decided);
            request.setAttribute(DECISIONS_ATTRIBUTE, all);
        }
        Decision shown = request.getAttribute(DECISION_ATTRIBUTE) instanceof Decision earlier
                ? earlier.combine(decision) : decision;
        request.setAttribute(DECISION_ATTRIBUTE, shown);
        RateLimitHeaders.write(shown, headerStyles, response::setHeader);
        return decided;
    }

    private void proceedOrReject(HttpServletRequest request, HttpServletResponse response, FilterChain chain,
                                 Decided decided) throws IOException, ServletException {
        Decision decision = decided.decision;
        if (decision.outcome() == Outcome.REJECTED) {
            rejectionHandler.reject(request, response, decision);
            return;
        }
        decided.proceed(request, response, chain);
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
     * connection, to end the wait and return the request's tokens (the Spring Boot starter sets Tomcat's). Without
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
        if (request.getAttribute(DECISIONS_ATTRIBUTE) instanceof Decided.Decisions decisions) {
            Decision shown = decisions.refund();
            if (shown != null) {
                request.setAttribute(DECISION_ATTRIBUTE, shown);
            }
        }
    }

    /**
     * @return the limiter deciding for this filter (for diagnostics)
     */
    public RateLimiter limiter() {
        return limiter;
    }

    /**
     * @return the URL rules
     */
    public List<UrlRule> urlRules() {
        return urlRules;
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
                System.getLogger(RateLimitFilter.class.getName()).log(System.Logger.Level.WARNING,
                        "Could not close the limit store: " + e);
            }
        }
        if (ownsLimiter && limiter != null) {
            limiter.close();
        }
    }
}
