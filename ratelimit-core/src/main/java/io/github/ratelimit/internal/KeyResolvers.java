package io.github.ratelimit.internal;

import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.key.KeyResolver;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * The built-in key resolvers. Each is immutable and thread-safe.
 */
public final class KeyResolvers {

    /** The key every call of a {@code global} rule shares. */
    public static final String GLOBAL_KEY = "*";

    private static final KeyResolver GLOBAL = context -> GLOBAL_KEY;

    private static final KeyResolver USER = context -> blankToNull(context.principal());

    private static final KeyResolver BASIC_USER = context -> foldCase(basicUserName(context.header("Authorization")));

    /** The form parameter Spring Security's form login reads the user name from. */
    public static final String DEFAULT_USERNAME_PARAMETER = "username";

    /**
     * Most base64 characters of an {@code Authorization} header {@link #basicUser()} decodes (a multiple of 4): a
     * longer one is read that far, which holds the user name unless the name alone is longer.
     */
    static final int MAX_BASIC_CREDENTIALS_LENGTH = 4096;

    private KeyResolvers() {}

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
     * The user name an {@code Authorization: Basic} header <em>claims</em>, before anything checks its password:
     * for limiting authentication attempts per user name in front of the authentication itself. Never the
     * password. Calls without such a header, or with one that is not valid Basic credentials, have no key.
     *
     * <p>Claimed user names are case-folded (lower case, {@link Locale#ROOT}): most user stores, Spring Security's
     * in-memory one among them, find {@code ALICE} as {@code alice}, so every spelling of a name is a guess at the
     * same account and must count against the same limit. A store that tells them apart is only over-counted.
     *
     * @return a resolver keying by the claimed Basic user name, case-folded
     */
    public static KeyResolver basicUser() {
        return BASIC_USER;
    }

    /**
     * The user name a login form <em>claims</em>: a request parameter (Spring Security's form login reads
     * {@value #DEFAULT_USERNAME_PARAMETER}), trimmed and case-folded like {@link #basicUser()}, for limiting login
     * attempts per user name.
     *
     * @param parameter the form parameter that carries the user name
     * @return a resolver keying by the claimed user name, case-folded
     */
    public static KeyResolver formUser(String parameter) {
        Objects.requireNonNull(parameter, "parameter");
        return context -> foldCase(blankToNull(context.parameter(parameter)));
    }

    /**
     * @param name a request parameter name
     * @return a resolver keying by the parameter's first value (from the query string or a form body, as the
     *         entry point reads parameters); calls without it have no key
     */
    public static KeyResolver parameter(String name) {
        Objects.requireNonNull(name, "name");
        return context -> blankToNull(context.parameter(name));
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

    static String basicUserName(String authorization) {
        if (authorization == null) {
            return null;
        }
        String value = authorization.trim();
        // As lenient as the most lenient server: Spring Security's servlet converter takes any header that starts
        // with "Basic" and decodes from the seventh character on ("BasicX<credentials>" is checked too).
        if (value.length() < 6 || !value.regionMatches(true, 0, "Basic", 0, 5)) {
            return null;
        }
        String token = value.substring(6).trim();
        if (token.length() > MAX_BASIC_CREDENTIALS_LENGTH) {
            // A long password still names its user first: decode a bounded prefix, whole base64 quanta only.
            token = token.substring(0, MAX_BASIC_CREDENTIALS_LENGTH);
        }
        byte[] decoded;
        try {
            decoded = Base64.getDecoder().decode(token);
        } catch (IllegalArgumentException e) {
            return null;
        }
        String credentials = new String(decoded, StandardCharsets.UTF_8);
        int colon = credentials.indexOf(':');
        return colon <= 0 ? null : blankToNull(credentials.substring(0, colon));
    }

    private static String foldCase(String name) {
        return name == null ? null : name.toLowerCase(Locale.ROOT);
    }

    private static String blankToNull(String value) {
        if (value == null) {
            return null;
        }
        String trimmed = value.trim();
        return trimmed.isEmpty() ? null : trimmed;
    }
}
