package io.github.ratelimit.spring.boot;

import io.github.ratelimit.RequestContext;
import jakarta.servlet.http.HttpServletRequest;
import org.aopalliance.intercept.MethodInvocation;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.function.Supplier;

/**
 * A {@link RequestContext} for a method call: the current HTTP request when there is one (keys {@code ip},
 * {@code header:...}), the principal, and the invocation itself for SpEL keys.
 */
final class InvocationRequestContext implements RequestContext {

    /** The attribute holding the {@link MethodInvocation}. */
    static final String INVOCATION = "ratelimit.invocation";

    /** The attribute holding the current {@link HttpServletRequest}, or absent. */
    static final String REQUEST = "ratelimit.request";

    private final MethodInvocation invocation;
    private final HttpServletRequest request;
    private final Supplier<String> principal;

    InvocationRequestContext(MethodInvocation invocation, HttpServletRequest request, Supplier<String> principal) {
        this.invocation = invocation;
        this.request = request;
        this.principal = principal;
    }

    @Override
    public String remoteAddress() {
        return request == null ? null : request.getRemoteAddr();
    }

    @Override
    public List<String> headers(String name) {
        if (request == null) {
            return List.of();
        }
        Enumeration<String> values = request.getHeaders(name);
        if (values == null || !values.hasMoreElements()) {
            return List.of();
        }
        List<String> list = new ArrayList<>(2);
        for (int i = 0; i < 64 && values.hasMoreElements(); i++) {
            list.add(values.nextElement());
        }
        return Collections.unmodifiableList(list);
    }

    @Override
    public String header(String name) {
        return request == null ? null : request.getHeader(name);
    }

    @Override
    public String principal() {
        return principal.get();
    }

    @Override
    public String method() {
        return request == null ? null : request.getMethod();
    }

    @Override
    public String path() {
        return request == null ? null : request.getRequestURI();
    }

    @Override
    public Object attribute(String name) {
        if (INVOCATION.equals(name)) {
            return invocation;
        }
        if (REQUEST.equals(name)) {
            return request;
        }
        return null;
    }
}
