package io.github.ratelimit.key;

import org.jspecify.annotations.Nullable;

/**
 * Parses one hop of a forwarding header: an {@code X-Forwarded-For} entry, or an RFC 7239
 * {@code Forwarded} element. Every method returns {@code null} for malformed text instead of
 * throwing, because header text is controlled by clients.
 *
 * <p>The node syntax accepted for both headers is {@code 192.0.2.1}, {@code 192.0.2.1:8080},
 * {@code 2001:db8::1}, {@code [2001:db8::1]} and {@code [2001:db8::1]:8080}. A port may also be an
 * RFC 7239 obfuscated port ({@code _abc}). An IPv6 zone id ({@code fe80::1%eth0}) is accepted and
 * dropped. Obfuscated identifiers ({@code _hidden}), {@code unknown} and host names are malformed:
 * they name no address, and host names are never resolved.
 */
final class HopParser {

    /** Longest node text considered; longer text is malformed without being parsed. */
    static final int MAX_NODE_LENGTH = 256;

    private HopParser() {}

    /**
     * Parses a node: an address literal with optional brackets, port and zone id.
     *
     * @param text the node without surrounding whitespace, not null
     * @return the address, or {@code null} when the text is malformed
     */
    static @Nullable IpAddress parseNode(String text) {
        int length = text.length();
        if (length == 0 || length > MAX_NODE_LENGTH) {
            return null;
        }
        String host;
        if (text.charAt(0) == '[') {
            int close = text.indexOf(']');
            if (close < 0) {
                return null;
            }
            boolean portFollows = close + 1 < length;
            if (portFollows && (text.charAt(close + 1) != ':' || !isPort(text, close + 2))) {
                return null;
            }
            host = text.substring(1, close);
            if (host.indexOf(':') < 0) {
                return null; // brackets are for IPv6 only
            }
        } else {
            int colon = text.indexOf(':');
            boolean singleColon = colon >= 0 && text.indexOf(':', colon + 1) < 0;
            if (singleColon) { // IPv4 with a port; a bare IPv6 literal has at least two colons
                if (!isPort(text, colon + 1)) {
                    return null;
                }
                host = text.substring(0, colon);
            } else {
                host = text;
            }
        }
        int zone = host.indexOf('%');
        if (zone >= 0) {
            if (host.indexOf(':') < 0 || zone == host.length() - 1) {
                return null; // zone ids exist for IPv6 only and must not be empty
            }
            host = host.substring(0, zone);
        }
        return IpAddress.parseLiteral(host);
    }

    /**
     * Parses an RFC 7239 {@code Forwarded} element such as
     * {@code for="[2001:db8::1]:4711";proto=https;by=203.0.113.43} and returns the address of its
     * {@code for} parameter (whose name is case-insensitive; the value may be quoted).
     *
     * <p>Pairs are split at every {@code ;} without regard to quotes; a quoted value containing
     * {@code ;} or {@code ,} cannot be an address, so this only ever turns such elements into
     * malformed ones. Whitespace around pairs, names and values is tolerated.
     *
     * @param element the element text between commas, not null
     * @return the address, or {@code null} when there is no {@code for} parameter, more than one,
     *     or its value is not an address
     */
    static @Nullable IpAddress parseForwardedElement(String element) {
        String forValue = null;
        int start = 0;
        int length = element.length();
        while (start <= length) {
            int end = indexOf(element, ';', start, length);
            int equals = indexOf(element, '=', start, end);
            if (equals < end && element.substring(start, equals).strip().equalsIgnoreCase("for")) {
                if (forValue != null) {
                    return null; // RFC 7239 allows each parameter once per element
                }
                forValue = element.substring(equals + 1, end).strip();
            }
            start = end + 1;
        }
        if (forValue == null) {
            return null;
        }
        String node = unquote(forValue);
        return node == null ? null : parseNode(node);
    }

    /**
     * Removes the quotes and backslash escapes of an RFC 7230 quoted-string, or returns a token
     * unchanged.
     *
     * @return the value, or {@code null} when the quoting is broken
     */
    private static @Nullable String unquote(String value) {
        if (value.isEmpty() || value.charAt(0) != '"') {
            return value.indexOf('"') < 0 ? value : null;
        }
        StringBuilder result = new StringBuilder(value.length());
        for (int i = 1; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"') {
                return i == value.length() - 1 ? result.toString() : null;
            }
            if (c == '\\') {
                if (++i == value.length()) {
                    return null;
                }
                c = value.charAt(i);
            }
            result.append(c);
        }
        return null; // no closing quote
    }

    /** Whether {@code text[from..]} is a decimal port 0..65535 or an obfuscated port. */
    private static boolean isPort(String text, int from) {
        int length = text.length() - from;
        if (length < 1) {
            return false;
        }
        if (text.charAt(from) == '_') {
            for (int i = from + 1; i < text.length(); i++) {
                if (!isObfuscatedChar(text.charAt(i))) {
                    return false;
                }
            }
            return length > 1;
        }
        if (length > 5) {
            return false;
        }
        int port = 0;
        for (int i = from; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
            port = port * 10 + (c - '0');
        }
        return port <= 65535;
    }

    private static boolean isObfuscatedChar(char c) {
        return (c >= 'a' && c <= 'z')
                || (c >= 'A' && c <= 'Z')
                || (c >= '0' && c <= '9')
                || c == '.'
                || c == '_'
                || c == '-';
    }

    /** The index of {@code c} in {@code text[from, to)}, or {@code to} when absent. */
    private static int indexOf(String text, char c, int from, int to) {
        for (int i = from; i < to; i++) {
            if (text.charAt(i) == c) {
                return i;
            }
        }
        return to;
    }
}
