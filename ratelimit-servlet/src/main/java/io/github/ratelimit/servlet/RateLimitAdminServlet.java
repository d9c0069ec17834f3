package io.github.ratelimit.servlet;

import io.github.ratelimit.internal.admin.AdminInput;
import io.github.ratelimit.internal.admin.AdminViews;
import io.github.ratelimit.internal.admin.KeyOperations;
import io.github.ratelimit.internal.admin.PlanOperations;
import io.github.ratelimit.internal.admin.RejectedKeySummary;
import io.github.ratelimit.internal.admin.RuleOperations;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.redis.LimitAdmin;
import io.github.ratelimit.support.LogText;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.Charset;
import java.nio.charset.IllegalCharsetNameException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The operations on a live system for a {@code web.xml} application, as JSON over HTTP: what the Spring Boot
 * starter's Actuator endpoints ({@code ratelimits}, {@code ratelimitkeys} and the store's health) give Boot
 * applications, with the same checks, messages and answers. It serves the {@link RateLimitFilter}s of its application
 * that are configured from a rules file (every phase's, when the filter is declared once per phase).
 *
 * <h2>In {@code web.xml}</h2>
 * <pre>{@code
 * <servlet>
 *   <servlet-name>rateLimitAdmin</servlet-name>
 *   <servlet-class>io.github.ratelimit.servlet.RateLimitAdminServlet</servlet-class>
 * </servlet>
 * <servlet-mapping>
 *   <servlet-name>rateLimitAdmin</servlet-name>
 *   <url-pattern>/ratelimit-admin/*</url-pattern>
 * </servlet-mapping>
 * <security-constraint>
 *   <web-resource-collection>
 *     <web-resource-name>rate-limit admin</web-resource-name>
 *     <url-pattern>/ratelimit-admin/*</url-pattern>
 *   </web-resource-collection>
 *   <auth-constraint><role-name>ratelimit-admin</role-name></auth-constraint>
 * </security-constraint>
 * }</pre>
 *
 * <p>Protect the mapping with the container's security too. The servlet answers only callers the container has
 * authenticated and that are in its role (init-param {@code role}, default {@value AdminAccess#DEFAULT_ROLE};
 * {@code **} for any authenticated caller), with 403 otherwise, so a mapping left unprotected exposes nothing;
 * init-param {@code require-authentication=false} lifts both for an application protected otherwise (a network the
 * public cannot reach). Keys identify people, so the most-rejected keys read {@value AdminAccess#MASK} unless
 * init-param {@code show-values} is {@code always}, or {@code when-authorized} for an authenticated caller in one of
 * {@code show-values-roles} (any authenticated caller when none is given), as the starter's
 * {@code management.endpoint.ratelimits.show-values} and {@code roles}. Init-param {@code filter-name} names the
 * filter whose admin and limit store to use (default: the first filter that started; every filter of the application
 * knows every rule of its rules file).
 *
 * <h2>Paths</h2>
 * <ul>
 *   <li>{@code GET /}: the rules, each filter's store (type and, for Redis, its breaker and counters, and with
 *       Micrometer the 99th percentile of its recent latency) and the 20 most-rejected keys;
 *   <li>{@code GET /rejected?count=}: the most-rejected keys, 1 to 1,000 (default 20), most first;
 *   <li>{@code GET /health}: {@code UP}, or {@code DEGRADED} (with 503) while a Redis store's breaker is open, with
 *       each store's breaker, failures and short-circuited calls;
 *   <li>{@code GET /keys/{rule}}: a page of the rule's per-key limits ({@code ?cursor=&count=}); with {@code ?key=},
 *       one key's entry; {@code GET /keys/{rule}/{key}}: one key's entry;
 *   <li>{@code POST /keys/{rule}/{key}} with exactly one of the form fields {@code limits=5/1s,100/1m},
 *       {@code plan=gold} or {@code reset=true}: sets the key's limits or plan, or forgets what it has counted on
 *       every instance; {@code POST /keys/{rule}} with the key in the field {@code key} does the same for any key;
 *   <li>{@code DELETE /keys/{rule}/{key}} or {@code DELETE /keys/{rule}?key=}: back to the rule's limits;
 *   <li>{@code GET /rules/{rule}}: the rule's own limits and mode, as configured and as changed at run time;
 *       {@code POST /rules/{rule}} with {@code limits=2/1s} and/or {@code mode=SHADOW}: changes them (checked as at
 *       start-up; kept in Redis for every instance with a limit store, else in this instance only, which the
 *       answer's {@code appliesTo} says); {@code DELETE /rules/{rule}}: back to the configured ones;
 *   <li>{@code GET /plans/{plan}}, {@code POST /plans/{plan}} with {@code limits=100/1m}, {@code DELETE /plans/{plan}}:
 *       the same for a configured plan's limits, wherever the plan is used (keys assigned it, calls naming it).
 * </ul>
 * A key in the path is a key as decisions show it, or the {@code address} a listing gives (which works for any key);
 * fields come as query parameters or, for a POST, an {@code application/x-www-form-urlencoded} body (UTF-8 unless it
 * names another charset). A {@code rule} or {@code key} parameter naming another than the path is refused. A change
 * (POST, DELETE) a browser sends from a page of another site ({@code Origin} not this host, or {@code Sec-Fetch-Site}
 * cross-site or same-site) is refused with 403, so a page elsewhere cannot post a form with the credentials the
 * browser keeps for this one. Answers: 200 with JSON; 400 for bad input (a body on another method than POST
 * included), 404 for an unknown path, rule (naming the known ones) or entry, or per-key limits not kept, 405 for
 * another method (with {@code Allow}), 415 for a body that is not a form or a charset not known here, 503 while no
 * filter has started or Redis cannot be reached, each with an RFC 9457 {@code application/problem+json} body. A
 * change answers with the entry as it wrote it. Changes and resets are logged with the caller's name.
 */
public class RateLimitAdminServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    /** The path that takes a key in the body or query, for messages. */
    private static final String KEYS_PATH = "…/keys/{rule}";

    private static final String FORM = "application/x-www-form-urlencoded";

    /** The filter whose admin to use, or {@code null} for the first that started. */
    private @Nullable String filterName;
    /** Who may call, and who sees the keys; read from the init-params. */
    private AdminAccess access = AdminAccess.DEFAULTS;

    /**
     * Creates the servlet; the container configures it from its init-params.
     */
    public RateLimitAdminServlet() {}

    /**
     * Reads the init-params {@code filter-name}, {@code require-authentication}, {@code role}, {@code show-values}
     * and {@code show-values-roles}.
     *
     * @throws ServletException when one of them has a value it cannot take, naming it and how to fix it
     */
    @Override
    public void init() throws ServletException {
        String name = getInitParameter("filter-name");
        filterName = name == null || name.isBlank() ? null : name.trim();
        try {
            access = AdminAccess.of(this::getInitParameter);
        } catch (IllegalArgumentException e) {
            throw new ServletException("RateLimitAdminServlet '" + getServletName() + "': " + e.getMessage(), e);
        }
    }

    /**
     * Answers every method on every path: see the class's description.
     *
     * @param request the request
     * @param response the response
     * @throws IOException when the client cannot be written to
     */
    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        AdminAnswers answers = new AdminAnswers(request, response);
        String refusal = access.refusal(request);
        if (refusal != null) {
            answers.problem(403, refusal);
            return;
        }
        AdminRoute route = AdminRoute.of(request.getPathInfo());
        if (route == null) {
            answers.problem(404, "no such rate-limit admin path; the paths are " + AdminRoute.PATHS);
            return;
        }
        if (!route.allows(request.getMethod())) {
            response.setHeader("Allow", route.allow());
            answers.problem(405, "this path answers " + route.allow());
            return;
        }
        if (!request.getMethod().equals("GET") && !request.getMethod().equals("HEAD") && crossSite(request)) {
            answers.problem(
                    403,
                    "a change sent by a browser from another site is refused (Origin or "
                            + "Sec-Fetch-Site says so): send it from a tool such as curl, or a page of this site");
            return;
        }
        if (hasBody(request) && !request.getMethod().equals("POST")) {
            // Containers parse a form body for POST only, and a DELETE's content has no meaning (RFC 9110, 9.3.5):
            // read as nothing, its key would be missing, or another than it names would be removed.
            answers.problem(
                    400,
                    request.getMethod() + " takes its fields in the query, e.g. DELETE " + KEYS_PATH
                            + "?key=…; its body is not read");
            return;
        }
        if (hasBody(request) && !isForm(request)) {
            answers.problem(
                    415,
                    "give the fields as a form (" + FORM + ") or in the query, e.g. "
                            + "limits=5/1s,100/1m, plan=gold or reset=true");
            return;
        }
        if (!knownCharset(request.getCharacterEncoding())) {
            answers.problem(
                    415,
                    "the charset " + LogText.quote(request.getCharacterEncoding()) + " is not known "
                            + "here: send the form in UTF-8 (or name no charset)");
            return;
        }
        FilterGroup.Member member = member();
        if (member == null) {
            answers.problem(
                    503,
                    filterName == null
                            ? "no RateLimitFilter configured from a rules file has started " + "in this application"
                            : "no RateLimitFilter named '" + filterName + "' has started");
            return;
        }
        if (request.getCharacterEncoding() == null) {
            request.setCharacterEncoding("UTF-8"); // a form's fields, as browsers and curl --data-urlencode send them
        }
        try {
            serve(route, new Parameters(request), member, answers, request.getRemoteUser(), access.showsKeys(request));
        } catch (IllegalArgumentException e) {
            answers.problem(400, e.getMessage());
        }
    }

    private void serve(
            AdminRoute route,
            Parameters p,
            FilterGroup.Member member,
            AdminAnswers answers,
            String actor,
            boolean showKeys)
            throws IOException {
        switch (route.kind()) {
            case SUMMARY -> answers.json(200, summary(member.admin(), showKeys));
            case REJECTED ->
                answers.json(
                        200,
                        Map.of("topRejectedKeys", rejected(AdminInput.count("count", p.get("count"), 20), showKeys)));
            case HEALTH -> health(answers);
            case RULE -> answers.write(rule(route, p, new RuleOperations(member.admin()), actor));
            case PLAN -> answers.write(plan(route, p, new PlanOperations(member.admin()), actor));
            case RULE_KEYS, KEY ->
                answers.write(keys(route, p, new KeyOperations(member.admin(), (rule, key) -> p.checkSelectors(route)))
                        .apply(p.method(), actor));
        }
    }

    private Map<String, Object> summary(LimitAdmin admin, boolean showKeys) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put(
                "rules",
                admin.ruleNames().stream()
                        .map(admin::rule)
                        .map(r -> AdminViews.rule(r, admin.ruleLimits(r.name())))
                        .toList());
        body.put("plans", new PlanOperations(admin).list());
        List<Map<String, Object>> stores = new ArrayList<>();
        for (FilterGroup.Member m : FilterGroup.members(getServletContext())) {
            Map<String, Object> store = new LinkedHashMap<>();
            store.put("filter", m.filter());
            // With Micrometer, the latency the filters' metrics record in its global registry (as Boot's endpoint).
            store.putAll(AdminViews.store(
                    m.store(), RulesFile.micrometerPresent() ? MicrometerBinding::storeLatencyP99 : null));
            stores.add(store);
        }
        body.put("stores", stores);
        body.put("topRejectedKeys", rejected(20, showKeys));
        return body;
    }

    private List<Map<String, Object>> rejected(int count, boolean showKeys) {
        List<Map<String, Object>> entries = new ArrayList<>();
        for (RejectedKeySummary.Entry e :
                FilterGroup.rejectedKeys(getServletContext()).top(count)) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("rule", e.rule());
            entry.put("key", showKeys ? e.key() : AdminAccess.MASK);
            entry.put("count", e.count());
            entry.put("error", e.error());
            entries.add(entry);
        }
        return entries;
    }

    private void health(AdminAnswers answers) throws IOException {
        String status = AdminViews.UP;
        List<Map<String, Object>> stores = new ArrayList<>();
        for (FilterGroup.Member m : FilterGroup.members(getServletContext())) {
            Map<String, Object> store = new LinkedHashMap<>();
            store.put("filter", m.filter());
            store.put("type", m.store().getClass().getSimpleName());
            if (m.store() instanceof JedisBucketStore redis) {
                JedisBucketStore.Stats stats = redis.stats();
                String storeStatus = AdminViews.status(stats);
                store.put("status", storeStatus);
                store.putAll(AdminViews.healthDetails(stats));
                status = AdminViews.UP.equals(storeStatus) ? status : AdminViews.DEGRADED;
            } else {
                store.put("status", AdminViews.UP);
            }
            stores.add(store);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", status);
        body.put("stores", stores);
        answers.json(AdminViews.UP.equals(status) ? 200 : 503, body);
    }

    private static KeyOperations.Answer rule(AdminRoute route, Parameters p, RuleOperations operations, String actor) {
        String rule = route.rule();
        if (rule == null) {
            throw new IllegalArgumentException("no rule named: the path is …/rules/{rule}");
        }
        Object named = p.get("rule");
        if (named != null) {
            AdminInput.sameAsPath("rule", rule, AdminInput.text("rule", named), "…/rules/{rule}");
        }
        return switch (p.method()) {
            case "POST" -> operations.change(rule, p.get("limits"), p.get("mode"), actor);
            case "DELETE" -> operations.restore(rule, actor);
            default -> operations.show(rule);
        };
    }

    private static KeyOperations.Answer plan(AdminRoute route, Parameters p, PlanOperations operations, String actor) {
        String plan = route.rule();
        if (plan == null) {
            throw new IllegalArgumentException("no plan named: the path is …/plans/{plan}");
        }
        return switch (p.method()) {
            case "POST" -> operations.change(plan, p.get("limits"), actor);
            case "DELETE" -> operations.restore(plan, actor);
            default -> operations.show(plan);
        };
    }

    /** An operation on keys, by method. */
    @FunctionalInterface
    private interface KeyOperation {
        KeyOperations.Answer apply(String method, String actor);
    }

    private static KeyOperation keys(AdminRoute route, Parameters p, KeyOperations operations) {
        String rule = route.rule();
        if (route.key() == null) {
            return (method, actor) -> switch (method) {
                case "POST" ->
                    operations.changeKey(rule, p.get("key"), p.get("limits"), p.get("plan"), p.get("reset"), actor);
                case "DELETE" -> operations.removeKey(rule, p.get("key"), actor);
                default -> operations.entries(rule, p.get("key"), p.get("cursor"), p.get("count"));
            };
        }
        String key = route.key();
        return (method, actor) -> switch (method) {
            case "POST" -> operations.change(rule, key, p.get("limits"), p.get("plan"), p.get("reset"), actor);
            case "DELETE" -> operations.remove(rule, key, actor);
            default -> operations.entry(rule, key);
        };
    }

    private FilterGroup.@Nullable Member member() {
        List<FilterGroup.Member> members = FilterGroup.members(getServletContext());
        return members.stream()
                .filter(m -> filterName == null || m.filter().equals(filterName))
                .findFirst()
                .orElse(null);
    }

    /**
     * Whether a browser sent the request from a page of another site: a form posted there would carry the credentials
     * the browser keeps for this one (HTTP Basic, a session cookie), and a form is a request browsers send across
     * sites without asking. Tools such as curl send neither header.
     */
    static boolean crossSite(HttpServletRequest request) {
        String fetchSite = request.getHeader("Sec-Fetch-Site");
        if (fetchSite != null && !fetchSite.equals("same-origin") && !fetchSite.equals("none")) {
            return true;
        }
        String origin = request.getHeader("Origin");
        if (origin == null) {
            return false;
        }
        String host = request.getHeader("Host");
        try {
            URI uri = new URI(origin);
            if (uri.getHost() == null || host == null) {
                return true; // "null" (a sandboxed page, a redirect), or no Host to compare it with
            }
            String authority = uri.getPort() < 0 ? uri.getHost() : uri.getHost() + ":" + uri.getPort();
            return !authority.equalsIgnoreCase(host.trim());
        } catch (URISyntaxException e) {
            return true;
        }
    }

    private static boolean hasBody(HttpServletRequest request) {
        return request.getContentLengthLong() > 0 || request.getHeader("Transfer-Encoding") != null;
    }

    /** Whether the body is a form the container parses: exactly that media type (parameters such as a charset aside). */
    private static boolean isForm(HttpServletRequest request) {
        String type = request.getContentType();
        int parameters = type == null ? -1 : type.indexOf(';');
        return type != null
                && (parameters < 0 ? type : type.substring(0, parameters))
                        .trim()
                        .equalsIgnoreCase(FORM);
    }

    /** Whether the parameters can be decoded as sent: no charset named (UTF-8 is taken), or one this JVM has. */
    private static boolean knownCharset(String charset) {
        try {
            return charset == null || Charset.isSupported(charset);
        } catch (IllegalCharsetNameException e) {
            return false;
        }
    }

    /** The request's parameters as the key operations take them: one string, or a list when given more than once. */
    private record Parameters(HttpServletRequest request) {

        String method() {
            return request.getMethod().equals("HEAD") ? "GET" : request.getMethod();
        }

        @Nullable
        Object get(String name) {
            String[] values;
            try {
                values = request.getParameterValues(name);
            } catch (IllegalStateException e) {
                // Tomcat refuses parameters it cannot parse (bad %-encoding, too many, a body over maxPostSize).
                throw new IllegalArgumentException("the request's parameters cannot be read: " + e.getMessage());
            }
            return values == null ? null : values.length == 1 ? values[0] : List.of(values);
        }

        /** Refuses a {@code rule} or {@code key} parameter that names another than the path. */
        void checkSelectors(AdminRoute route) {
            Object rule = get("rule");
            if (rule != null) {
                AdminInput.sameAsPath("rule", route.rule(), AdminInput.text("rule", rule), KEYS_PATH);
            }
            Object key = get("key");
            if (route.key() != null && key != null) {
                AdminInput.sameAsPath("key", route.key(), AdminInput.text("key", key), KEYS_PATH);
            }
        }
    }
}
