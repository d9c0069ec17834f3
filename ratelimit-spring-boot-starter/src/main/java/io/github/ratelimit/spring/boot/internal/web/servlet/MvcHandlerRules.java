package io.github.ratelimit.spring.boot.internal.web.servlet;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.ratelimit.Rule;
import io.github.ratelimit.servlet.HandlerRules;
import io.github.ratelimit.spring.boot.internal.method.HandlerId;
import io.github.ratelimit.spring.boot.internal.method.HandlerRuleCache;
import jakarta.servlet.http.HttpServletMapping;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.springframework.beans.factory.BeanFactoryUtils;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;
import org.springframework.web.accept.ContentNegotiationManager;
import org.springframework.web.accept.ContentNegotiationStrategy;
import org.springframework.web.accept.FixedContentNegotiationStrategy;
import org.springframework.web.accept.HeaderContentNegotiationStrategy;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.function.support.RouterFunctionMapping;
import org.springframework.web.servlet.handler.AbstractHandlerMapping;
import org.springframework.web.servlet.handler.AbstractHandlerMethodMapping;
import org.springframework.web.servlet.handler.BeanNameUrlHandlerMapping;
import org.springframework.web.servlet.handler.SimpleUrlHandlerMapping;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.RequestMappingInfoHandlerMapping;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.util.ServletRequestPathUtils;
import org.springframework.web.util.pattern.PathPattern;

/**
 * The {@code @RateLimit} rules of the Spring MVC handler method that will serve a request, for the rate-limit
 * filter to decide together with the URL rules: one decision per request.
 *
 * <p>The handler is found as the {@code DispatcherServlet} will find it, through the same handler mappings (every
 * {@link HandlerMapping} bean, in the dispatcher's order: {@link #handlerMappings}), on a view of the
 * request whose attributes are its own: the lookup adds no attribute to the request (a mapping's {@code params}
 * condition reads the request's parameters, as Spring MVC's own lookup does), and the keys of the decision are
 * resolved against that view, which has the attributes the lookup added (path variables). Only requests mapped to
 * one of this context's {@link DispatcherServlet}s are looked up, only when some handler method has rules at all,
 * and only when the request's path matches a path pattern of such a method (so a request no rule is about costs a
 * path parse and a few pattern matches, not a lookup through every mapping; most, a comparison of their first path
 * segment). What a lookup found is remembered by the request's {@link RequestShape} (its method, path, every
 * {@code Accept} and {@code Content-Type} line in order, whether it has a body) when nothing else can change it
 * ({@link #answersByShape}: no mapping condition on parameters, other headers, a version, or of its own; content
 * negotiation by the {@code Accept} header alone; only Spring's own kinds of mappings): the next request of that shape
 * gets the handler's rules, and the attributes the lookup set, without a lookup. A request with no shape (an
 * {@code OPTIONS} request, too many header lines, too long) is looked up every time, and the cache is bounded
 * ({@link #MAX_SHAPES}). A handler whose rules read
 * the method's arguments ({@code #id}, {@code #p0}, {@code #root}) cannot be decided before the arguments exist:
 * the advisor decides those at the call, and returns the filter's tokens when it rejects.
 *
 * <p>When the filter decides a handler's rules, {@link #DECIDED_ATTRIBUTE} tells the advisor, which then lets the
 * call through without deciding again.
 */
public final class MvcHandlerRules implements HandlerRules {

    /** The request attribute naming the {@link HandlerId} whose rules the filter decided for the request. */
    static final String DECIDED_ATTRIBUTE = MvcHandlerRules.class.getName() + ".decided";

    private final ListableBeanFactory beanFactory;
    private final HandlerRuleCache rules;
    private volatile List<HandlerMapping> mappings;
    /**
     * The path patterns of every handler method with rules, or {@code null} when they cannot all be known (a mapping
     * that is not a {@code RequestMappingInfo} one, or patterns matched with {@code AntPathMatcher}): a request whose
     * path matches none of them cannot be served by a handler with rules, and is not looked up.
     */
    private volatile List<PathPattern> patternsWithRules;
    /**
     * The first path segments of those patterns, in lower case, or {@code null} when one does not start with plain
     * text: a request whose first segment is none of them (whatever the patterns' case sensitivity) is answered
     * before any parse or lookup.
     */
    private volatile String[] firstSegments;
    /**
     * Lookups by the request's {@link RequestShape}, when what every mapping finds depends on nothing else
     * ({@link #answersByShape}); else {@code null}. Bounded, so a flood of distinct paths costs misses, not memory.
     */
    private volatile Cache<RequestShape, Looked> lookups;

