package io.github.ratelimit.spring.boot.internal.web.reactive;

import io.github.ratelimit.RequestContext;
import io.github.ratelimit.servlet.HttpRequestContext;
import io.github.ratelimit.spring.boot.internal.method.MethodCallContext;
import io.github.ratelimit.spring.boot.internal.method.SpelKeyResolverFactory;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Collections;
import java.util.List;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.util.ClassUtils;
import org.springframework.web.server.ServerWebExchange;
import reactor.netty.http.server.ConnectionInformation;
import reactor.netty.http.server.HttpServerRequest;

/**
 * A {@link RequestContext} over a Spring WebFlux exchange: what the reactive filter and the advisor decide with.
 * The principal is resolved before (it is a {@code Mono} in WebFlux); everything else is read lazily.
 *
 * <h2>The connection's view</h2>
 * As on the servlet path, the {@code ip} key must see the connection's peer and the headers as sent, and apply
 * {@code ratelimit.trusted-proxies} itself. On Reactor Netty both come from the native request beneath every
 * decorator and mutation: its connection's address ({@code connectionRemoteAddress}, which neither Spring's
 * {@code ForwardedHeaderTransformer} ({@code server.forward-headers-strategy=framework}) nor Reactor Netty's own
 * forwarded handling ({@code native}) rewrites) and its headers (which the transformer removes from the request
 * the application sees). On another server the request's own address and headers are read. With
 * {@code ratelimit.trust-container-forwarding=true} the address is the one the request reports, rewrites included.
 *
 * <p>{@link #attribute(String)} answers the exchange's attributes (path variables after the handler lookup),
 * {@link #REQUEST} with the {@link ServerHttpRequest} and {@link #EXCHANGE} with the exchange, for SpEL's
 * {@code #request} and {@code #exchange}, and the method invocation for keys over a method's arguments.
 */
final class ExchangeRequestContext implements RequestContext {

    /** The attribute holding the {@link ServerHttpRequest}, SpEL's {@code #request}. */
    static final String REQUEST = SpelKeyResolverFactory.REQUEST_ATTRIBUTE;

    /** The attribute holding the {@link ServerWebExchange}, SpEL's {@code #exchange}. */
    static final String EXCHANGE = SpelKeyResolverFactory.EXCHANGE_ATTRIBUTE;

    /** The most values of one repeated header {@link #headers(String)} returns: the last ones, as on the servlet path. */
    static final int MAX_HEADER_VALUES = HttpRequestContext.MAX_HEADER_VALUES;

    private static final boolean REACTOR_NETTY = ClassUtils.isPresent(
            "reactor.netty.http.server.ConnectionInformation", ExchangeRequestContext.class.getClassLoader());

    private final ServerWebExchange exchange;
    private final String principal;
    private final boolean addressAsReported;
    private final MethodInvocation invocation;

    /**
     * @param exchange the exchange
     * @param principal the authenticated principal's name, or {@code null}
     * @param addressAsReported whether the address is the one the request reports (forwarding rewrites included)
     * @param invocation the method call being decided, or {@code null} for the filter
     */
    ExchangeRequestContext(
            ServerWebExchange exchange, String principal, boolean addressAsReported, MethodInvocation invocation) {
        this.exchange = exchange;
        this.principal = principal;
        this.addressAsReported = addressAsReported;
        this.invocation = invocation;
    }

    @Override
    public String remoteAddress() {
        ServerHttpRequest request = exchange.getRequest();
        SocketAddress address = null;
        if (!addressAsReported && REACTOR_NETTY) {
            address = NettyConnection.remoteAddress(ServerHttpRequestDecorator.getNativeRequest(request));
        }
        if (address == null) {
            address = request.getRemoteAddress();
        }
        if (address instanceof InetSocketAddress inet) {
            return inet.getAddress() != null ? inet.getAddress().getHostAddress() : inet.getHostString();
        }
        return null;
    }

    @Override
    public List<String> headers(String name) {
        List<String> values = null;
        if (REACTOR_NETTY) {
            values = NettyConnection.headers(ServerHttpRequestDecorator.getNativeRequest(exchange.getRequest()), name);
        }
        if (values == null) {
            values = exchange.getRequest().getHeaders().get(name);
        }
        if (values == null || values.isEmpty()) {
            return List.of();
        }
        // The last values: proxies append, so a client's own lines must not push theirs out of view.
        return Collections.unmodifiableList(
                values.size() <= MAX_HEADER_VALUES
                        ? values
                        : values.subList(values.size() - MAX_HEADER_VALUES, values.size()));
    }

    /**
     * The header's first value as the application reads it ({@code getFirst}, as Spring Security's converters do),
     * not the first of the last values {@link #headers} keeps: a client sending more lines than that must not make
     * a key read another value than the one the application checks.
     */
    @Override
    public String header(String name) {
        String value = null;
        if (REACTOR_NETTY) {
            value = NettyConnection.header(ServerHttpRequestDecorator.getNativeRequest(exchange.getRequest()), name);
        }
        return value != null ? value : exchange.getRequest().getHeaders().getFirst(name);
    }

    @Override
    public String parameter(String name) {
        return exchange.getRequest().getQueryParams().getFirst(name);
    }

    @Override
    public String principal() {
        return principal;
    }

    @Override
    public String method() {
        return exchange.getRequest().getMethod().name();
    }

    @Override
    public String path() {
        return pathOf(exchange.getRequest());
    }

    /**
     * The path as Spring WebFlux matches it to handlers, for URL rules to match the same way: each segment decoded
     * and without its path parameters ({@code ;jsessionid=...}), as {@code PathPattern}s see them. Matching the raw
     * path instead would let {@code /api/%68ello} or {@code /api/hello;x} reach the handler of {@code /api/hello}
     * past a rule for it. A {@code /} that a segment holds once decoded ({@code %2F}) stays {@code %2F}: it is inside
     * one segment for the handler's pattern, and must be for the rule's.
     *
     * @param request a request
     * @return its path within the application, as matched
     */
    static String pathOf(ServerHttpRequest request) {
        PathContainer path = request.getPath().pathWithinApplication();
        StringBuilder matched = new StringBuilder(path.value().length());
        for (PathContainer.Element element : path.elements()) {
            if (element instanceof PathContainer.PathSegment segment) {
                String value = segment.valueToMatch();
                matched.append(value.indexOf('/') < 0 ? value : value.replace("/", "%2F"));
            } else {
                matched.append('/');
            }
        }
        return matched.length() == 0 ? "/" : matched.toString();
    }

    @Override
    public Object attribute(String name) {
        if (REQUEST.equals(name)) {
            return exchange.getRequest();
        }
        if (EXCHANGE.equals(name)) {
            return exchange;
        }
        if (MethodCallContext.INVOCATION.equals(name)) {
            return invocation;
        }
        return exchange.getAttribute(name);
    }

    /** Reactor Netty's native request, read only where Reactor Netty is on the class path. */
    private static final class NettyConnection {

        static SocketAddress remoteAddress(Object nativeRequest) {
            return nativeRequest instanceof ConnectionInformation connection
                    ? connection.connectionRemoteAddress()
                    : null;
        }

        static List<String> headers(Object nativeRequest, String name) {
            return nativeRequest instanceof HttpServerRequest netty
                    ? netty.requestHeaders().getAll(name)
                    : null;
        }

        static String header(Object nativeRequest, String name) {
            return nativeRequest instanceof HttpServerRequest netty
                    ? netty.requestHeaders().get(name)
                    : null;
        }
    }
}
