package io.github.ratelimit.spring.boot.internal.web.servlet;

import io.github.ratelimit.RequestContext;
import io.github.ratelimit.servlet.HttpRequestContext;
import io.github.ratelimit.spring.boot.internal.method.MethodCallContext;
import jakarta.servlet.http.HttpServletRequest;
import java.util.List;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInvocation;

/**
 * A {@link RequestContext} for a method call made while a servlet request is served: the current HTTP request's view (the same as the filter's, for
 * keys {@code ip} and {@code header:...}) when there is one, the principal, and the invocation itself for SpEL
 * keys.
 */
public final class ServletCallContext implements RequestContext {

    private final MethodInvocation invocation;
    private final HttpServletRequest request;
    private final RequestContext http;
    private final Supplier<String> principal;

    public ServletCallContext(
            MethodInvocation invocation,
            HttpServletRequest request,
            Supplier<String> principal,
            boolean addressAsReported) {
        this.invocation = invocation;
        this.request = request;
        this.http = request == null ? RequestContext.empty() : new HttpRequestContext(request, addressAsReported);
        this.principal = principal;
    }

    @Override
    public String remoteAddress() {
        return http.remoteAddress();
    }

    @Override
    public List<String> headers(String name) {
        return http.headers(name);
    }

    @Override
    public String header(String name) {
        return http.header(name);
    }

    @Override
    public String parameter(String name) {
        return http.parameter(name);
    }

    @Override
    public String principal() {
        return principal.get();
    }

    @Override
    public String method() {
        return http.method();
    }

    @Override
    public String path() {
        return http.path();
    }

    @Override
    public Object attribute(String name) {
        if (MethodCallContext.INVOCATION.equals(name)) {
            return invocation;
        }
        return http.attribute(name);
    }
}
