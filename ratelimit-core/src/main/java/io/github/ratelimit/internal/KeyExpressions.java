package io.github.ratelimit.internal;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.key.KeyResolver;
import io.github.ratelimit.key.KeyResolverFactory;
import io.github.ratelimit.key.KeyResolvers;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Compiles key expressions into resolvers, once, when a rule is registered.
 *
 * <p>Grammar: {@code expression = alternative ('|' alternative)*}, {@code alternative = atom ('+' atom)*},
 * {@code atom = global | ip | user | header:<Name> | <custom name>}. An alternative resolves when all its
 * atoms do, to their values joined by {@code +} (each value escaped, so {@code a+b} from one header cannot
 * pose as two); an expression resolves to its first alternative that does.
 */
public final class KeyExpressions {

    private KeyExpressions() {
    }

    /**
     * @param expression the key expression
     * @param custom the registered custom resolvers by name
     * @param clientIp the resolver behind {@code ip}
     * @param where the rule's source, for messages
     * @return the resolver
     * @throws InvalidRateLimitConfigurationException naming the unknown atom and the available ones
     */
    public static KeyResolver compile(String expression, Map<String, KeyResolver> custom, ClientIpResolver clientIp,
                                      String where) {
        return compile(expression, custom, clientIp, null, where);
    }

    /**
     * @param expression the key expression
     * @param custom the registered custom resolvers by name
     * @param clientIp the resolver behind {@code ip}
     * @param factory asked first with the whole expression, or {@code null}
     * @param where the rule's source, for messages
     * @return the resolver
     * @throws InvalidRateLimitConfigurationException naming the unknown atom and the available ones
     */
    public static KeyResolver compile(String expression, Map<String, KeyResolver> custom, ClientIpResolver clientIp,
                                      KeyResolverFactory factory, String where) {
        if (factory != null) {
            KeyResolver own = factory.create(expression, where);
            if (own != null) {
                return own;
            }
        }
        List<KeyResolver> alternatives = new ArrayList<>();
        for (String alternative : expression.split("\\|", -1)) {
            List<KeyResolver> parts = new ArrayList<>();
            for (String atom : alternative.split("\\+", -1)) {
                parts.add(atom(atom.trim(), expression, custom, clientIp, where));
            }
            alternatives.add(parts.size() == 1 ? parts.get(0) : compound(parts));
        }
        return alternatives.size() == 1 ? alternatives.get(0) : firstOf(alternatives);
    }

    private static KeyResolver atom(String atom, String expression, Map<String, KeyResolver> custom,
                                    ClientIpResolver clientIp, String where) {
        switch (atom) {
            case "global":
                return KeyResolvers.global();
            case "ip":
                return KeyResolvers.ip(clientIp);
            case "user":
                return KeyResolvers.user();
            default:
                break;
        }
        if (atom.startsWith("header:")) {
            String name = atom.substring("header:".length()).trim();
            if (name.isEmpty() || !name.chars().allMatch(KeyExpressions::isTokenChar)) {
                throw new InvalidRateLimitConfigurationException(where + ": key '" + expression + "' names header '"
                        + name + "', which is not a valid header name. Write 'header:<Name>', e.g. 'header:X-Api-Key'.");
            }
            return KeyResolvers.header(name);
        }
        KeyResolver resolver = custom.get(atom);
        if (resolver == null) {
            TreeSet<String> available = new TreeSet<>(List.of("global", "header:<name>", "ip", "user"));
            available.addAll(custom.keySet());
            String what = atom.isEmpty() ? "an empty key part" : "unknown key '" + atom + "'";
            throw new InvalidRateLimitConfigurationException(where + ": " + what
                    + (atom.equals(expression) ? "" : " in key expression '" + expression + "'")
                    + ". Available: " + available + ". Register custom keys with a KeyResolver.");
        }
        return resolver;
    }

    private static boolean isTokenChar(int c) {
        // RFC 9110 token characters, except '+' and '|', which the key grammar uses.
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || "!#$%&'*-.^_`~".indexOf(c) >= 0;
    }

    private static KeyResolver compound(List<KeyResolver> parts) {
        KeyResolver[] array = parts.toArray(KeyResolver[]::new);
        return context -> {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < array.length; i++) {
                String value = array[i].resolve(context);
                if (value == null || value.isEmpty()) {
                    return null;
                }
                if (i > 0) {
                    sb.append('+');
                }
                escape(value, sb);
            }
            return sb.toString();
        };
    }

    private static void escape(String value, StringBuilder sb) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '+' || c == '\\') {
                sb.append('\\');
            }
            sb.append(c);
        }
    }

    private static KeyResolver firstOf(List<KeyResolver> alternatives) {
        KeyResolver[] array = alternatives.toArray(KeyResolver[]::new);
        return (RequestContext context) -> {
            for (KeyResolver r : array) {
                String value = r.resolve(context);
                if (value != null && !value.isEmpty()) {
                    return value;
                }
            }
            return null;
        };
    }
}
