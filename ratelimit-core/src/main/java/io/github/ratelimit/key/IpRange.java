package io.github.ratelimit.key;

import io.github.ratelimit.InvalidRateLimitConfigurationException;

/**
 * A CIDR block such as {@code 10.0.0.0/8} or {@code fd00::/8}, or a single address such as
 * {@code 127.0.0.1} or {@code ::1}.
 *
 * <p>Ranges are compared in the 128-bit IPv6 space in which an IPv4 block {@code a.b.c.d/n} is
 * {@code ::ffff:a.b.c.d/(96+n)}. Hence an IPv4-mapped address such as {@code ::ffff:10.1.2.3}
 * (parsed by {@link IpAddress} as IPv4) is inside {@code 10.0.0.0/8}, while an IPv6 block such as
 * {@code ::/0} also covers IPv4 addresses.
 *
 * <p>Instances are immutable and thread-safe.
 */
final class IpRange {

    private final String text;
    private final long networkHigh;
    private final long networkLow;
    private final long maskHigh;
    private final long maskLow;

    private IpRange(String text, IpAddress network, int prefixLength) {
        this.text = text;
        this.maskHigh = IpAddress.highMask(prefixLength);
        this.maskLow = IpAddress.lowMask(prefixLength);
        this.networkHigh = network.high;
        this.networkLow = network.low;
    }

    /**
     * Parses a trusted-proxy entry. Surrounding whitespace is ignored; anything else that is not
     * a literal address with an optional decimal prefix length is rejected. Host bits set beyond
     * the prefix (as in {@code 10.0.0.1/8}) are rejected too, because they usually mean a typo.
     *
     * @param spec the entry; may be null (which is rejected)
     * @throws InvalidRateLimitConfigurationException naming the value, the violated constraint
     *     and a fix
     */
    static IpRange parse(String spec) {
        return parse(spec, "trusted proxy");
    }

    /**
     * As {@link #parse(String)}, for a list whose entries the messages call {@code what}.
     *
     * @param spec the entry
     * @param what what an entry is, for messages: {@code trusted proxy}, {@code exempt address}
     * @return the range
     */
    static IpRange parse(String spec, String what) {
        if (spec == null) {
            throw invalid(what + " must not be null. Use a CIDR such as '10.0.0.0/8' or a"
                    + " single address such as '127.0.0.1'.");
        }
        String trimmed = spec.strip();
        if (trimmed.isEmpty()) {
            throw invalid(what + " '" + spec + "': value is blank. Use a CIDR such as"
                    + " '10.0.0.0/8' or a single address such as '127.0.0.1'.");
        }
        int slash = trimmed.indexOf('/');
        String addressText = slash < 0 ? trimmed : trimmed.substring(0, slash);
        int zone = addressText.indexOf('%');
        if (zone >= 0 && addressText.indexOf(':') >= 0) {
            String withoutZone = addressText.substring(0, zone) + trimmed.substring(addressText.length());
            throw invalid(what + " '" + spec + "': zone ids such as '"
                    + addressText.substring(zone) + "' are not supported. Remove the zone id, as"
                    + " in '" + withoutZone + "'.");
        }
        IpAddress address = IpAddress.parseLiteral(addressText);
        if (address == null) {
            throw invalid(what + " '" + spec + "': '" + addressText + "' is not an IPv4 or"
                    + " IPv6 address literal (host names are never resolved). Use a CIDR such as"
                    + " '10.0.0.0/8' or a single address such as '127.0.0.1'.");
        }
        boolean ipv4 = addressText.indexOf(':') < 0;
        int maxPrefix = ipv4 ? 32 : 128;
        String example = ipv4 ? "'10.0.0.0/8'" : "'fd00::/8'";
        int prefixLength = maxPrefix;
        if (slash >= 0) {
            String prefixText = trimmed.substring(slash + 1);
            if (!isDecimal(prefixText)) {
                throw invalid(what + " '" + spec + "': prefix length '" + prefixText
                        + "' is not a decimal number. Use a CIDR such as " + example + ".");
            }
            // At most four digits are significant; longer numbers are out of range either way.
            prefixLength = prefixText.length() > 4 ? Integer.MAX_VALUE : Integer.parseInt(prefixText);
            if (prefixLength > maxPrefix) {
                throw invalid(what + " '" + spec + "': prefix length " + prefixText
                        + " is out of range for " + (ipv4 ? "IPv4" : "IPv6") + " (0.." + maxPrefix
                        + "). Use a CIDR such as " + example + ".");
            }
        }
        int bits = ipv4 ? prefixLength + 96 : prefixLength;
        IpAddress network = address.masked(bits);
        if (!network.equals(address)) {
            String networkText = ipv4 ? network.ipv4Text() : network.toIpv6String();
            throw invalid(what + " '" + spec + "': address " + addressText + " has host bits"
                    + " set beyond the /" + prefixLength + " prefix. Use the network address '"
                    + networkText + "/" + prefixLength + "'.");
        }
        return new IpRange(trimmed, network, bits);
    }

    /** Whether {@code address} lies inside this range. */
    boolean contains(IpAddress address) {
        return ((address.high ^ networkHigh) & maskHigh) == 0 && ((address.low ^ networkLow) & maskLow) == 0;
    }

    /** The entry as configured, without surrounding whitespace. */
    @Override
    public String toString() {
        return text;
    }

    private static boolean isDecimal(String text) {
        if (text.isEmpty()) {
            return false;
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    private static InvalidRateLimitConfigurationException invalid(String message) {
        return new InvalidRateLimitConfigurationException(message);
    }
}
