package io.github.ratelimit.internal.config;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.HttpStatuses;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.MissingKeyPolicy;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimitHeaders.HeaderStyle;
import io.github.ratelimit.Rule.Counted;
import io.github.ratelimit.Rule.LocalFirst;
import io.github.ratelimit.Rule;
import io.github.ratelimit.StoreFailurePolicy;
import io.github.ratelimit.internal.MapLimitProvider;
import io.github.ratelimit.internal.web.Phase;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.key.ClientIpResolver;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The sections of the {@code ratelimit.*} settings that build objects from several properties: the Redis server and
 * client, the client-address resolver, header styles, per-key limits and plans, URL rules, custom key resolvers. Each
 * reads its properties through {@link SettingsValues}, so every message names the property at fault.
 */
final class SettingsSections {

    private final SettingsValues v;

    /**
     * @param v the values to read
     */
    SettingsSections(SettingsValues v) {
        this.v = v;
    }


    RedisSettings redisSettings() {
        String url = v.get("ratelimit.redis.url");
        String master = v.get("ratelimit.redis.sentinel.master");
        List<String> sentinels = v.list("ratelimit.redis.sentinel.nodes");
        List<String> cluster = v.list("ratelimit.redis.cluster.nodes");
        int targets = (url != null ? 1 : 0) + (master != null ? 1 : 0) + (cluster.isEmpty() ? 0 : 1);
        if (targets > 1) {
            List<String> set = new ArrayList<>();
            if (url != null) {
                set.add("ratelimit.redis.url");
            }
            if (master != null) {
                set.add("ratelimit.redis.sentinel.master");
            }
            if (!cluster.isEmpty()) {
                set.add("ratelimit.redis.cluster.nodes");
            }
            throw new InvalidRateLimitConfigurationException(v.at("ratelimit.redis"), null, "more than one Redis server is "
                    + "configured: " + String.join(" and ", set) + " are set", "Keep exactly one of ratelimit.redis.url, ratelimit.redis.sentinel.master (with "
                    + ".nodes) and ratelimit.redis.cluster.nodes.");
        }
        if (master != null && sentinels.isEmpty()) {
            throw new InvalidRateLimitConfigurationException(v.at("ratelimit.redis.sentinel.nodes"), null, "is empty, but "
                    + "ratelimit.redis.sentinel.master is set", "List the sentinels as host:port, e.g. 'sentinel-1:26379'.");
        }
        if (master == null && !sentinels.isEmpty()) {
            throw new InvalidRateLimitConfigurationException(v.at("ratelimit.redis.sentinel.master"), null, "is missing, but "
                    + "ratelimit.redis.sentinel.nodes are set", "Name the master the sentinels monitor, e.g. 'mymaster'.");
        }
        if (url != null && !url.toLowerCase(Locale.ROOT).matches("rediss?://.+")) {
            throw v.badValue("ratelimit.redis.url", url.replaceAll("//[^@/]*@", "//***@"), "is not a Redis URL",
                    "Use redis://[user:password@]host:port[/database], or rediss:// for TLS.");
        }
        for (String node : sentinels) {
            checkNode("ratelimit.redis.sentinel.nodes", node);
        }
        for (String node : cluster) {
            checkNode("ratelimit.redis.cluster.nodes", node);
        }
        String prefix = v.get("ratelimit.redis.key-prefix");
        if (prefix != null && (prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0)) {
            throw v.badValue("ratelimit.redis.key-prefix", prefix, "contains a brace", "Use text without braces, e.g. "
                    + "'ratelimit'.");
        }
        RedisSettings settings = new RedisSettings(url, master, sentinels, cluster, v.get("ratelimit.redis.username"),
                v.get("ratelimit.redis.password"), v.bool("ratelimit.redis.ssl"), v.orDefault("ratelimit.redis.key-prefix"),
                v.duration("ratelimit.redis.command-timeout", true), v.duration("ratelimit.redis.connect-timeout", true),
                v.intValue("ratelimit.redis.pool-size", 1, 10_000), v.bool("ratelimit.redis.auto-pipelining"),
                v.duration("ratelimit.redis.background-timeout", true));
        return settings;
    }

    private void checkNode(String property, String node) {
        int colon = node.lastIndexOf(':');
        boolean ok = colon > 0;
        if (ok) {
            try {
                int port = Integer.parseInt(node.substring(colon + 1).trim());
                ok = port >= 1 && port <= 65535;
            } catch (NumberFormatException e) {
                ok = false;
            }
        }
        if (!ok) {
            throw v.badValue(property, node, "is not host:port", "Write each node like 'redis-1:6379'.");
        }
    }

