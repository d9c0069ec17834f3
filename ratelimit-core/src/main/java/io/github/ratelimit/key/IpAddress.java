package io.github.ratelimit.key;

import org.jspecify.annotations.Nullable;

/**
 * An IPv4 or IPv6 address held as a 128-bit value and parsed from literal text only.
 *
 * <p>IPv4 addresses are stored in their IPv4-mapped IPv6 form ({@code ::ffff:a.b.c.d}), so the
 * spellings {@code 192.0.2.1} and {@code ::ffff:192.0.2.1} produce equal values and IPv4 and IPv6
 * ranges live in one 128-bit space.
 *
 * <p>Parsing never performs name resolution and uses no {@code java.net} type. Only strict ASCII
 * literals are accepted: a dotted quad of decimal octets without leading zeros, or RFC 4291 IPv6
 * text (optionally ending in a dotted quad). Host names such as {@code localhost} are rejected, as
 * are the ambiguous legacy IPv4 spellings that {@code inet_aton} and {@code InetAddress} accept
 * ({@code 127.1}, {@code 0x7f.0.0.1}, {@code 2130706433}, {@code 017.0.0.1}).
 *
 * <p>Instances are immutable and thread-safe.
 */
final class IpAddress {

    /** Longest IPv6 literal: {@code ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255}. */
    private static final int MAX_IPV6_LENGTH = 45;

    private static final long IPV4_MAPPED_BITS = 0xFFFFL << 32;

    /** Upper 64 bits of the address. */
    final long high;
    /** Lower 64 bits of the address. */
    final long low;

    private IpAddress(long high, long low) {
        this.high = high;
        this.low = low;
    }

    /** Whether this is an IPv4 address, which is the same as an IPv4-mapped IPv6 address. */
    boolean isIpv4() {
        return high == 0L && (low & 0xFFFF_FFFF_0000_0000L) == IPV4_MAPPED_BITS;
    }

    /**
     * Parses a bare IPv4 or IPv6 literal: no brackets, port, zone id or surrounding whitespace.
     *
     * @param text the candidate literal, not null
     * @return the address, or {@code null} when {@code text} is not exactly such a literal
     */
    static @Nullable IpAddress parseLiteral(String text) {
        if (text.indexOf(':') >= 0) {
            return parseIpv6(text);
        }
        long ipv4 = parseIpv4(text, 0, text.length());
        return ipv4 < 0 ? null : new IpAddress(0L, IPV4_MAPPED_BITS | ipv4);
    }

    /** Returns this address with every bit after the first {@code prefixLength} bits cleared. */
    IpAddress masked(int prefixLength) {
        return new IpAddress(high & highMask(prefixLength), low & lowMask(prefixLength));
    }

    /** The mask for the upper 64 bits of a 128-bit prefix of the given length (0..128). */
    static long highMask(int prefixLength) {
        return leadingOnes(Math.min(prefixLength, 64));
    }

    /** The mask for the lower 64 bits of a 128-bit prefix of the given length (0..128). */
    static long lowMask(int prefixLength) {
        return leadingOnes(Math.max(prefixLength - 64, 0));
    }

    private static long leadingOnes(int bits) {
        // A shift by 64 is a no-op in Java, so zero bits needs its own case.
        return bits == 0 ? 0L : -1L << (64 - bits);
    }

