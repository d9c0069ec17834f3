package io.github.ratelimit.testing;

import io.github.ratelimit.RequestContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Random rule names, key expressions and request values for property tests of bucket identity, biased towards
 * the characters that separate things: {@code :} in rule names, and {@code + = \ ~ : { } % |}, NUL, CR/LF, lone
 * surrogates and long values in keys.
 */
public final class RandomKeyCases {

    /** What a request presents: a principal and three headers, any of which may be absent. */
    public record Request(String user, String a, String b, String c) {

        public RequestContext context() {
            RequestContext.Builder builder = RequestContext.builder();
            if (user != null) {
                builder.principal(user);
            }
            if (a != null) {
                builder.header("X-A", a);
            }
            if (b != null) {
                builder.header("X-B", b);
            }
            if (c != null) {
                builder.header("X-C", c);
            }
            return builder.build();
        }

        /** The value of an atom as the built-in resolvers read it (trimmed; blank is missing), or null. */
        public String value(String atom) {
            String v = switch (atom) {
                case "user" -> user;
                case "header:X-A" -> a;
                case "header:X-B" -> b;
                default -> c;
            };
            if (v == null || v.trim().isEmpty()) {
                return null;
            }
            return v.trim();
        }
    }

    /** One case: a rule name, a key expression and a request. */
    public record Case(String rule, String expression, Request request) {

        /**
         * What a bucket must be identified by, computed independently of the code under test: the rule, which
         * alternative resolved (by position) and its parts' values; {@code null} when no alternative resolves.
         */
        public List<Object> identity() {
            String[] alternatives = expression.split("\\|");
            for (int i = 0; i < alternatives.length; i++) {
                List<Object> identity = new ArrayList<>(List.of(rule, i));
                boolean all = true;
                for (String atom : alternatives[i].split("\\+")) {
                    String v = request.value(atom);
                    if (v == null) {
                        all = false;
                        break;
                    }
                    identity.add(v);
                }
                if (all) {
                    return identity;
                }
            }
            return null;
        }
    }

    private static final String RULE_CHARS = "ab:%:-_.#[]/";
    private static final String[] ATOMS = {"user", "header:X-A", "header:X-B", "header:X-C"};
    private static final String[] VALUE_PIECES = {
        "a",
        "b",
        "alice",
        ":",
        "+",
        "=",
        "\\",
        "~",
        "{",
        "}",
        "%",
        "%7B",
        "%3A",
        "|",
        " ",
        "\u0000",
        "\r\n",
        "\ud800",
        "\udc00",
        "\ud83d\ude00",
        "é",
        "~sha256:",
        "~missing",
        "user=",
        "header:X-A=",
        "ip",
        "203.0.113.7"
    };

    private final Random random;

    public RandomKeyCases(long seed) {
        this.random = new Random(seed);
    }

    public Case next() {
        return new Case(ruleName(), expression(), request());
    }

    public String ruleName() {
        int length = 1 + random.nextInt(8);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < length; i++) {
            sb.append(RULE_CHARS.charAt(random.nextInt(RULE_CHARS.length())));
        }
        return sb.toString();
    }

    public String expression() {
        int alternatives = 1 + random.nextInt(3);
        List<String> texts = new ArrayList<>();
        while (texts.size() < alternatives) {
            int parts = 1 + random.nextInt(2);
            List<String> atoms = new ArrayList<>();
            while (atoms.size() < parts) {
                String atom = ATOMS[random.nextInt(ATOMS.length)];
                if (!atoms.contains(atom)) {
                    atoms.add(atom);
                }
            }
            String text = String.join("+", atoms);
            if (!texts.contains(text)) {
                texts.add(text);
            }
        }
        return String.join("|", texts);
    }

    public Request request() {
        return new Request(value(), value(), value(), value());
    }

    public String value() {
        if (random.nextInt(4) == 0) {
            return null;
        }
        if (random.nextInt(12) == 0) {
            return "v".repeat(100 + random.nextInt(60)) + random.nextInt(3); // around the hashing threshold
        }
        int pieces = 1 + random.nextInt(4);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < pieces; i++) {
            sb.append(VALUE_PIECES[random.nextInt(VALUE_PIECES.length)]);
        }
        return sb.toString();
    }
}