    /**
     * @param trustContainerForwarding whether the {@code ip} key takes the address the container reports, which
     *        excludes a list of trusted proxies of the limiter's own
     * @return the resolver of client addresses behind trusted proxies
     */
    ClientIpResolver clientIp(boolean trustContainerForwarding) {
        List<String> proxies = v.list("ratelimit.trusted-proxies");
        if (trustContainerForwarding && !proxies.isEmpty()) {
            throw new InvalidRateLimitConfigurationException(v.at("ratelimit.trust-container-forwarding"), "true",
                    "'true' while ratelimit.trusted-proxies is set too: the container's forwarding configuration and "
                            + "the limiter's would both decide which proxies to believe", "Keep one: remove "
                            + "ratelimit.trusted-proxies to trust the container's, or set "
                            + "ratelimit.trust-container-forwarding=false.");
        }
        ClientIpResolver.Builder b = ClientIpResolver.builder();
        try {
            b.trustedProxies(proxies);
        } catch (InvalidRateLimitConfigurationException e) {
            throw e.within(v.at("ratelimit.trusted-proxies"));
        }
        b.forwardedHeader(v.enumValue("ratelimit.forwarded-header", ClientIpResolver.ForwardedHeader.class));
        int ipv6 = v.intValue("ratelimit.ipv6-prefix-length", 1, 128);
        b.ipv6PrefixLength(ipv6);
        return b.build();
    }

    Set<HeaderStyle> headerStyles() {
        EnumSet<HeaderStyle> set = EnumSet.noneOf(HeaderStyle.class);
        for (String style : v.listOrDefault("ratelimit.headers")) {
            if (!style.equalsIgnoreCase("none")) {
                set.add(v.parseEnum("ratelimit.headers", style, HeaderStyle.class));
            }
        }
        return Collections.unmodifiableSet(set);
    }

    MapLimitProvider readLimitProvider() {
        List<String> plans = v.namesUnder("ratelimit.plans.");
        TreeMap<Integer, String> keys = v.indexes("keys");
        if (plans.isEmpty() && keys.isEmpty()) {
            return null;
        }
        MapLimitProvider.Builder b = MapLimitProvider.builder();
        for (String plan : plans) {
            b.source(v.at("ratelimit.plans." + plan)).plan(plan, v.list("ratelimit.plans." + plan).toArray(String[]::new));
        }
        for (int i : keys.keySet()) {
            String prefix = "ratelimit.keys[" + i + "].";
            String key = v.get(prefix + "key");
            if (key == null) {
                throw new InvalidRateLimitConfigurationException(v.at(prefix + "key"), null, "not set",
                        "Name the key whose limits these are, e.g. 'user:241531'.");
            }
            String plan = v.get(prefix + "plan");
            List<String> limits = v.list(prefix + "limits");
            if ((plan == null) == limits.isEmpty()) {
                throw new InvalidRateLimitConfigurationException(v.at("ratelimit.keys[" + i + "]"), key, "key '" + key
                        + "' has " + (plan == null ? "neither a plan nor limits" : "both a plan and limits"),
                        "Give exactly one of " + prefix + "plan and " + prefix + "limits.");
            }
            List<String> rules = v.list(prefix + "rules");
            // Messages name the part at fault: .key, .plan, .limits or .rules of this entry.
            b.entry(v.at("ratelimit.keys[" + i + "]"));
            if (plan != null) {
                b.assign(key, plan, rules);
            } else {
                b.limits(key, rules, limits.toArray(String[]::new));
            }
        }
        return b.build();
    }

    /**
     * @return by URL rule name, the key values (and, for rules keyed by address, addresses and ranges) the rule never
     *         limits ({@code ratelimit.rules[i].exempt})
     */
    Map<String, List<String>> ruleExemptions() {
        Map<String, List<String>> result = new LinkedHashMap<>();
        for (int i : v.indexes("rules").keySet()) {
            String prefix = "ratelimit.rules[" + i + "].";
            List<String> exempt = v.list(prefix + "exempt");
            if (!exempt.isEmpty()) {
                String name = v.get(prefix + "name");
                result.put(name == null ? "rules[" + i + "]" : name, exempt);
            }
        }
        return result;
    }

