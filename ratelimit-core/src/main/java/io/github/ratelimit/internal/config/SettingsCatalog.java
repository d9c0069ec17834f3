package io.github.ratelimit.internal.config;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.config.RateLimitSettings.EntryPoint;
import io.github.ratelimit.internal.config.RateLimitSettings.Property;

import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Every {@code ratelimit.*} property: its name, default, allowed values, the entry point that reads it and what it
 * does, in one list that the rules file, Spring Boot's properties, the configuration metadata and the docs' tables are
 * checked against; and the check of names, which refuses an unknown one with the nearest known name.
 */
final class SettingsCatalog {

    static final String P = "ratelimit.";
    static final Pattern INDEXED = Pattern.compile("ratelimit\\.(rules|keys)\\[(\\d{1,6})]\\.([a-z0-9-]+)(\\[\\d{1,6}])?");
    static final Pattern LIST_ELEMENT = Pattern.compile("(.+)\\[(\\d{1,6})]");
    static final List<Property> PROPERTIES = List.of(
            p("ratelimit.enabled", "true", "Whether rate limiting is on; false lets every request through untouched.", "true", "false"),
            p("ratelimit.store", "auto", "Where buckets live: auto (Redis when one is configured, else this JVM), local or redis.", "auto", "local", "redis"),
            p("ratelimit.local.maximum-keys", "100000", "Most buckets the local store keeps in memory."),
            p("ratelimit.redis.url", null, "Redis server: redis://[user:password@]host:port[/database], rediss:// for TLS."),
            p("ratelimit.redis.sentinel.master", null, "Name of the master the Redis sentinels monitor."),
            p("ratelimit.redis.sentinel.nodes", null, "Redis sentinels, as host:port, comma-separated."),
            p("ratelimit.redis.cluster.nodes", null, "Some nodes of a Redis Cluster, as host:port, comma-separated."),
            p("ratelimit.redis.username", null, "ACL user for Sentinel and Cluster connections (a URL carries its own)."),
            p("ratelimit.redis.password", null, "Password for Sentinel and Cluster connections (a URL carries its own)."),
            p("ratelimit.redis.ssl", "false", "Whether Sentinel and Cluster connections use TLS (a URL says so with rediss://).", "true", "false"),
            p("ratelimit.redis.key-prefix", "ratelimit", "First part of every Redis key; instances that share limits share it."),
            p("ratelimit.redis.command-timeout", "50ms", "A Redis command fails after this, and the rule's failure policy applies."),
            p("ratelimit.redis.background-timeout", "2s", "How long Redis may take to answer the store's calls off the request path, on connections of their own: renewing the leases of calls in flight, and giving back slots and tokens that could not be given back when a call ended. Longer than the command timeout, so a slow Redis loses none of them."),
            p("ratelimit.redis.connect-timeout", "200ms", "Connecting, or waiting for a pooled connection, fails after this."),
            p("ratelimit.redis.pool-size", "16", "Connections per Redis node."),
            p("ratelimit.redis.auto-pipelining", "true", "Whether decisions made at once by several threads share Redis round trips (standalone and Sentinel; not on a Cluster).", "true", "false"),
            p("ratelimit.default-store-failure-policy", "fail-open", "What rules that do not say decide when the store fails.", "fail-open", "fail-closed", "local-fallback"),
            p("ratelimit.local-fallback-share", "1", "Share of a limit a local-fallback bucket holds (1/N for N instances)."),
            p("ratelimit.exempt", null, "Client addresses and ranges no rule limits, e.g. 10.0.0.0/8, 192.0.2.7; counted in metrics with basis exempt."),
            p("ratelimit.shadow", "false", "A dry run: every rule only records what it would reject (as mode shadow), for rolling a configuration out.", "true", "false"),
            p("ratelimit.max-waiting", String.valueOf(RateLimiter.Builder.DEFAULT_MAX_WAITING), "Most requests waiting out a SOFT delay at once, all rules together."),
            p("ratelimit.trusted-proxies", null, "Addresses or CIDRs of reverse proxies whose forwarding header is believed."),
            p("ratelimit.trust-container-forwarding", "false", "Whether the ip key takes the client address the web server reports (its own forwarding configuration decided) instead of the connection's; not with trusted-proxies.", "true", "false"),
            p("ratelimit.forwarded-header", "x-forwarded-for", "The one forwarding header the trusted proxies write.", "x-forwarded-for", "forwarded"),
            p("ratelimit.ipv6-prefix-length", "64", "IPv6 clients are keyed by this prefix length (1 to 128)."),
            p("ratelimit.headers", "x-ratelimit, ietf-draft-09", "Rate-limit header styles written on responses, or none.", "x-ratelimit", "ietf-draft-09", "none"),
            p("ratelimit.reject-status", "429", "Status of a rejected request, 400 to 599."),
            p("ratelimit.log-shadow", "true", "Whether to log what SHADOW rules would have rejected.", "true", "false"),
            p("ratelimit.metrics", "true", "Whether to record metrics with Micrometer when it is present.", "true", "false"),
            p("ratelimit.near-limit", "0.2", "Share of a window's limit below which a permitted call counts in "
                    + "ratelimit.near.limit: 0.2 counts calls that left less than 20 % (above 0, at most 1)."),
            p("ratelimit.limit-cache-ttl", "1m", "How long per-key limits (ratelimit.keys, or a LimitProvider) are cached."),
            p("ratelimit.limit-store.enabled", "false", "Whether per-key limits and plan assignments are also kept in the Redis of the store, changed at run time (they win over ratelimit.keys).", "true", "false"),
            p("ratelimit.limit-store.refresh-interval", "1s", "How often each instance reads the changes of per-key limits made elsewhere: how long another instance keeps a key's old limits."),
            p("ratelimit.plans.<plan>", null, "Limits of a named plan, e.g. 10/1m, 1000/1d."),
            p("ratelimit.plan-from", null, "Where a call's plan comes from, for keys with no entry of their own: header:<Name> (believed only from trusted-proxies), a custom key, authority:<prefix> (Spring Security: authority PLAN_pro selects plan pro) or SpEL."),
            p("ratelimit.plan-header-trusted", "false", "Whether a plan header (plan-from=header:<Name>) is believed from every peer rather than only from trusted-proxies: only when nothing reaches the application without passing something that sets or removes the header; without trusted-proxies, a plan header needs it.", "true", "false"),
            p("ratelimit.plan-rules", null, "Names of the rules plans from the call are for; by default every rule counting by the user."),
            p("ratelimit.keys[i].key", null, "<key expression>:<key>, e.g. user:241531, whose limits these are."),
            p("ratelimit.keys[i].limits", null, "The key's own limits; or give a plan."),
            p("ratelimit.keys[i].plan", null, "A plan from ratelimit.plans for the key; or give limits."),
            p("ratelimit.keys[i].rules", null, "Names of the rules the key's limits are for; by default every rule counting by the key's expression."),
            p("ratelimit.rules[i].name", "rules[i]", "The URL rule's name (buckets, headers, metrics)."),
            p("ratelimit.rules[i].paths", null, "Ant-style path patterns: /api/**, /users/*/orders, /files/*.pdf."),
            p("ratelimit.rules[i].methods", null, "HTTP methods it applies to (any case; GET covers HEAD); all when empty."),
            p("ratelimit.rules[i].key", "global", "What to count by: global, ip, user, basic-user, form-user[:<parameter>], header:<Name>, param:<name>, a custom key; + and | combine."),
            p("ratelimit.rules[i].limits", null, "Windows, e.g. 5/1s, 100/1m, 5/1s burst=20; calendar quotas 1000/1mo, 500/1w, 100/1d@Europe/Berlin, which make the rule a fixed window."),
            p("ratelimit.rules[i].concurrency", null, "Makes a rule of calls in flight instead of windows: at most this many requests per key at once, each holding a slot until its response is written; on Redis, leases that come back within 15 s of a crash."),
            p("ratelimit.rules[i].mode", "hard", "What happens to a request over the limit.", "hard", "soft", "shadow"),
            p("ratelimit.rules[i].max-delay", null, "Longest a SOFT request waits, e.g. 500ms; required for soft."),
            p("ratelimit.rules[i].max-waiting", String.valueOf(Rule.DEFAULT_MAX_WAITING), "Most requests of this SOFT rule waiting at once."),
            p("ratelimit.rules[i].cost", "1", "Tokens one request takes."),
            p("ratelimit.rules[i].count", "all", "Which requests the tokens pay for: all admitted, only failed attempts, or only responses with the statuses given, e.g. statuses:404,5xx.", "all", "failures", "statuses:<codes>"),
            p("ratelimit.rules[i].exempt", null, "Key values the rule never limits, as it resolves them (alice for key user); for keys that read the client address, addresses and ranges too."),
            p("ratelimit.rules[i].permits", null, "How many permits a request counts as, resolved like a key: header:<Name>, param:<name>, a custom key, or SpEL over #request; a whole number (0 counts as 1; leading zeros are ignored; one no window holds, however many digits, gets 413); anything else refuses the request."),
            p("ratelimit.rules[i].phase", "after-authentication", "Whether the rule decides before authentication (for login attempts) or after.", "after-authentication", "before-authentication"),
            p("ratelimit.rules[i].on-store-failure", "default", "What the rule decides when the store fails.", "default", "fail-open", "fail-closed", "local-fallback"),
            p("ratelimit.rules[i].on-missing-key", "reject", "What the rule does when its key cannot be resolved.", "reject", "skip", "shared"),
            p("ratelimit.rules[i].algorithm", "token-bucket", "How the rule counts calls within its windows; fixed-window when not given and a limit is a calendar quota.", "token-bucket", "fixed-window", "sliding-window-log", "sliding-window-counter", "leaky-bucket"),
            p("ratelimit.rules[i].local-first-tokens", null, "Tokens an instance may take before synchronizing with a shared store."),
            p("ratelimit.rules[i].local-first-time", "100ms", "Longest an instance goes without synchronizing, with local-first-tokens."),
            only(EntryPoint.SERVLET_FILTER, "ratelimit.rejection-handler", null, "A RejectionHandler class (public no-argument constructor) that writes rejections."),
            only(EntryPoint.SERVLET_FILTER, "ratelimit.annotations", "true", "Whether to apply the @RateLimit annotations of the registered servlets.", "true", "false"),
            only(EntryPoint.SERVLET_FILTER, "ratelimit.key-resolvers.<name>", null, "A KeyResolver class (public no-argument constructor) that keys can name."),
            only(EntryPoint.SPRING_BOOT, "ratelimit.method-headers", "false", "Whether @RateLimit rules of methods other than the request's handler (a service method throttling an outbound call) add their items to the response's rate-limit headers.", "true", "false"),
            only(EntryPoint.SPRING_BOOT, "ratelimit.filter.order", "-99", "Order of the rate-limit filter; by default right after Spring Security's chain."),
            only(EntryPoint.SPRING_BOOT, "ratelimit.filter.before-authentication-order", "-101", "Order of the filter for rules with phase before-authentication; by default right before Spring Security's chain."));

