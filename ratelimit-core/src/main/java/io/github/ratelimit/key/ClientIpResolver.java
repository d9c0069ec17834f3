package io.github.ratelimit.key;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.RequestContext;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.ListIterator;
import java.util.Objects;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * Determines the client address of a request, for use as a rate-limit key, from the socket peer
 * address and, behind trusted reverse proxies, one forwarding header.
 *
 * <h2>Algorithm</h2>
 * <ol>
 *   <li>If the socket peer ({@code remoteAddress}) is not a trusted proxy, it is the client; the
 *       forwarding header is ignored, because anyone can send one.</li>
 *   <li>Otherwise the hops of the forwarding header (all occurrences in arrival order, each split
 *       at commas) are examined from the right, which is the end that trusted proxies append to.
 *       Trusted proxies are skipped; the first untrusted hop is the client.</li>
 *   <li>A malformed hop (not an address literal: {@code unknown}, an obfuscated identifier such as
 *       {@code _hidden}, a host name, empty text, garbage) stops the walk, and the last valid hop
 *       seen so far, which is a trusted proxy (ultimately the socket peer), is the client. Text to
 *       the left of a malformed hop cannot be attributed to a trusted proxy, so it is not used.
 *       Malformed headers never cause an exception.</li>
 *   <li>If every hop is a trusted proxy, the leftmost one is the client.</li>
 * </ol>
 *
 * <h2>Header</h2>
 * Exactly one header is read, {@link #headerName()}, chosen by {@link ForwardedHeader}. The other
 * header is never consulted: a trusted proxy that maintains one header passes the other through
 * from the client unchanged, so its content would be attacker-controlled.
 *
 * <h2>Parsing and bounds</h2>
 * Only IP literals are accepted; header text is never resolved through DNS. Ports
 * ({@code 192.0.2.1:8080}, {@code [2001:db8::1]:8080}), brackets and IPv6 zone ids
 * ({@code fe80::1%eth0}) are accepted and dropped. At most 64 hops are examined; an
 * {@code X-Forwarded-For} entry longer than 256 characters, or a {@code Forwarded} element longer
 * than 1024, is malformed.
 * The work per request is therefore bounded regardless of header size.
 *
 * <h2>Keys</h2>
 * IPv4 addresses, including IPv4-mapped IPv6 addresses such as {@code ::ffff:203.0.113.7}, are
 * returned as a dotted quad ({@code 203.0.113.7}). IPv6 addresses are masked to
 * {@linkplain Builder#ipv6PrefixLength(int) the configured prefix} (default 64, because a single
 * subscriber usually controls a whole /64) and returned in RFC 5952 form with the prefix length
 * ({@code 2001:db8:1:2::/64}); with a prefix length of 128 the address is returned without
 * suffix. Different spellings of the same address give the same key.
 *
 * <p>Instances are immutable and thread-safe; create one at startup and share it.
 */
public final class ClientIpResolver {

    /** Most hops examined per request; beyond that the nearest trusted proxy is the client. */
    static final int MAX_HOPS = 64;

    /** Longest {@code Forwarded} element considered; longer elements are malformed. */
    static final int MAX_FORWARDED_ELEMENT_LENGTH = 1024;

    private static final int DEFAULT_IPV6_PREFIX_LENGTH = 64;

    /** The forwarding header a {@link ClientIpResolver} reads behind trusted proxies. */
    public enum ForwardedHeader {
        /**
         * The de-facto standard {@code X-Forwarded-For: client, proxy1, proxy2}. Entries may carry
         * a port or brackets, as some proxies write them.
         */
        X_FORWARDED_FOR("X-Forwarded-For", HopParser.MAX_NODE_LENGTH),
        /**
         * RFC 7239 {@code Forwarded: for=client;proto=https, for="[2001:db8::1]:4711"}; the
         * {@code for} parameter of each element is used.
         */
        FORWARDED("Forwarded", MAX_FORWARDED_ELEMENT_LENGTH);

        private final String headerName;
        private final int maxHopLength;

        ForwardedHeader(String headerName, int maxHopLength) {
            this.headerName = headerName;
            this.maxHopLength = maxHopLength;
        }

        /**
         * The HTTP header name.
         *
         * @return {@code "X-Forwarded-For"} or {@code "Forwarded"}
         */
        public String headerName() {
            return headerName;
        }
    }

    private final List<IpRange> trustedProxies;
    private final ForwardedHeader forwardedHeader;
    private final int ipv6PrefixLength;

    private ClientIpResolver(Builder builder) {
        this.trustedProxies = List.copyOf(builder.trustedProxies);
        this.forwardedHeader = builder.forwardedHeader;
        this.ipv6PrefixLength = builder.ipv6PrefixLength;
    }

    /**
     * A resolver that trusts no proxy: the client is always the socket peer and no header is
     * consulted. Appropriate when clients connect directly. IPv6 addresses are grouped by /64.
     *
     * @return a new resolver; immutable and thread-safe
     */
    public static ClientIpResolver direct() {
        return builder().build();
    }

    /**
     * A builder that starts with no trusted proxies, {@code X-Forwarded-For} and IPv6 /64.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The only header this resolver reads. Callers pass all of its occurrences to
     * {@link #resolve(String, List)}. Its values are ignored unless the socket peer is a trusted
     * proxy, so for {@link #direct()} they need not be read at all. The other forwarding header
     * is never read, because a client can send it and proxies pass it through unchanged.
     *
     * @return {@code "X-Forwarded-For"} or {@code "Forwarded"}; never null
     */
    public String headerName() {
        return forwardedHeader.headerName();
    }

    /**
     * @return whether any proxy is trusted; when none is, the forwarding header is never read, and callers need
     *         not collect it
     */
    public boolean readsForwardedHeader() {
        return !trustedProxies.isEmpty();
    }

    /**
     * Whether a call's socket peer is one of the trusted proxies, so that what a proxy adds to the request for the
     * client may be believed: the forwarding header, and a plan header ({@code ratelimit.plan-from=header:X-Plan}).
     * A client that connects directly can send any header; only a trusted proxy's are its own.
     *
     * @param remoteAddress the socket peer address as {@link #resolve(String, List)} takes it, or {@code null} when
     *        unknown
     * @return whether it is an IP literal within the trusted proxies; always {@code false} when no proxy is trusted
     *         ({@link #direct()})
     */
    public boolean isTrustedProxy(String remoteAddress) {
        if (trustedProxies.isEmpty() || remoteAddress == null) {
            return false;
        }
        IpAddress peer = HopParser.parseNode(remoteAddress.strip());
        return peer != null && isTrusted(peer);
    }

    /**
     * Resolves the rate-limit key of a request's client.
     *
     * @param remoteAddress the socket peer address as the container reports it (for example
     *     {@code ServletRequest.getRemoteAddr()}): an IPv4 or IPv6 literal, possibly in brackets
     *     or with a zone id; null when unknown
     * @param headerValues every occurrence of {@link #headerName()} in arrival order; null or
     *     empty when the header is absent. Null elements are treated as malformed hops.
     * @return the client key as described in the {@linkplain ClientIpResolver class
     *     documentation}, or {@code null} when no client address can be determined because
     *     {@code remoteAddress} is null or not an IP literal
     */
    public @Nullable String resolve(@Nullable String remoteAddress, @Nullable List<String> headerValues) {
        return resolveHops(remoteAddress, headerValues);
    }

    /** {@link #resolve} over any character sequences; lets tests observe how much is read. */
    @Nullable
    String resolveHops(@Nullable String remoteAddress, @Nullable List<? extends CharSequence> headerValues) {
        if (trustedProxies.isEmpty() && remoteAddress != null && isCanonicalIpv4(remoteAddress)) {
            // The peer is the client, and its address is its key as it stands: no parse, no copy.
            return remoteAddress;
        }
        IpAddress client = clientAddress(remoteAddress, headerValues);
        return client == null ? null : key(client);
    }

    /** The client's whole address (IPv6 not grouped), or {@code null} when there is none. */
    private @Nullable IpAddress clientAddress(
            @Nullable String remoteAddress, @Nullable List<? extends CharSequence> headerValues) {
        if (remoteAddress == null) {
            return null;
        }
        IpAddress remote = HopParser.parseNode(remoteAddress.strip());
        if (remote == null) {
            return null;
        }
        if (!isTrusted(remote) || headerValues == null) {
            return remote;
        }
        return walkHops(remote, headerValues);
    }

    /**
     * A test of whether a call's client is in some address ranges, for exemptions ({@code ratelimit.exempt}): the
     * client as this resolver finds it for the {@code ip} key (through the trusted proxies only), with its whole
     * address, so an IPv6 range narrower than the key's grouping still matches exactly.
     *
     * @param cidrs addresses and ranges: {@code 10.0.0.0/8}, {@code 192.0.2.7}, {@code 2001:db8::/32}
     * @param what what an entry is, for messages, e.g. {@code ratelimit.exempt}
     * @return the test; a call with no client address (none, or not an IP literal) is in no range
     * @throws InvalidRateLimitConfigurationException naming the entry that is no address or range, and the fix
     */
    public Predicate<RequestContext> clientIn(Collection<String> cidrs, String what) {
        List<IpRange> ranges = new ArrayList<>();
        for (String cidr : cidrs) {
            ranges.add(IpRange.parse(cidr, what));
        }
        IpRange[] all = ranges.toArray(IpRange[]::new);
        boolean readsHeader = readsForwardedHeader();
        String header = headerName();
        return context -> {
            IpAddress client = clientAddress(context.remoteAddress(), readsHeader ? context.headers(header) : null);
            if (client != null) {
                for (IpRange range : all) {
                    if (range.contains(client)) {
                        return true;
                    }
                }
            }
            return false;
        };
    }

    /** Walks the hops from the right; see the class documentation. */
    private IpAddress walkHops(IpAddress remote, List<? extends CharSequence> headerValues) {
        IpAddress nearestTrusted = remote;
        int hopsLeft = MAX_HOPS;
        ListIterator<? extends CharSequence> values = headerValues.listIterator(headerValues.size());
        while (values.hasPrevious()) {
            if (hopsLeft == 0) {
                return nearestTrusted;
            }
            CharSequence value = values.previous();
            if (value == null) {
                return nearestTrusted;
            }
            int end = value.length();
            while (true) {
                if (hopsLeft-- == 0) {
                    return nearestTrusted;
                }
                int start = hopStart(value, end, forwardedHeader.maxHopLength);
                IpAddress hop = start < 0 ? null : parseHop(value, start, end);
                if (hop == null) {
                    return nearestTrusted;
                }
                if (!isTrusted(hop)) {
                    return hop;
                }
                nearestTrusted = hop;
                if (start == 0) {
                    break; // first hop of this header value
                }
                end = start - 1; // skip the comma
            }
        }
        return nearestTrusted;
    }

    /**
     * The start of the hop ending at {@code end}: one past the nearest comma before {@code end},
     * or 0. Looks at no more than {@code maxLength + 1} characters.
     *
     * @return the start index, or {@code -1} when the hop is longer than {@code maxLength}
     */
    private static int hopStart(CharSequence value, int end, int maxLength) {
        int lowest = end - maxLength - 1;
        for (int i = end - 1; i >= Math.max(lowest, 0); i--) {
            if (value.charAt(i) == ',') {
                return i + 1;
            }
        }
        return lowest < 0 ? 0 : -1;
    }

    private @Nullable IpAddress parseHop(CharSequence value, int start, int end) {
        while (start < end && isWhitespace(value.charAt(start))) {
            start++;
        }
        while (end > start && isWhitespace(value.charAt(end - 1))) {
            end--;
        }
        String hop = value.subSequence(start, end).toString();
        return forwardedHeader == ForwardedHeader.FORWARDED
                ? HopParser.parseForwardedElement(hop)
                : HopParser.parseNode(hop);
    }

    /**
     * @return whether {@code text} is an IPv4 address exactly as its key spells it: four decimal numbers of at most
     *         255, without leading zeros, joined by dots, and nothing else
     */
    static boolean isCanonicalIpv4(String text) {
        int length = text.length();
        if (length < 7 || length > 15) {
            return false;
        }
        int parts = 0;
        int i = 0;
        while (true) {
            int start = i;
            int value = 0;
            while (i < length && i - start < 3) {
                char c = text.charAt(i);
                if (c < '0' || c > '9') {
                    break;
                }
                value = value * 10 + (c - '0');
                i++;
            }
            int digits = i - start;
            if (digits == 0 || value > 255 || (digits > 1 && text.charAt(start) == '0')) {
                return false;
            }
            parts++;
            if (i == length) {
                return parts == 4;
            }
            if (parts == 4 || text.charAt(i) != '.') {
                return false;
            }
            i++;
        }
    }

    private static boolean isWhitespace(char c) {
        return c == ' ' || c == '\t';
    }

    private boolean isTrusted(IpAddress address) {
        for (IpRange range : trustedProxies) {
            if (range.contains(address)) {
                return true;
            }
        }
        return false;
    }

    private String key(IpAddress address) {
        if (address.isIpv4() || ipv6PrefixLength == 128) {
            return address.toString();
        }
        return address.masked(ipv6PrefixLength) + "/" + ipv6PrefixLength;
    }

    /** Describes the configuration, for logs. */
    @Override
    public String toString() {
        return "ClientIpResolver[header=" + headerName() + ", trustedProxies=" + trustedProxies + ", ipv6PrefixLength="
                + ipv6PrefixLength + "]";
    }

    /**
     * Configures a {@link ClientIpResolver}. Every setter validates its argument immediately.
     * Builders are not thread-safe; the resolvers they build are.
     */
    public static final class Builder {

        private List<IpRange> trustedProxies = List.of();
        private ForwardedHeader forwardedHeader = ForwardedHeader.X_FORWARDED_FOR;
        private int ipv6PrefixLength = DEFAULT_IPV6_PREFIX_LENGTH;

        private Builder() {}

        /**
         * Sets the reverse proxies whose forwarding header is believed, replacing any set
         * before. Each entry is a CIDR block or a single address, IPv4 or IPv6, such as
         * {@code 10.0.0.0/8}, {@code 127.0.0.1}, {@code fd00::/8} or {@code ::1}; surrounding
         * whitespace is ignored. An IPv4 entry also matches the IPv4-mapped IPv6 form of its
         * addresses. Trust only addresses that clients cannot connect from.
         *
         * @param cidrs the entries, not null; no entry may be null
         * @return this builder
         * @throws InvalidRateLimitConfigurationException when an entry is null, blank, not an
         *     address literal (host names are rejected), has a prefix length that is not a number
         *     or out of range, has host bits set beyond its prefix, or has a zone id
         * @throws NullPointerException when {@code cidrs} is null
         */
        public Builder trustedProxies(String... cidrs) {
            Objects.requireNonNull(cidrs, "cidrs");
            return trustedProxies(Arrays.asList(cidrs));
        }

        /**
         * Sets the trusted reverse proxies, replacing any set before; see
         * {@link #trustedProxies(String...)}.
         *
         * @param cidrs the entries, not null; no entry may be null
         * @return this builder
         * @throws InvalidRateLimitConfigurationException when an entry is invalid
         * @throws NullPointerException when {@code cidrs} is null
         */
        public Builder trustedProxies(Collection<String> cidrs) {
            Objects.requireNonNull(cidrs, "cidrs");
            List<IpRange> ranges = new ArrayList<>(cidrs.size());
            for (String cidr : cidrs) {
                ranges.add(IpRange.parse(cidr));
            }
            this.trustedProxies = ranges;
            return this;
        }

        /**
         * Sets which header is read behind trusted proxies; default
         * {@link ForwardedHeader#X_FORWARDED_FOR}. Choose the header your outermost trusted proxy
         * overwrites or appends to.
         *
         * @param header the header to read, not null
         * @return this builder
         * @throws NullPointerException when {@code header} is null
         */
        public Builder forwardedHeader(ForwardedHeader header) {
            this.forwardedHeader = Objects.requireNonNull(header, "header");
            return this;
        }

        /**
         * Sets how many leading bits of an IPv6 client address form its key; default 64, the
         * usual size of one subscriber's network. 128 keys on the whole address. IPv4 addresses
         * are always keyed whole.
         *
         * @param bits 1..128
         * @return this builder
         * @throws InvalidRateLimitConfigurationException when {@code bits} is out of range
         */
        public Builder ipv6PrefixLength(int bits) {
            if (bits < 1 || bits > 128) {
                throw new InvalidRateLimitConfigurationException("ipv6PrefixLength " + bits
                        + " is out of range (1..128). Use 64 to group IPv6 clients by /64 network"
                        + " (the default) or 128 to key on the whole address.");
            }
            this.ipv6PrefixLength = bits;
            return this;
        }

        /**
         * Builds a resolver from the current settings; later changes to this builder do not
         * affect it.
         *
         * @return a new resolver; immutable and thread-safe
         */
        public ClientIpResolver build() {
            return new ClientIpResolver(this);
        }
    }
}