    List<UrlRule> urlRules() {
        List<UrlRule> result = new ArrayList<>();
        Set<String> names = new LinkedHashSet<>();
        for (int i : v.indexes("rules").keySet()) {
            String prefix = "ratelimit.rules[" + i + "].";
            String where = "ratelimit.rules[" + i + "]";
            String name = v.get(prefix + "name");
            String ruleName = name == null ? "rules[" + i + "]" : name;
            if (!names.add(ruleName)) {
                throw v.badValue(prefix + "name", ruleName, "names a second URL rule", "Give each rule a name of its "
                        + "own; rules with one name share their buckets.");
            }
            Rule.Builder b = Rule.builder(ruleName).source(v.at(where));
            String key = v.get(prefix + "key");
            if (key != null) {
                b.key(key);
            }
            List<String> limits = v.list(prefix + "limits");
            boolean slots = v.get(prefix + "concurrency") != null;
            if (slots) {
                b.concurrency(v.intValue(prefix + "concurrency", 1, Rule.MAX_CONCURRENCY));
            } else if (limits.isEmpty()) {
                throw new InvalidRateLimitConfigurationException(v.at(prefix + "limits"), null, "not set",
                        "Give the rule's windows, e.g. '5/1s, 100/1m', or the calls in flight it allows per key, "
                                + "e.g. concurrency=2.");
            }
            b.limits(limits.toArray(String[]::new));
            b.mode(v.enumValue(prefix + "mode", Mode.class));
            Duration maxDelay = v.duration(prefix + "max-delay", true);
            if (maxDelay != null) {
                b.maxDelay(maxDelay);
            }
            if (v.get(prefix + "max-waiting") != null) {
                b.maxWaiting(v.intValue(prefix + "max-waiting", 0, Integer.MAX_VALUE));
            }
            b.cost(v.longValue(prefix + "cost", 1, Long.MAX_VALUE));
            count(v, prefix + "count", b);
            String permits = v.get(prefix + "permits");
            if (permits != null) {
                b.permits(permits);
            }
            b.onStoreFailure(v.enumValue(prefix + "on-store-failure", StoreFailurePolicy.class));
            b.onMissingKey(v.enumValue(prefix + "on-missing-key", MissingKeyPolicy.class));
            if (v.get(prefix + "algorithm") != null) {
                // Without one, the rule's: token-bucket, or fixed-window for a calendar quota.
                b.algorithm(v.enumValue(prefix + "algorithm", Algorithm.class));
            }
            if (v.get(prefix + "local-first-tokens") != null) {
                try {
                    b.localFirst(new LocalFirst(v.longValue(prefix + "local-first-tokens", 1, Long.MAX_VALUE),
                            v.duration(prefix + "local-first-time", true)));
                } catch (InvalidRateLimitConfigurationException e) {
                    throw e.within(v.at(where));
                }
            }
            List<String> paths = v.list(prefix + "paths");
            if (paths.isEmpty()) {
                throw new InvalidRateLimitConfigurationException(v.at(prefix + "paths"), null, "not set",
                        "Give the paths the rule applies to, e.g. '/api/**'.");
            }
            Phase phase = v.enumValue(prefix + "phase", Phase.class);
            result.add(UrlRule.of(b.build(), paths, new LinkedHashSet<>(v.list(prefix + "methods")), phase));
        }
        return List.copyOf(result);
    }

    /** Reads {@code count}: {@code all}, {@code failures}, or {@code statuses:<codes>} ({@code statuses:404,5xx}). */
    private static void count(SettingsValues v, String name, Rule.Builder b) {
        String text = v.get(name);
        String trimmed = text == null ? "" : text.trim();
        if (trimmed.regionMatches(true, 0, "statuses:", 0, "statuses:".length())) {
            try {
                b.count(HttpStatuses.parse(trimmed.substring("statuses:".length())));
            } catch (InvalidRateLimitConfigurationException e) {
                throw v.badValue(name, text, "is no status set: " + e.constraint(), e.action());
            }
            return;
        }
        b.count(v.enumValue(name, Counted.class));
    }

    Map<String, String> keyResolverClasses() {
        Map<String, String> result = new LinkedHashMap<>();
        for (String name : v.namesUnder("ratelimit.key-resolvers.")) {
            result.put(name, v.get("ratelimit.key-resolvers." + name));
        }
        return Collections.unmodifiableMap(result);
    }
}