    private static Property p(String name, String defaultValue, String description, String... values) {
        return new Property(name, defaultValue, List.of(values), null, description);
    }

    private static Property only(EntryPoint entryPoint, String name, String defaultValue, String description, String... values) {
        return new Property(name, defaultValue, List.of(values), entryPoint, description);
    }

    // ---- the parsed settings ---------------------------------------------------------------------------

    private SettingsCatalog() {
    }

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
                throw new InvalidRateLimitConfigurationException(source, name, "unknown property '" + name + "'",
                        (nearest == null ? "Check its spelling." : "Did you mean '" + concrete(nearest, name) + "'?")
                                + " Every property: " + (entryPoint == EntryPoint.SPRING_BOOT ? "docs/spring-boot.md" : "docs/servlet.md")
                                + ".");
            }
            if (known.entryPoint() != null && known.entryPoint() != entryPoint) {
                throw new InvalidRateLimitConfigurationException(source, name, "'" + name + "' is a setting of the "
                        + (known.entryPoint() == EntryPoint.SERVLET_FILTER ? "web.xml filter's rules file" : "Spring Boot starter")
                        + ", not of " + (entryPoint == EntryPoint.SERVLET_FILTER ? "the web.xml filter" : "Spring Boot"),
                        otherFaceAction(known));
            }
        }
    }

    private static String otherFaceAction(Property known) {
        return switch (known.name()) {
            case "ratelimit.key-resolvers.<name>" -> "In Spring Boot, declare a KeyResolver bean: its bean name is the key's name.";
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
        Matcher m = Pattern.compile("ratelimit\\.(rules|keys)\\[(\\d{1,6})]\\..*").matcher(userName);
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
