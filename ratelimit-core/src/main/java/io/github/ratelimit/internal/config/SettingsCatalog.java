package io.github.ratelimit.internal.config;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.config.RateLimitConfig;
import io.github.ratelimit.internal.config.RateLimitSettings.EntryPoint;
import io.github.ratelimit.internal.config.RateLimitSettings.Property;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Every {@code ratelimit.*} property: its name, default, allowed values, the entry point that reads it and what it
 * does, as the model ({@link RateLimitConfig}) declares them; the list the rules file,
 * Spring Boot's properties, the configuration metadata and the docs' tables are checked against; and the check of
 * names, which refuses an unknown one with the nearest known name.
 */
final class SettingsCatalog {

    static final String P = "ratelimit.";
    static final Pattern INDEXED =
            Pattern.compile("ratelimit\\.(rules|keys)\\[(\\d{1,6})]\\.([a-z0-9-]+)(\\[\\d{1,6}])?");
    static final Pattern LIST_ELEMENT = Pattern.compile("(.+)\\[(\\d{1,6})]");
    /** Every property, read off the model ({@link ConfigModel}). */
    static final List<Property> PROPERTIES = ConfigModel.properties();

    // ---- the parsed settings ---------------------------------------------------------------------------

    private SettingsCatalog() {}

    /**
     * @param names {@code ratelimit.*} property names, canonical
     * @param source where they come from, for messages, or {@code null}
     * @param entryPoint the entry point that reads them
     * @throws InvalidRateLimitConfigurationException for an unknown name (naming the nearest known one), or a name
     *         of the other entry point
     */
    static void checkNames(Iterable<String> names, String source, EntryPoint entryPoint) {
        for (String name : names) {
            if (!name.startsWith(P)) {
                continue;
            }
            String pattern = pattern(name);
            // Spring holds relaxed names as it reads them: maxWaiting as maxwaiting, and binds them to max-waiting.
            Property known = entryPoint == EntryPoint.SPRING_BOOT ? findRelaxed(pattern) : find(pattern);
            if (known == null) {
                String nearest = nearest(pattern);
                throw new InvalidRateLimitConfigurationException(
                        source,
                        name,
                        "unknown property '" + name + "'",
                        (nearest == null ? "Check its spelling." : "Did you mean '" + concrete(nearest, name) + "'?")
                                + " Every property: docs/properties.md"
                                + ".");
            }
            if (known.entryPoint() != null && known.entryPoint() != entryPoint) {
                throw new InvalidRateLimitConfigurationException(
                        source,
                        name,
                        "'" + name + "' is a setting of the "
                                + (known.entryPoint() == EntryPoint.SERVLET_FILTER
                                        ? "web.xml filter's rules file"
                                        : "Spring Boot starter")
                                + ", not of "
                                + (entryPoint == EntryPoint.SERVLET_FILTER ? "the web.xml filter" : "Spring Boot"),
                        otherFaceAction(known));
            }
        }
    }

    private static String otherFaceAction(Property known) {
        return switch (known.name()) {
            case "ratelimit.key-resolvers.<name>" ->
                "In Spring Boot, declare a KeyResolver bean: its bean name is the key's name.";
            case "ratelimit.rejection-handler" -> "In Spring Boot, declare a RejectionHandler bean.";
            case "ratelimit.annotations" -> "Spring Boot applies @RateLimit on every bean; remove the property.";
            default -> "In web.xml, the order of the filter-mapping elements decides; remove the property.";
        };
    }

    /**
     * The pattern of a concrete name: rule and key indices become {@code [i]}, map keys {@code <plan>} or
     * {@code <name>}, and a list element's index ({@code trusted-proxies[0]}) goes.
     */
    static String pattern(String name) {
        Matcher m = INDEXED.matcher(name);
        if (m.matches()) {
            return P + m.group(1) + "[i]." + m.group(3);
        }
        Matcher element = LIST_ELEMENT.matcher(name);
        if (element.matches()) {
            name = element.group(1);
        }
        if (name.startsWith("ratelimit.plans.") && name.length() > "ratelimit.plans.".length()) {
            return "ratelimit.plans.<plan>";
        }
        if (name.startsWith("ratelimit.key-resolvers.") && name.length() > "ratelimit.key-resolvers.".length()) {
            return "ratelimit.key-resolvers.<name>";
        }
        return name;
    }

    static Property find(String pattern) {
        for (Property p : PROPERTIES) {
            if (p.name().equals(pattern)) {
                return p;
            }
        }
        return null;
    }

    private static Property findRelaxed(String pattern) {
        String relaxed = pattern.replace("-", "").toLowerCase(Locale.ROOT);
        for (Property p : PROPERTIES) {
            if (p.name().replace("-", "").toLowerCase(Locale.ROOT).equals(relaxed)) {
                return p;
            }
        }
        return null;
    }

    /** The known pattern nearest to an unknown name, by edit distance, or {@code null} when none is near. */
    private static String nearest(String pattern) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (Property p : PROPERTIES) {
            int d = distance(pattern, p.name());
            if (d < bestDistance) {
                bestDistance = d;
                best = p.name();
            }
        }
        // Near enough to be a typo: a few edits, fewer than a third of the name's length.
        return bestDistance <= Math.max(2, pattern.length() / 3) ? best : null;
    }

    /** A known pattern written with the user's own index ({@code rules[i]} back to {@code rules[3]}). */
    private static String concrete(String pattern, String userName) {
        Matcher m =
                Pattern.compile("ratelimit\\.(rules|keys)\\[(\\d{1,6})]\\..*").matcher(userName);
        if (m.matches() && pattern.startsWith(P + m.group(1) + "[i]")) {
            return pattern.replace("[i]", "[" + m.group(2) + "]");
        }
        return pattern;
    }

    private static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitute = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitute, Math.min(previous[j] + 1, current[j - 1] + 1));
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