    /** The most shapes remembered. */
    static final int MAX_SHAPES = 2048;

    /**
     * What a lookup found for one shape: the handler's rules (or {@code null} for none), and the attributes the
     * lookup set on the request view (path variables, the matched pattern), replayed on the next request's view.
     */
    private record Looked(HandlerRuleCache.Entry entry, Map<String, Object> attributes) {}

    /** The servlet names of this application context's dispatcher servlets, whose handlers the mappings find. */
    private volatile Set<String> dispatcherServlets;

    /**
     * @param beanFactory where Spring MVC's handler mappings, the dispatcher servlets and their registrations are
     * @param readsInvocation whether a rule's key needs the method call (its arguments) to be resolved
     */
    MvcHandlerRules(ListableBeanFactory beanFactory, Predicate<Rule> readsInvocation) {
        this.beanFactory = beanFactory;
        this.rules = new HandlerRuleCache(readsInvocation);
    }

    @Override
    public Match rulesFor(HttpServletRequest request) {
        List<HandlerMapping> all = mappings();
        if (all.isEmpty()) {
            return Match.none();
        }
        String[] segments = firstSegments;
        if (segments != null && !mayMatch(request, segments)) {
            return Match.none(); // the cheapest answer for the commonest request: no handler with rules is here
        }
        HttpServletMapping mapping = request.getHttpServletMapping();
        if (mapping == null || !isDispatcherServlet(request, mapping.getServletName())) {
            return Match.none();
        }
        Cache<RequestShape, Looked> cache = lookups;
        RequestShape shape = cache == null ? null : RequestShape.of(request);
        Looked looked = shape == null ? null : cache.getIfPresent(shape);
        if (looked == null) {
            looked = lookUp(request, all);
            if (shape != null) {
                cache.put(shape, looked);
            }
        }
        if (looked.entry() == null) {
            return Match.none();
        }
        OwnAttributes view = new OwnAttributes(request);
        view.own.putAll(looked.attributes());
        request.setAttribute(DECIDED_ATTRIBUTE, looked.entry().handler());
        return new Match(looked.entry().rules(), view);
    }

    private static final Looked NONE = new Looked(null, Map.of());

    /** Finds the handler as the dispatcher servlet will, on a view of the request with attributes of its own. */
    private Looked lookUp(HttpServletRequest request, List<HandlerMapping> all) {
        OwnAttributes view = new OwnAttributes(request);
        RequestPath path;
        try {
            path = ServletRequestPathUtils.parseAndCache(view);
        } catch (RuntimeException e) {
            return NONE; // a path Spring MVC cannot parse: it answers the request itself
        }
        List<PathPattern> candidates = patternsWithRules;
        if (candidates != null && !anyMatches(candidates, path.pathWithinApplication())) {
            return NONE; // a request no rule is about: no lookup
        }
        if (!(handler(view, all) instanceof HandlerMethod method)) {
            return NONE;
        }
        HandlerRuleCache.Entry entry = rules.entry(method.getBeanType(), method.getMethod());
        return entry.rules().isEmpty() ? NONE : new Looked(entry, Collections.unmodifiableMap(new HashMap<>(view.own)));
    }

