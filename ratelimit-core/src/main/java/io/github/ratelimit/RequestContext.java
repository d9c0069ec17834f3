package io.github.ratelimit;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What key resolvers may read of the call being decided, independent of any framework. The servlet filter
 * adapts an {@code HttpServletRequest}; the Spring aspect adapts the current request, if any, and the method
 * invocation; plain Java code builds one with {@link #builder()}.
 *
 * <p>Every method may return {@code null} (or an empty list) when the information is not available, for
 * example outside an HTTP request. Implementations need not be thread-safe: a context is used by the thread
 * that decides its call.
 */
public interface RequestContext {

    /**
     * @return the address of the connection's peer, or {@code null}; never a value taken from a forwarding header
     *         by a layer other than the limiter (the {@code ip} key applies the limiter's trusted proxies itself)
     */
    default @Nullable String remoteAddress() {
        return null;
    }

    /**
     * @param name a header name, matched case-insensitively
     * @return the values of the header in arrival order, never {@code null}. An implementation may bound how many
     *         it returns, but then keeps the <em>last</em> ones: proxies append to the end, so dropping the last
     *         values would let a client push a trusted proxy's entries out of view.
     */
    default List<String> headers(String name) {
        return List.of();
    }

    /**
     * @param name a header name, matched case-insensitively
     * @return the first value of the header as the application reads it, or {@code null}. The default takes the
     *         first of {@link #headers}; an implementation that bounds {@link #headers} overrides this to return the
     *         request's real first value, so that many lines cannot make a key read another value than the one the
     *         application (its authentication) reads.
     */
    default @Nullable String header(String name) {
        List<String> values = headers(name);
        return values.isEmpty() ? null : values.get(0);
    }

    /**
     * @param name a request parameter name
     * @return its first value, from the query string or a form body, or {@code null}
     */
    default @Nullable String parameter(String name) {
        return null;
    }

    /**
     * @return the authenticated principal's name, or {@code null} for an anonymous call
     */
    default @Nullable String principal() {
        return null;
    }

    /**
     * @return the HTTP method, or {@code null}
     */
    default @Nullable String method() {
        return null;
    }

    /**
     * @return the request path within the application, or {@code null}
     */
    default @Nullable String path() {
        return null;
    }

    /**
     * An extension point for custom key resolvers: values an entry point chose to expose (the Spring aspect
     * exposes the invocation's arguments, for example).
     *
     * @param name the attribute name
     * @return the value, or {@code null}
     */
    default @Nullable Object attribute(String name) {
        return null;
    }

    /**
     * @return a context with no information; rules keyed by anything but {@code global} find their key missing
     */
    static RequestContext empty() {
        return Builder.EMPTY;
    }

    /**
     * @return a builder for a context made of plain values
     */
    static Builder builder() {
        return new Builder();
    }

    /**
     * Builds an immutable {@link RequestContext} from plain values. Not thread-safe; the built context is.
     */
    final class Builder {

        private static final RequestContext EMPTY = new Builder().build();

        private @Nullable String remoteAddress;
        private @Nullable String principal;
        private @Nullable String method;
        private @Nullable String path;
        private final Map<String, List<String>> headers = new HashMap<>();
        private final Map<String, String> parameters = new HashMap<>();
        private final Map<String, Object> attributes = new HashMap<>();

        private Builder() {}

        /**
         * @param remoteAddress the socket peer's address
         * @return this builder
         */
        public Builder remoteAddress(@Nullable String remoteAddress) {
            this.remoteAddress = remoteAddress;
            return this;
        }

        /**
         * @param principal the authenticated principal's name
         * @return this builder
         */
        public Builder principal(@Nullable String principal) {
            this.principal = principal;
            return this;
        }

        /**
         * @param method the HTTP method
         * @return this builder
         */
        public Builder method(@Nullable String method) {
            this.method = method;
            return this;
        }

        /**
         * @param path the request path
         * @return this builder
         */
        public Builder path(@Nullable String path) {
            this.path = path;
            return this;
        }

        /**
         * @param name a header name
         * @param value a value to add
         * @return this builder
         */
        public Builder header(String name, String value) {
            headers.computeIfAbsent(name.toLowerCase(Locale.ROOT), k -> new ArrayList<>())
                    .add(value);
            return this;
        }

        /**
         * @param name a request parameter name
         * @param value its value
         * @return this builder
         */
        public Builder parameter(String name, String value) {
            parameters.putIfAbsent(name, value);
            return this;
        }

        /**
         * @param name an attribute name
         * @param value its value
         * @return this builder
         */
        public Builder attribute(String name, Object value) {
            attributes.put(name, value);
            return this;
        }

        /** @return the context */
        public RequestContext build() {
            Map<String, List<String>> h = new HashMap<>();
            headers.forEach((k, v) -> h.put(k, List.copyOf(v)));
            return new Plain(
                    remoteAddress,
                    principal,
                    method,
                    path,
                    Collections.unmodifiableMap(h),
                    Map.copyOf(parameters),
                    Collections.unmodifiableMap(new HashMap<>(attributes)));
        }
    }

    /** The context {@link Builder} builds. */
    record Plain(
            @Nullable String remoteAddress,
            @Nullable String principal,
            @Nullable String method,
            @Nullable String path,
            Map<String, List<String>> headerMap,
            Map<String, String> parameters,
            Map<String, Object> attributes)
            implements RequestContext {

        @Override
        public @Nullable String parameter(String name) {
            return parameters.get(name);
        }

        @Override
        public List<String> headers(String name) {
            List<String> values = headerMap.get(name.toLowerCase(Locale.ROOT));
            return values == null ? List.of() : values;
        }

        @Override
        public @Nullable Object attribute(String name) {
            return attributes.get(name);
        }
    }
}
