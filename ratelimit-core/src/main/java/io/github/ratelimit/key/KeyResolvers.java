package io.github.ratelimit.key;

import java.util.List;
import java.util.Objects;

/**
 * The built-in key resolvers. Each is immutable and thread-safe.
 */
public final class KeyResolvers {

    /** The key every call of a {@code global} rule shares. */
    public static final String GLOBAL_KEY = "*";

    private static final KeyResolver GLOBAL = context -> GLOBAL_KEY;

    private static final KeyResolver USER = context -> blankToNull(context.principal());

    private KeyResolvers() {
    }

    /**
     * @return a resolver giving every call the same key: one bucket for all callers
     */
    public static KeyResolver global() {
        return GLOBAL;
    }

    /**
     * @return a resolver keying by the authenticated principal's name; anonymous calls have no key
     */
    public static KeyResolver user() {
        return USER;
    }

    /**
     * @param name a header name
     * @return a resolver keying by the header's first value; calls without it have no key
     */
    public static KeyResolver header(String name) {
        Objects.requireNonNull(name, "name");
        return context -> blankToNull(context.header(name));
    }

    /**
     * @param clientIp how to find the client address behind trusted proxies
     * @return a resolver keying by the client address ({@code 203.0.113.7}, or an IPv6 prefix such as
     *         {@code 2001:db8:1:2::/64})
     */
    public static KeyResolver ip(ClientIpResolver clientIp) {
        Objects.requireNonNull(clientIp, "clientIp");
        if (!clientIp.readsForwardedHeader()) {
            // No proxy is trusted: the header can never count, so it is not even read.
            return context -> clientIp.resolve(context.remoteAddress(), List.of());
        }
        String header = clientIp.headerName();
        return context -> clientIp.resolve(context.remoteAddress(), context.headers(header));
    }

    private static String blankToNull(String value) {
        if (value == null) {
            return null;
        }
        String trimmed = value.trim();
        return trimmed.isEmpty() ? null : trimmed;
    }
}