    /**
     * Whether what every mapping finds depends on the request's {@link RequestShape} alone: mappings of Spring's own of
     * known kinds, no API versioning, content negotiation by the {@code Accept} header alone (not by a query
     * parameter or a strategy of the application's), and no request mapping with conditions on parameters, other
     * headers, a version, or of its own. Read once, from the mappings the context declares.
     */
    static boolean answersByShape(List<HandlerMapping> mappings) {
        for (HandlerMapping mapping : mappings) {
            if (mapping instanceof AbstractHandlerMapping any && any.getApiVersionStrategy() != null) {
                return false; // API versions: a header, a parameter or the path decides
            }
            if (mapping instanceof RequestMappingInfoHandlerMapping methods) {
                if (!methods.getClass().getName().startsWith("org.springframework.")) {
                    return false; // a subclass of the application's may match by anything
                }
                if (methods instanceof RequestMappingHandlerMapping annotated
                        && !negotiatesByAcceptAlone(annotated.getContentNegotiationManager())) {
                    return false;
                }
                for (RequestMappingInfo info : methods.getHandlerMethods().keySet()) {
                    if (!info.getParamsCondition().isEmpty()
                            || !info.getHeadersCondition().isEmpty()
                            || info.getVersionCondition().getVersion() != null
                            || info.getCustomCondition() != null) {
                        return false;
                    }
                }
            } else if (mapping instanceof RouterFunctionMapping functions) {
                if (functions.getRouterFunction() != null) {
                    return false; // its predicates may read anything
                }
            } else if (!(mapping.getClass() == SimpleUrlHandlerMapping.class
                    || mapping.getClass() == BeanNameUrlHandlerMapping.class
                    || mapping.getClass().getName().startsWith("org.springframework.boot.")
                            && mapping.getClass().getSimpleName().startsWith("WelcomePage"))) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether the media types a request accepts, which {@code produces} conditions match, come from its
     * {@code Accept} lines alone (or from nothing the request carries).
     */
    private static boolean negotiatesByAcceptAlone(ContentNegotiationManager manager) {
        for (ContentNegotiationStrategy strategy : manager.getStrategies()) {
            if (strategy.getClass() != HeaderContentNegotiationStrategy.class
                    && strategy.getClass() != FixedContentNegotiationStrategy.class) {
                return false; // a query parameter (favor-parameter), or a strategy that may read anything
            }
        }
        return true;
    }

    private boolean isDispatcherServlet(HttpServletRequest request, String servletName) {
        if (servletName == null) {
            return false;
        }
        if (dispatcherServlets().contains(servletName)) {
            return true;
        }
        // A request no registered servlet serves by that name comes from a mock environment (MockMvc), where the
        // dispatcher servlet is the only one: a container maps every request to a registered servlet.
        return request.getServletContext() != null
                && request.getServletContext().getServletRegistration(servletName) == null;
    }

    /**
     * The names under which Spring Boot registered this context's dispatcher servlets. A dispatcher servlet of
     * another (child) context serves handlers these mappings do not know: its requests are not looked up.
     */
    private Set<String> dispatcherServlets() {
        Set<String> names = dispatcherServlets;
        if (names == null) {
            Set<Object> ours = Collections.newSetFromMap(new IdentityHashMap<>());
            ours.addAll(beanFactory
                    .getBeansOfType(DispatcherServlet.class, false, false)
                    .values());
            Set<String> found = new HashSet<>();
            for (ServletRegistrationBean<?> registration : beanFactory
                    .getBeansOfType(ServletRegistrationBean.class, false, false)
                    .values()) {
                if (ours.contains(registration.getServlet())) {
                    found.add(registration.getServletName());
                }
            }
            names = Set.copyOf(found);
            dispatcherServlets = names;
        }
        return names;
    }

    /** Spring MVC's handler mappings, or none when no handler method has rules (nothing to look up then). */
    private List<HandlerMapping> mappings() {
        List<HandlerMapping> m = mappings;
        if (m == null) {
            List<HandlerMapping> found = handlerMappings(beanFactory);
            m = anyHandlerMethodHasRules(found) ? found : List.of();
            List<PathPattern> patterns = patternsWithRules(m);
            patternsWithRules = patterns;
            firstSegments = firstSegments(patterns);
            lookups = answersByShape(m)
                    ? Caffeine.newBuilder().maximumSize(MAX_SHAPES).build()
                    : null;
            mappings = m;
        }
        return m;
    }

    /**
     * Spring MVC's handler mappings in the order the dispatcher servlet asks them: every {@link HandlerMapping} bean
     * of the context and its ancestors, sorted by {@code @Order} and {@code Ordered}. (Spring Framework 7.1 removes
     * the {@code HandlerMappingIntrospector} that used to give this list.)
     *
     * @param beanFactory the application's bean factory
     * @return the mappings, or none when Spring MVC declares none
     */
    static List<HandlerMapping> handlerMappings(ListableBeanFactory beanFactory) {
        List<HandlerMapping> found = new ArrayList<>(
                BeanFactoryUtils.beansOfTypeIncludingAncestors(beanFactory, HandlerMapping.class, true, false)
                        .values());
        AnnotationAwareOrderComparator.sort(found);
        return List.copyOf(found);
    }

    private static boolean anyHandlerMethodHasRules(List<HandlerMapping> mappings) {
        return mappings.stream()
                .filter(m -> m instanceof AbstractHandlerMethodMapping<?>)
                .flatMap(m -> ((AbstractHandlerMethodMapping<?>) m).getHandlerMethods().values().stream())
                .anyMatch(h -> HandlerRuleCache.hasRules(h.getBeanType(), h.getMethod()));
    }

    /** @return the path patterns of the handler methods with rules, or {@code null} when not all can be known */
    private static List<PathPattern> patternsWithRules(List<HandlerMapping> mappings) {
        List<PathPattern> patterns = new ArrayList<>();
        for (HandlerMapping mapping : mappings) {
            if (!(mapping instanceof AbstractHandlerMethodMapping<?> methods)) {
                continue; // finds no handler method, so no handler with rules
            }
            for (Map.Entry<?, HandlerMethod> e : methods.getHandlerMethods().entrySet()) {
                HandlerMethod h = e.getValue();
                if (!HandlerRuleCache.hasRules(h.getBeanType(), h.getMethod())) {
                    continue;
                }
                if (!(e.getKey() instanceof RequestMappingInfo info) || info.getPathPatternsCondition() == null) {
                    return null;
                }
                for (PathPattern pattern : info.getPathPatternsCondition().getPatterns()) {
                    if (pattern.getPatternString().isEmpty()) {
                        return null; // matches what the mapping's own rules say: leave it to the lookup
                    }
                    patterns.add(pattern);
                }
            }
        }
        return List.copyOf(patterns);
    }

    /**
     * @return the lower-case first segments of the patterns, or {@code null} when a pattern's first segment is not
     *         plain text (a variable, a wildcard, an empty segment) or the patterns are not all known
     */
    static String[] firstSegments(List<PathPattern> patterns) {
        if (patterns == null) {
            return null;
        }
        Set<String> segments = new LinkedHashSet<>();
        for (PathPattern pattern : patterns) {
            String text = pattern.getPatternString();
            int end = text.indexOf('/', 1);
            String first = end < 0 ? text.substring(Math.min(1, text.length())) : text.substring(1, end);
            if (!text.startsWith("/") || first.isEmpty() || first.chars().anyMatch(c -> "{}*?\\".indexOf(c) >= 0)) {
                return null;
            }
            segments.add(first.toLowerCase(Locale.ROOT));
        }
        return segments.toArray(String[]::new);
    }

    /**
     * Whether the request's first path segment within the application is one of {@code segments} (in any case, so
     * whatever the patterns' case sensitivity), without allocating. Also true whenever only Spring's parse can tell:
     * a servlet mapped by path prefix (Spring matches what follows the prefix), or a segment Spring would decode or
     * strip ({@code %}, {@code ;}).
     */
    static boolean mayMatch(HttpServletRequest request, String[] segments) {
        String uri = request.getRequestURI();
        String context = request.getContextPath();
        int start = context == null ? 0 : context.length();
        if (request.getPathInfo() != null || uri == null || uri.length() <= start || uri.charAt(start) != '/') {
            return true;
        }
        int from = start + 1;
        int end = uri.indexOf('/', from);
        if (end < 0) {
            end = uri.length();
        }
        for (int i = from; i < end; i++) {
            char c = uri.charAt(i);
            if (c == '%' || c == ';') {
                return true;
            }
        }
        int length = end - from;
        for (String segment : segments) {
            if (segment.length() == length && uri.regionMatches(true, from, segment, 0, length)) {
                return true;
            }
        }
        return false;
    }

    private static boolean anyMatches(List<PathPattern> patterns, PathContainer path) {
        for (PathPattern pattern : patterns) {
            if (pattern.matches(path)) {
                return true;
            }
        }
        return false;
    }

    /** The handler the dispatcher servlet will choose, found on a view of the request with attributes of its own. */
    private static Object handler(OwnAttributes view, List<HandlerMapping> mappings) {
        try {
            for (HandlerMapping mapping : mappings) {
                HandlerExecutionChain chain = mapping.getHandler(view);
                if (chain != null) {
                    return chain.getHandler();
                }
            }
        } catch (Exception e) {
            // Spring MVC answers this request itself (405, 406, 400): no handler method runs.
        }
        return null;
    }

    /** A request whose attribute changes stay in the wrapper. */
    private static final class OwnAttributes extends HttpServletRequestWrapper {
        private static final Object REMOVED = new Object();
        final Map<String, Object> own = new HashMap<>();

        OwnAttributes(HttpServletRequest request) {
            super(request);
        }

        @Override
        public Object getAttribute(String name) {
            Object value = own.get(name);
            if (value == null) {
                return super.getAttribute(name);
            }
            return value == REMOVED ? null : value;
        }

        @Override
        public Enumeration<String> getAttributeNames() {
            Set<String> names = new LinkedHashSet<>(Collections.list(super.getAttributeNames()));
            own.forEach((name, value) -> {
                if (value == REMOVED) {
                    names.remove(name);
                } else {
                    names.add(name);
                }
            });
            return Collections.enumeration(names);
        }

        @Override
        public void setAttribute(String name, Object value) {
            own.put(name, value == null ? REMOVED : value);
        }

        @Override
        public void removeAttribute(String name) {
            own.put(name, REMOVED);
        }
    }
}
