package io.github.ratelimit.servlet;

import io.github.ratelimit.RequestContext;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletRequestWrapper;
import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;
import java.util.Arrays;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A {@link RequestContext} over a servlet request: what the filter and the Spring starter's method advisor both
 * decide with. Reads lazily, only what the rules' keys ask for. Not thread-safe, like the request.
 *
 * <h2>The connection's view, beneath wrappers</h2>
 * The client address and the headers are read from the request as the container received it: beneath every
 * {@link ServletRequestWrapper}. A wrapper that replaces the address with a forwarding header's value (Spring's
 * {@code ForwardedHeaderFilter}, Tomcat's {@code RemoteIpFilter}, an application's own) trusts proxies by rules
 * of its own, and some hide the forwarding headers they consumed; the {@code ip} key trusts only the limiter's
 * {@code trusted-proxies}, so it must see the socket peer and the headers as sent (unless the deployment chose to
 * trust the container's forwarding instead, {@link #HttpRequestContext(HttpServletRequest, boolean)}). A container
 * that rewrites the address below the servlet API (Tomcat's {@code RemoteIpValve}, Jetty's
 * {@code ForwardedRequestCustomizer}) cannot be seen past: see {@code docs/servlet.md}. The principal, method, path,
 * parameters and attributes come from the request as the application sees it (a security framework's wrapper
 * supplies the principal).
 *
 * <h2>Repeated headers</h2>
 * A client can send a header any number of times (within the container's limits). {@link #headers(String)} returns
 * at most the last {@value #MAX_HEADER_VALUES} values: the ones nearest the server, which trusted proxies
 * append. Keeping the first ones instead would let a client push the proxies' values out of view with lines of its
 * own.
 */
public final class HttpRequestContext implements RequestContext {

    /**
     * The name under which {@link #attribute(String)} returns the {@link HttpServletRequest} itself, for key
     * languages that read the request (SpEL's {@code #request} in the Spring Boot starter).
     */
    public static final String REQUEST_ATTRIBUTE = HttpRequestContext.class.getName() + ".request";

    /** The most values of one repeated header {@link #headers(String)} returns: the last ones. */
    public static final int MAX_HEADER_VALUES = 64;

    private final HttpServletRequest request;
    private final boolean addressAsReported;
    private @Nullable ServletRequest connection;

    /**
     * @param request the request
     */
    public HttpRequestContext(HttpServletRequest request) {
        this(request, false);
    }

    /**
     * @param request the request
     * @param addressAsReported whether {@link #remoteAddress()} is the address the request reports (a container's
     *        or a wrapper's rewrite from forwarding headers included) rather than the connection's: for deployments
     *        that trust the container's forwarding configuration ({@code ratelimit.trust-container-forwarding})
     */
    public HttpRequestContext(HttpServletRequest request, boolean addressAsReported) {
        this.request = Objects.requireNonNull(request, "request");
        this.addressAsReported = addressAsReported;
    }

    /**
     * @param request a request
     * @return the path within the application, as the container decoded and normalized it
     */
    public static String pathWithinApplication(HttpServletRequest request) {
        String servletPath = request.getServletPath();
        String pathInfo = request.getPathInfo();
        String path = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
        return path.isEmpty() ? "/" : path;
    }

    /**
     * @param request a request, possibly wrapped
     * @return the request the container created, beneath every wrapper
     */
    public static ServletRequest unwrap(ServletRequest request) {
        ServletRequest r = request;
        // Bounded: a wrapper chain is as long as the filters that built it, but a cycle must not hang a request.
        for (int i = 0; i < 64 && r instanceof ServletRequestWrapper w && w.getRequest() != null; i++) {
            r = w.getRequest();
        }
        return r;
    }

    private ServletRequest connection() {
        if (connection == null) {
            connection = unwrap(request);
        }
        return connection;
    }

    @Override
    public String remoteAddress() {
        return addressAsReported ? request.getRemoteAddr() : connection().getRemoteAddr();
    }

    @Override
    public List<String> headers(String name) {
        ServletRequest c = connection();
        Enumeration<String> values = c instanceof HttpServletRequest h ? h.getHeaders(name) : null;
        return lastValues(values);
    }

    /**
     * @param values header values in arrival order, or {@code null}
     * @return the last {@value #MAX_HEADER_VALUES} of them, in arrival order
     */
    static List<String> lastValues(@Nullable Enumeration<String> values) {
        if (values == null || !values.hasMoreElements()) {
            return List.of();
        }
        String first = values.nextElement();
        if (!values.hasMoreElements()) {
            return first == null ? List.of() : List.of(first);
        }
        // A ring of the last values: the container bounds how many lines arrive, this bounds what is kept.
        String[] ring = new String[MAX_HEADER_VALUES];
        ring[0] = first;
        long count = 1;
        while (values.hasMoreElements()) {
            ring[(int) (count++ % MAX_HEADER_VALUES)] = values.nextElement();
        }
        int size = (int) Math.min(count, MAX_HEADER_VALUES);
        String[] ordered = new String[size];
        long start = count - size;
        for (int i = 0; i < size; i++) {
            ordered[i] = ring[(int) ((start + i) % MAX_HEADER_VALUES)];
        }
        return Collections.unmodifiableList(Arrays.asList(ordered));
    }

    @Override
    public String header(String name) {
        ServletRequest c = connection();
        return c instanceof HttpServletRequest h ? h.getHeader(name) : request.getHeader(name);
    }

    @Override
    public String parameter(String name) {
        return request.getParameter(name);
    }

    @Override
    public String principal() {
        Principal principal = request.getUserPrincipal();
        if (principal != null && principal.getName() != null) {
            return principal.getName();
        }
        return request.getRemoteUser();
    }

    @Override
    public String method() {
        return request.getMethod();
    }

    @Override
    public String path() {
        return pathWithinApplication(request);
    }

    /**
     * @param name a request attribute's name, or {@link #REQUEST_ATTRIBUTE}
     * @return the attribute's value, or the request itself for {@link #REQUEST_ATTRIBUTE}
     */
    @Override
    public Object attribute(String name) {
        return REQUEST_ATTRIBUTE.equals(name) ? request : request.getAttribute(name);
    }

    /** Set on every request by Tomcat's RemoteIpValve and RemoteIpFilter: the container rewrites addresses. */
    private static final String TOMCAT_REMOTE_IP = "org.apache.tomcat.remoteAddr";

    /**
     * @param request a request
     * @return whether Tomcat's RemoteIpValve or RemoteIpFilter rewrote its client address before the filters ran
     */
    static boolean containerRewroteAddress(HttpServletRequest request) {
        return request.getAttribute(TOMCAT_REMOTE_IP) != null;
    }

    /** Says, once per filter, that the container's rewriting makes the {@code ip} key one clients may choose. */
    static void warnContainerRewritesAddresses() {
        System.getLogger(RateLimitFilter.class.getName())
                .log(
                        System.Logger.Level.WARNING,
                        "Tomcat's RemoteIpValve "
                                + "(or RemoteIpFilter) rewrites client addresses from X-Forwarded-For before this filter runs, trusting "
                                + "the proxies in its internalProxies setting (by default every private address). The 'ip' key then "
                                + "counts by an address that such a proxy's clients can choose. Either remove the valve and list your "
                                + "proxies in ratelimit.trusted-proxies, or, if its internalProxies lists only your own proxies, set "
                                + "ratelimit.trust-container-forwarding=true. See docs/servlet.md, Client addresses.");
    }
}