    /**
     * The canonical text: a dotted quad for IPv4 (including IPv4-mapped input), otherwise the
     * RFC 5952 form (lower case, no leading zeros, the longest run of two or more zero groups
     * shortened to {@code ::}, the first such run on a tie).
     */
    @Override
    public String toString() {
        if (isIpv4()) {
            return ipv4Text();
        }
        int[] groups = new int[8];
        for (int i = 0; i < 4; i++) {
            groups[i] = (int) (high >>> (48 - 16 * i)) & 0xFFFF;
            groups[i + 4] = (int) (low >>> (48 - 16 * i)) & 0xFFFF;
        }
        int bestStart = -1;
        int bestLength = 1; // a single zero group is never shortened
        for (int i = 0; i < 8; ) {
            if (groups[i] != 0) {
                i++;
                continue;
            }
            int start = i;
            while (i < 8 && groups[i] == 0) {
                i++;
            }
            if (i - start > bestLength) {
                bestStart = start;
                bestLength = i - start;
            }
        }
        StringBuilder text = new StringBuilder(39);
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                text.append("::");
                i += bestLength - 1;
                continue;
            }
            if (text.length() > 0 && text.charAt(text.length() - 1) != ':') {
                text.append(':');
            }
            text.append(Integer.toHexString(groups[i]));
        }
        return text.toString();
    }

    /**
     * The IPv6 text: like {@link #toString()}, except that an IPv4 address is written in its
     * IPv4-mapped form {@code ::ffff:a.b.c.d}.
     */
    String toIpv6String() {
        return isIpv4() ? "::ffff:" + ipv4Text() : toString();
    }

    /** The dotted quad of the low 32 bits; meaningful for IPv4 addresses. */
    String ipv4Text() {
        return ((low >>> 24) & 0xFF) + "." + ((low >>> 16) & 0xFF) + "." + ((low >>> 8) & 0xFF) + "." + (low & 0xFF);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof IpAddress && ((IpAddress) other).high == high && ((IpAddress) other).low == low;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(high) * 31 + Long.hashCode(low);
    }

    /**
     * Parses a strict dotted quad in {@code text[from, to)}.
     *
     * @return the address in the low 32 bits, or {@code -1} when the text is not a dotted quad
     */
    private static long parseIpv4(String text, int from, int to) {
        long result = 0;
        int i = from;
        for (int octet = 0; octet < 4; octet++) {
            if (octet > 0) {
                if (i >= to || text.charAt(i) != '.') {
                    return -1;
                }
                i++;
            }
            int start = i;
            int value = 0;
            while (i < to && i - start < 3 && isDigit(text.charAt(i))) {
                value = value * 10 + (text.charAt(i) - '0');
                i++;
            }
            int digits = i - start;
            if (digits == 0 || value > 255 || (digits > 1 && text.charAt(start) == '0')) {
                return -1; // a leading zero reads as octal to some parsers, so it is ambiguous
            }
            result = (result << 8) | value;
        }
        return i == to ? result : -1;
    }

    private static @Nullable IpAddress parseIpv6(String text) {
        int length = text.length();
        if (length < 2 || length > MAX_IPV6_LENGTH) {
            return null;
        }
        int gap = text.indexOf("::");
        if (gap >= 0 && text.indexOf("::", gap + 1) >= 0) {
            return null; // at most one "::" (this also rejects ":::")
        }
        int[] groups = new int[8];
        if (gap < 0) {
            return parseGroups(text, 0, length, groups, true) == 8 ? fromGroups(groups) : null;
        }
        int headCount = gap == 0 ? 0 : parseGroups(text, 0, gap, groups, false);
        int[] tail = new int[8];
        int tailCount = gap + 2 == length ? 0 : parseGroups(text, gap + 2, length, tail, true);
        if (headCount < 0 || tailCount < 0 || headCount + tailCount > 7) {
            return null; // "::" stands for at least one zero group
        }
        System.arraycopy(tail, 0, groups, 8 - tailCount, tailCount);
        return fromGroups(groups);
    }

    /**
     * Parses colon-separated groups in {@code text[from, to)} into {@code out}.
     *
     * @param ipv4Tail whether the last group may be a dotted quad (which counts as two groups)
     * @return the number of groups, or {@code -1} when the text is malformed
     */
    private static int parseGroups(String text, int from, int to, int[] out, boolean ipv4Tail) {
        int count = 0;
        int start = from;
        while (true) {
            int end = start;
            while (end < to && text.charAt(end) != ':') {
                end++;
            }
            boolean last = end == to;
            if (last && ipv4Tail && text.lastIndexOf('.', to - 1) >= start) {
                long ipv4 = parseIpv4(text, start, end);
                if (ipv4 < 0 || count > 6) {
                    return -1;
                }
                out[count++] = (int) (ipv4 >>> 16);
                out[count++] = (int) (ipv4 & 0xFFFF);
                return count;
            }
            int group = parseHexGroup(text, start, end);
            if (group < 0 || count == 8) {
                return -1;
            }
            out[count++] = group;
            if (last) {
                return count;
            }
            start = end + 1;
        }
    }

    /** Parses one to four ASCII hex digits, or returns {@code -1}. */
    private static int parseHexGroup(String text, int from, int to) {
        int digits = to - from;
        if (digits < 1 || digits > 4) {
            return -1;
        }
        int value = 0;
        for (int i = from; i < to; i++) {
            int digit = hexValue(text.charAt(i));
            if (digit < 0) {
                return -1;
            }
            value = (value << 4) | digit;
        }
        return value;
    }

    private static int hexValue(char c) {
        if (isDigit(c)) {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }

    /** ASCII only: {@link Character#isDigit} would also accept digits of other scripts. */
    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private static IpAddress fromGroups(int[] groups) {
        long high = 0;
        long low = 0;
        for (int i = 0; i < 4; i++) {
            high = (high << 16) | groups[i];
            low = (low << 16) | groups[i + 4];
        }
        return new IpAddress(high, low);
    }
}
