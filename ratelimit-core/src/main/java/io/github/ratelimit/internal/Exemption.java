package io.github.ratelimit.internal;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.key.ClientIpResolver;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The calls one rule never limits ({@code ratelimit.rules[i].exempt}): key values, compared with the key as the rule
 * resolves it, and, for a rule whose key reads the client address, addresses and ranges, matched against the call's
 * whole client address (so an IPv6 range narrower than the key's /64 grouping still matches exactly). An entry that
 * parses as an address or range is one; any other is a key value. Immutable; thread-safe.
 */
final class Exemption {

    /** The most entries one rule's exemption may have: each key value is a set entry, each range a test per call. */
    static final int MAX_ENTRIES = 10_000;

    private final Set<String> keys;
    private final Predicate<RequestContext> addresses;

    private Exemption(Set<String> keys, Predicate<RequestContext> addresses) {
        this.keys = keys;
        this.addresses = addresses;
    }

    /**
     * @param entries key values and (for rules keyed by address) addresses and ranges
     * @param rule the rule
     * @param clientIp how the limiter finds a call's client address
     * @return the exemption
     * @throws InvalidRateLimitConfigurationException for an empty or overlong entry, or too many
     */
    static Exemption of(List<String> entries, Rule rule, ClientIpResolver clientIp) {
        String where = rule.source() + ": exempt";
        if (entries.size() > MAX_ENTRIES) {
            throw new InvalidRateLimitConfigurationException(
                    where,
                    null,
                    entries.size() + " entries, more than the " + MAX_ENTRIES + " one rule may have",
                    "Exempt ranges (10.0.0.0/8) rather than addresses, or give "
                            + "the keys a plan of their own (ratelimit.keys) instead.");
        }
        boolean byAddress = KeyExpressions.atoms(rule.key()).contains("ip");
        List<String> ranges = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        for (String raw : entries) {
            String entry = raw == null ? "" : raw.strip();
            if (entry.isEmpty() || entry.length() > KeyExpressions.MAX_KEY_LENGTH) {
                throw new InvalidRateLimitConfigurationException(
                        where,
                        raw,
                        "an entry is "
                                + (entry.isEmpty()
                                        ? "empty"
                                        : "longer than " + KeyExpressions.MAX_KEY_LENGTH + " characters"),
                        "Give key values as the rule resolves them (alice for key user) or, for keys that read the "
                                + "client address, addresses and ranges (10.0.0.0/8).");
            }
            if (byAddress && looksLikeAddress(entry)) {
                ranges.add(entry);
            } else {
                keys.add(entry);
            }
        }
        Predicate<RequestContext> addresses = ranges.isEmpty() ? null : clientIp.clientIn(ranges, where + " address");
        return new Exemption(Set.copyOf(keys), addresses);
    }

    /** An entry of only digits, dots, colons, hex letters and a prefix length: an address, or a range, or a typo. */
    private static boolean looksLikeAddress(String entry) {
        return (entry.indexOf('.') >= 0 || entry.indexOf(':') >= 0)
                && entry.chars()
                        .allMatch(c -> (c >= '0' && c <= '9')
                                || (c >= 'a' && c <= 'f')
                                || (c >= 'A' && c <= 'F')
                                || c == '.'
                                || c == ':'
                                || c == '/');
    }

    /**
     * @param context the call
     * @return whether the call's client address is one the rule never limits (checked before its key is resolved, so
     *         an exempt address passes even when the rest of a combined key is missing)
     */
    boolean exemptsAddress(RequestContext context) {
        return addresses != null && addresses.test(context);
    }

    /**
     * @param key the key the rule resolved for a call
     * @return whether it is one the rule never limits
     */
    boolean exemptsKey(String key) {
        return keys.contains(key);
    }
}
