package io.github.ratelimit.servlet;

import io.github.ratelimit.RequestContext;
import jakarta.servlet.http.HttpServletRequest;

import java.security.Principal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

/**
 * A {@link RequestContext} over a servlet request: what the filter and the Spring starter's method advisor both
 * decide with. Reads lazily, only what the rules' keys ask for; at most 64 values of a repeated header.
 * Attributes are the request's attributes. Not thread-safe, like the request.
 */
public final class HttpRequestContext implements RequestContext {

    private final HttpServletRequest request;

    /**
     * @param request the request
     */
    public HttpRequestContext(HttpServletRequest request) {
        this.request = java.util.Objects.requireNonNull(request, "request");
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

    @Override
    public String remoteAddress() {
        return request.getRemoteAddr();
    }

    @Override
    public List<String> headers(String name) {
        Enumeration<String> values = request.getHeaders(name);
        if (values == null || !values.hasMoreElements()) {
            return List.of();
        }
        List<String> list = new ArrayList<>(2);
        // A client can send a header many times; a key needs no more than the first few dozen.
        for (int i = 0; i < 64 && values.hasMoreElements(); i++) {
            list.add(values.nextElement());
        }
        return Collections.unmodifiableList(list);
    }

    @Override
    public String header(String name) {
        return request.getHeader(name);
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

    @Override
    public Object attribute(String name) {
        return request.getAttribute(name);
    }
}
