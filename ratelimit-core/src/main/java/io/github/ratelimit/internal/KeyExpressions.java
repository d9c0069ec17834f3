package io.github.ratelimit.internal;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.MissingKeyPolicy;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.key.KeyResolver;
import io.github.ratelimit.support.LogText;
import io.github.ratelimit.support.RateLimitedLog;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * Compiles key expressions into resolvers, once, when a rule is registered, and defines the text of a resolved
 * key.
 *
 * <p>Grammar: {@code expression = alternative ('|' alternative)*}, {@code alternative = atom ('+' atom)*},
 * {@code atom = global | ip | user | basic-user | form-user[:<parameter>] | header:<Name> | param:<name> |
 * <custom name>}. An alternative
 * resolves when all its atoms do; an expression resolves to its first alternative that does. An alternative whose
 * resolver throws is logged and skipped, so the next one can still resolve.
 *
 * <h2>Resolved keys are injective</h2>
 * Within one rule, the key text determines which alternative resolved and every part's value, and no value can
 * pose as another:
 * <ul>
 *   <li>each part's value is escaped ({@link #escape}): {@code \}, {@code +} and {@code ~} get a {@code \} in
 *       front;</li>
 *   <li>parts are joined by {@code +};</li>
 *   <li>when the expression has several alternatives, the key starts with the alternative's own text and
 *       {@code =} ({@code user=alice}, {@code header:X-Client=alice}), so an anonymous caller sending
 *       {@code X-Client: alice} never counts against user {@code alice};</li>
 *   <li>a key longer than {@value #MAX_KEY_LENGTH} characters becomes {@code ~sha256:<hex>} of it; no other key
 *       starts with an unescaped {@code ~}, so a value cannot pose as a hash (nor as the shared bucket of calls
 *       without a key, {@value #SHARED_MISSING_KEY}).</li>
 * </ul>
 * Keys built from one expression by a {@link KeyResolver.Factory} (SpEL) are escaped the same way.
 */
public final class KeyExpressions {

    /** Keys longer than this are replaced by a hash of them. */
    public static final int MAX_KEY_LENGTH = 128;

    /** The key of the bucket {@link MissingKeyPolicy#SHARED} counts calls without a key in. */
    public static final String SHARED_MISSING_KEY = "~missing";

    /** The start of a hashed key. */
    public static final String HASH_PREFIX = "~sha256:";

    private static final RateLimitedLog RESOLVER_LOG = new RateLimitedLog(10_000_000_000L);

    private KeyExpressions() {}

    /**
     * @param expression the key expression
     * @param custom the registered custom resolvers by name
     * @param clientIp the resolver behind {@code ip}
     * @param where the rule's source, for messages
     * @return the resolver of canonical keys (see the class documentation)
     * @throws InvalidRateLimitConfigurationException naming the unknown atom and the available ones
     */
    public static KeyResolver compile(
            String expression, Map<String, KeyResolver> custom, ClientIpResolver clientIp, String where) {
        return compile(expression, custom, clientIp, null, where);
    }

    /**
     * @param expression the key expression
     * @param custom the registered custom resolvers by name
     * @param clientIp the resolver behind {@code ip}
     * @param factory asked first with the whole expression, or {@code null}
     * @param where the rule's source, for messages
     * @return the resolver of canonical keys (see the class documentation)
     * @throws InvalidRateLimitConfigurationException naming the unknown atom and the available ones
     */
    public static KeyResolver compile(
            String expression,
            Map<String, KeyResolver> custom,
            ClientIpResolver clientIp,
            KeyResolver.Factory factory,
            String where) {
        if (factory != null) {
            KeyResolver own = factory.create(expression, where);
            if (own != null) {
                return new Compiled(new Alternative[] {new Alternative(expression, new KeyResolver[] {own})}, where);
            }
        }
        String[] texts = expression.split("\\|", -1);
        Alternative[] alternatives = new Alternative[texts.length];
        for (int i = 0; i < texts.length; i++) {
            List<KeyResolver> parts = new ArrayList<>();
            List<String> atoms = new ArrayList<>();
            for (String atom : texts[i].split("\\+", -1)) {
                String a = atom.trim();
                parts.add(atom(a, expression, custom, clientIp, where));
                atoms.add(a);
            }
            alternatives[i] = new Alternative(String.join("+", atoms), parts.toArray(KeyResolver[]::new));
        }
        return new Compiled(alternatives, where);
    }

    /**
     * Compiles an expression whose value is used as it is, not as a key: a rule's {@link
     * Rule#permits() permits}. One atom or the factory's expression, or alternatives separated by
     * {@code |} (the first that resolves); no {@code +}.
     *
     * @param expression the expression
     * @param custom the registered custom resolvers by name
     * @param clientIp the resolver behind {@code ip}
     * @param factory asked first with the whole expression, or {@code null}
     * @param where the rule's source and the attribute, for messages
     * @return a resolver of the raw value, {@code null} when nothing resolves
     * @throws InvalidRateLimitConfigurationException naming an unknown atom and the available ones
     */
    public static KeyResolver compileValue(
            String expression,
            Map<String, KeyResolver> custom,
            ClientIpResolver clientIp,
            KeyResolver.Factory factory,
            String where) {
        return compileValue(expression, custom, clientIp, factory, where, null);
    }

    /**
     * As {@link #compileValue(String, Map, ClientIpResolver, KeyResolver.Factory, String)}, reading the built-in
     * grammar's {@code header:<Name>} atoms only from the calls a test believes (a plan header only from a trusted
     * proxy); for any other call such an atom resolves to nothing. The factory's expressions and the other atoms are
     * not affected.
     *
     * @param expression the expression
     * @param custom the registered custom resolvers by name
     * @param clientIp the resolver behind {@code ip}
     * @param factory asked first with the whole expression, or {@code null}
     * @param where the rule's source and the attribute, for messages
     * @param headersBelieved whether a call's {@code header:} atoms are read, or {@code null} for always
     * @return a resolver of the raw value, {@code null} when nothing resolves
     * @throws InvalidRateLimitConfigurationException naming an unknown atom and the available ones
     */
    public static KeyResolver compileValue(
            String expression,
            Map<String, KeyResolver> custom,
            ClientIpResolver clientIp,
            KeyResolver.Factory factory,
            String where,
            Predicate<RequestContext> headersBelieved) {
        if (factory != null) {
            KeyResolver own = factory.create(expression, where);
            if (own != null) {
                return own;
            }
        }
        String[] texts = expression.split("\\|", -1);
        KeyResolver[] parts = new KeyResolver[texts.length];
        for (int i = 0; i < texts.length; i++) {
            String atom = texts[i].trim();
            KeyResolver part = atom(atom, expression, custom, clientIp, where);
            parts[i] = headersBelieved != null && atom.startsWith("header:")
                    ? context -> headersBelieved.test(context) ? part.resolve(context) : null
                    : part;
        }
        return context -> {
            for (KeyResolver part : parts) {
                String value = part.resolve(context);
                if (value != null && !value.isEmpty()) {
                    return value;
                }
            }
            return null;
        };
    }

    /**
     * @param expression a key expression of the built-in grammar
     * @return its atoms, trimmed, over all alternatives ({@code user|ip} gives {@code user} and {@code ip})
     */
    public static List<String> atoms(String expression) {
        List<String> atoms = new ArrayList<>();
        for (String alternative : expression.split("\\|", -1)) {
            for (String atom : alternative.split("\\+", -1)) {
                atoms.add(atom.trim());
            }
        }
        return atoms;
    }

    /**
     * @param key a resolved key, canonical
     * @return the key, or its hash when it is longer than {@value #MAX_KEY_LENGTH} characters
     */
    public static String bounded(String key) {
        if (key.length() <= MAX_KEY_LENGTH) {
            return key;
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return HASH_PREFIX + HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }

    /**
     * Refuses a key with a lone UTF-16 surrogate: it has no UTF-8 form (encoding writes {@code ?}), so it would meet
     * another key in Redis and not in the local store. The limiter never produces one (it escapes a lone surrogate
     * in a value as {@code \}{@code uXXXX}); a key given from outside (an operator's, a caller's of
     * {@code RateLimiter.reset}) must be given as the limiter shows it.
     *
     * @param key a key
     * @param where what the key is for, for the message ({@code rule 'api'})
     * @throws IllegalArgumentException naming the index and the surrogate
     */
    public static void checkNoLoneSurrogate(String key, String where) {
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < key.length() && Character.isLowSurrogate(key.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new IllegalArgumentException("key for " + where + " contains a lone UTF-16 surrogate, "
                        + LogText.escape(String.valueOf(c)) + ", at index " + i + ", which has no UTF-8 form; give "
                        + "the key as decisions show it (the limiter writes a lone surrogate as \\u"
                        + String.format(Locale.ROOT, "%04x", (int) c) + "), or the address a listing gives");
            }
        }
    }

    /**
     * @param key a key
     * @return whether it is the hash the limiter makes of a key over {@value #MAX_KEY_LENGTH} characters:
     *         {@value #HASH_PREFIX} and 64 lowercase hex digits
     */
    public static boolean isHash(String key) {
        if (key.length() != HASH_PREFIX.length() + 64 || !key.startsWith(HASH_PREFIX)) {
            return false;
        }
        for (int i = HASH_PREFIX.length(); i < key.length(); i++) {
            char c = key.charAt(i);
            if (!(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'f')) {
                return false;
            }
        }
        return true;
    }

    /**
     * Why a rule can never count by a key given from outside (an operator's) that has a form only the limiter itself
     * writes: one starting with {@value #HASH_PREFIX} that is no hash ({@link #isHash}), or the shared bucket of calls
     * without a key, {@value #SHARED_MISSING_KEY}, for a rule that keeps none. No value can take these forms (values
     * escape a {@code ~}), nor can a tag of an alternative unless the rule's expression has a {@code ~}, which is then
     * left to the caller.
     *
     * @param key a key, as the limiter counts by it (a longer one than {@value #MAX_KEY_LENGTH} characters hashed)
     * @param rule the rule
     * @return why the rule never counts by the key, or {@code null} when it may
     */
    public static String neverCounted(String key, Rule rule) {
        if (rule.key().indexOf('~') >= 0) {
            return null;
        }
        if (key.startsWith(HASH_PREFIX) && !isHash(key)) {
            return "it starts like a hashed key and is none: the limiter writes a key over " + MAX_KEY_LENGTH
                    + " characters as " + HASH_PREFIX + " and the SHA-256 of the key in 64 lowercase hex digits";
        }
        if (key.equals(SHARED_MISSING_KEY) && rule.onMissingKey() != MissingKeyPolicy.SHARED) {
            return "it is the bucket of calls without a key, which only a rule with on-missing-key SHARED keeps, and "
                    + "this rule's is " + rule.onMissingKey();
        }
        return null;
    }

    /**
     * Escapes one part's value: {@code \}, {@code +} and {@code ~} get a {@code \} in front, and a lone UTF-16
     * surrogate (which has no UTF-8 form, so two such values could meet as one stored key) becomes
     * {@code \}{@code uXXXX}.
     *
     * @param value a value
     * @param sb receives the escaped value
     */
    public static void escape(String value, StringBuilder sb) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '+' || c == '\\' || c == '~') {
                sb.append('\\').append(c);
            } else if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c)
                        && i + 1 < value.length()
                        && Character.isLowSurrogate(value.charAt(i + 1))) {
                    sb.append(c).append(value.charAt(++i));
                } else {
                    sb.append("\\u").append(String.format(Locale.ROOT, "%04x", (int) c));
                }
            } else {
                sb.append(c);
            }
        }
    }

    private static boolean needsEscape(String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '+' || c == '\\' || c == '~' || Character.isSurrogate(c)) {
                return true;
            }
        }
        return false;
    }

    private static KeyResolver atom(
            String atom, String expression, Map<String, KeyResolver> custom, ClientIpResolver clientIp, String where) {
        switch (atom) {
            case "global":
                return KeyResolvers.global();
            case "ip":
                return KeyResolvers.ip(clientIp);
            case "user":
                return KeyResolvers.user();
            case "basic-user":
                return KeyResolvers.basicUser();
            case "form-user":
                return KeyResolvers.formUser(KeyResolvers.DEFAULT_USERNAME_PARAMETER);
            default:
                break;
        }
        if (atom.startsWith("header:")) {
            String name = atom.substring("header:".length()).trim();
            if (name.isEmpty() || !name.chars().allMatch(KeyExpressions::isTokenChar)) {
                throw new InvalidRateLimitConfigurationException(
                        where,
                        expression,
                        "key '" + expression + "' names " + "header '" + name + "', which is not a valid header name",
                        "Write 'header:<Name>', e.g. " + "'header:X-Api-Key'.");
            }
            return KeyResolvers.header(name);
        }
        if (atom.startsWith("form-user:")) {
            String name = atom.substring("form-user:".length()).trim();
            if (name.isEmpty() || !name.chars().allMatch(KeyExpressions::isTokenChar)) {
                throw new InvalidRateLimitConfigurationException(
                        where,
                        expression,
                        "key '" + expression + "' names " + "form parameter '" + name + "', which is not a valid name",
                        "Write 'form-user' (the parameter "
                                + "'username') or 'form-user:<parameter>', e.g. 'form-user:email'.");
            }
            return KeyResolvers.formUser(name);
        }
        if (atom.startsWith("param:")) {
            String name = atom.substring("param:".length()).trim();
            if (name.isEmpty() || !name.chars().allMatch(KeyExpressions::isTokenChar)) {
                throw new InvalidRateLimitConfigurationException(
                        where,
                        expression,
                        "key '" + expression + "' names " + "request parameter '" + name
                                + "', which is not a valid name",
                        "Write 'param:<name>', e.g. " + "'param:username'.");
            }
            return KeyResolvers.parameter(name);
        }
        KeyResolver resolver = custom.get(atom);
        if (resolver == null) {
            TreeSet<String> available = new TreeSet<>(List.of(
                    "basic-user", "form-user[:<parameter>]", "global", "header:<name>", "ip", "param:<name>", "user"));
            available.addAll(custom.keySet());
            String what = atom.isEmpty() ? "an empty key part" : "unknown key '" + atom + "'";
            throw new InvalidRateLimitConfigurationException(
                    where,
                    expression,
                    what + (atom.equals(expression) ? "" : " in key expression '" + expression + "'"),
                    "Available: " + available + ". Register custom keys with a KeyResolver.");
        }
        return resolver;
    }

    private static boolean isTokenChar(int c) {
        // RFC 9110 token characters, except '+' and '|', which the key grammar uses.
        return (c >= 'a' && c <= 'z')
                || (c >= 'A' && c <= 'Z')
                || (c >= '0' && c <= '9')
                || "!#$%&'*-.^_`~".indexOf(c) >= 0;
    }

    /** One alternative: its text (the tag of its keys when there are several) and its parts' resolvers. */
    private record Alternative(String text, KeyResolver[] parts) {}

    /** A compiled expression; thread-safe. */
    private static final class Compiled implements KeyResolver {

        private final Alternative[] alternatives;
        private final String where;

        Compiled(Alternative[] alternatives, String where) {
            this.alternatives = alternatives;
            this.where = where;
        }

        @Override
        public String resolve(RequestContext context) {
            boolean tagged = alternatives.length > 1;
            for (Alternative alternative : alternatives) {
                String key;
                try {
                    key = resolve(alternative, context, tagged);
                } catch (RuntimeException e) {
                    RESOLVER_LOG.log(
                            Level.WARNING,
                            where + ": resolving key part '" + alternative.text + "' failed; "
                                    + (tagged ? "trying the next alternative" : "the key is missing"),
                            e);
                    key = null;
                }
                if (key != null) {
                    return bounded(key);
                }
            }
            return null;
        }

        private static String resolve(Alternative alternative, RequestContext context, boolean tagged) {
            KeyResolver[] parts = alternative.parts;
            if (parts.length == 1 && !tagged) {
                // The common case: one atom, no tag. Copy only when something needs escaping.
                String value = parts[0].resolve(context);
                if (value == null || value.isEmpty()) {
                    return null;
                }
                if (!needsEscape(value)) {
                    return value;
                }
                StringBuilder sb = new StringBuilder(value.length() + 4);
                escape(value, sb);
                return sb.toString();
            }
            StringBuilder sb = new StringBuilder();
            if (tagged) {
                sb.append(alternative.text).append('=');
            }
            for (int i = 0; i < parts.length; i++) {
                String value = parts[i].resolve(context);
                if (value == null || value.isEmpty()) {
                    return null;
                }
                if (i > 0) {
                    sb.append('+');
                }
                escape(value, sb);
            }
            return sb.toString();
        }
    }
}
