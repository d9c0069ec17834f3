package io.github.ratelimit.internal.config;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.HttpStatuses;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.MissingKeyPolicy;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimitHeaders.HeaderStyle;
import io.github.ratelimit.Rule;
import io.github.ratelimit.Rule.Counted;
import io.github.ratelimit.Rule.LocalFirst;
import io.github.ratelimit.StoreFailurePolicy;
import io.github.ratelimit.config.RateLimitConfig;
import io.github.ratelimit.internal.Charges;
import io.github.ratelimit.internal.MapLimitProvider;
import io.github.ratelimit.internal.web.Phase;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.support.Durations;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * The sections of the {@code ratelimit.*} settings that build objects from several properties: the Redis server and
 * client, the client-address resolver, header styles, per-key limits and plans, URL rules, custom key resolvers. Each
 * reads its properties through {@link SettingsValues}, so every message names the property at fault.
 */
final class SettingsSections {

    private final SettingsValues v;

    /** The {@code phase} of rules that Spring Cloud Gateway's routes decide. */
    static final String GATEWAY_PHASE = "gateway";

    /**
     * @param v the values to read
     */
    SettingsSections(SettingsValues v) {
        this.v = v;
    }

    RedisSettings redisSettings(RateLimitConfig.Redis r) {
        String url = SettingsValues.text(r.getUrl());
        String master = SettingsValues.text(r.getSentinel().getMaster());
        List<String> sentinels = SettingsValues.list(r.getSentinel().getNodes());
        List<String> cluster = SettingsValues.list(r.getCluster().getNodes());
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
            throw new InvalidRateLimitConfigurationException(
                    v.at("ratelimit.redis"),
                    null,
                    "more than one Redis server is " + "configured: " + String.join(" and ", set) + " are set",
                    "Keep exactly one of ratelimit.redis.url, ratelimit.redis.sentinel.master (with "
                            + ".nodes) and ratelimit.redis.cluster.nodes.");
        }
        if (master != null && sentinels.isEmpty()) {
            throw new InvalidRateLimitConfigurationException(
                    v.at("ratelimit.redis.sentinel.nodes"),
                    null,
                    "is empty, but " + "ratelimit.redis.sentinel.master is set",
                    "List the sentinels as host:port, e.g. 'sentinel-1:26379'.");
        }
        if (master == null && !sentinels.isEmpty()) {
            throw new InvalidRateLimitConfigurationException(
                    v.at("ratelimit.redis.sentinel.master"),
                    null,
                    "is missing, but " + "ratelimit.redis.sentinel.nodes are set",
                    "Name the master the sentinels monitor, e.g. 'mymaster'.");
        }
        if (url != null && !url.toLowerCase(Locale.ROOT).matches("rediss?://.+")) {
            throw v.badValue(
                    "ratelimit.redis.url",
                    url.replaceAll("//[^@/]*@", "//***@"),
                    "is not a Redis URL",
                    "Use redis://[user:password@]host:port[/database], or rediss:// for TLS.");
        }
        for (String node : sentinels) {
            checkNode("ratelimit.redis.sentinel.nodes", node);
        }
        for (String node : cluster) {
            checkNode("ratelimit.redis.cluster.nodes", node);
        }
        String prefix = SettingsValues.text(r.getKeyPrefix());
        if (prefix == null) {
            prefix = new RateLimitConfig.Redis().getKeyPrefix();
        }
        if (prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
            throw v.badValue(
                    "ratelimit.redis.key-prefix",
                    prefix,
                    "contains a brace",
                    "Use text without braces, e.g. " + "'ratelimit'.");
        }
        return new RedisSettings(
                url,
                master,
                sentinels,
                cluster,
                SettingsValues.text(r.getUsername()),
                SettingsValues.text(r.getPassword()),
                r.isSsl(),
                prefix,
                v.positive("ratelimit.redis.command-timeout", r.getCommandTimeout()),
                v.positive("ratelimit.redis.connect-timeout", r.getConnectTimeout()),
                (int) v.whole("ratelimit.redis.pool-size", r.getPoolSize()),
                r.isAutoPipelining(),
                r.isMigrateKeys(),
                v.positive("ratelimit.redis.background-timeout", r.getBackgroundTimeout()));
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
    ClientIpResolver clientIp(RateLimitConfig c, boolean trustContainerForwarding) {
        List<String> proxies = SettingsValues.list(c.getTrustedProxies());
        if (trustContainerForwarding && !proxies.isEmpty()) {
            throw new InvalidRateLimitConfigurationException(
                    v.at("ratelimit.trust-container-forwarding"),
                    "true",
                    "'true' while ratelimit.trusted-proxies is set too: the container's forwarding configuration and "
                            + "the limiter's would both decide which proxies to believe",
                    "Keep one: remove "
                            + "ratelimit.trusted-proxies to trust the container's, or set "
                            + "ratelimit.trust-container-forwarding=false.");
        }
        ClientIpResolver.Builder b = ClientIpResolver.builder();
        try {
            b.trustedProxies(proxies);
        } catch (InvalidRateLimitConfigurationException e) {
            throw e.within(v.at("ratelimit.trusted-proxies"));
        }
        b.forwardedHeader(v.parseEnum(
                "ratelimit.forwarded-header", c.getForwardedHeader(), ClientIpResolver.ForwardedHeader.class));
        b.ipv6PrefixLength((int) v.whole("ratelimit.ipv6-prefix-length", c.getIpv6PrefixLength()));
        return b.build();
    }

    Set<HeaderStyle> headerStyles(List<String> configured) {
        EnumSet<HeaderStyle> set = EnumSet.noneOf(HeaderStyle.class);
        List<String> styles = SettingsValues.list(configured);
        for (String style : styles.isEmpty() ? new RateLimitConfig().getHeaders() : styles) {
            if (!style.equalsIgnoreCase("none")) {
                set.add(v.parseEnum("ratelimit.headers", style, HeaderStyle.class));
            }
        }
        return Collections.unmodifiableSet(set);
    }

    MapLimitProvider readLimitProvider(RateLimitConfig c) {
        Map<String, List<String>> plans = new TreeMap<>(c.getPlans());
        List<RateLimitConfig.KeyEntry> keys = c.getKeys();
        if (plans.isEmpty() && keys.stream().allMatch(Objects::isNull)) {
            return null;
        }
        MapLimitProvider.Builder b = MapLimitProvider.builder();
        plans.forEach((plan, limits) -> b.source(v.at("ratelimit.plans." + plan))
                .plan(plan, SettingsValues.list(limits).toArray(String[]::new)));
        for (int i = 0; i < keys.size(); i++) {
            RateLimitConfig.KeyEntry entry = keys.get(i);
            if (entry == null) {
                continue;
            }
            String prefix = "ratelimit.keys[" + i + "].";
            String key = SettingsValues.text(entry.getKey());
            if (key == null) {
                throw new InvalidRateLimitConfigurationException(
                        v.at(prefix + "key"),
                        null,
                        "not set",
                        "Name the key whose limits these are, e.g. 'user:241531'.");
            }
            String plan = SettingsValues.text(entry.getPlan());
            List<String> limits = SettingsValues.list(entry.getLimits());
            if ((plan == null) == limits.isEmpty()) {
                throw new InvalidRateLimitConfigurationException(
                        v.at("ratelimit.keys[" + i + "]"),
                        key,
                        "key '" + key + "' has "
                                + (plan == null ? "neither a plan nor limits" : "both a plan and limits"),
                        "Give exactly one of " + prefix + "plan and " + prefix + "limits.");
            }
            List<String> rules = SettingsValues.list(entry.getRules());
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
    Map<String, List<String>> ruleExemptions(List<RateLimitConfig.UrlRuleEntry> entries) {
        Map<String, List<String>> result = new LinkedHashMap<>();
        for (int i = 0; i < entries.size(); i++) {
            RateLimitConfig.UrlRuleEntry r = entries.get(i);
            List<String> exempt = r == null ? List.of() : SettingsValues.list(r.getExempt());
            if (!exempt.isEmpty()) {
                String name = SettingsValues.text(r.getName());
                result.put(name == null ? "rules[" + i + "]" : name, exempt);
            }
        }
        return result;
    }

    List<UrlRule> urlRules(List<RateLimitConfig.UrlRuleEntry> entries) {
        return urlRules(entries, new ArrayList<>());
    }

    /**
     * @param entries the {@code ratelimit.rules} entries
     * @param gatewayRules filled with the rules of {@code phase=gateway}, which the routes of Spring Cloud Gateway
     *        decide ({@value #GATEWAY_PHASE}): no paths, no methods, in index order
     * @return the URL rules, the other entries
     */
    List<UrlRule> urlRules(List<RateLimitConfig.UrlRuleEntry> entries, List<Rule> gatewayRules) {
        List<UrlRule> result = new ArrayList<>();
        Set<String> names = new LinkedHashSet<>();
        for (int i = 0; i < entries.size(); i++) {
            RateLimitConfig.UrlRuleEntry r = entries.get(i);
            if (r == null) {
                continue;
            }
            String prefix = "ratelimit.rules[" + i + "].";
            String where = "ratelimit.rules[" + i + "]";
            String name = SettingsValues.text(r.getName());
            String ruleName = name == null ? "rules[" + i + "]" : name;
            if (!names.add(ruleName)) {
                throw v.badValue(
                        prefix + "name",
                        ruleName,
                        "names a second URL rule",
                        "Give each rule a name of its " + "own; rules with one name share their buckets.");
            }
            Rule.Builder b = Rule.builder(ruleName).source(v.at(where));
            String key = SettingsValues.text(r.getKey());
            if (key != null) {
                b.key(key);
            }
            List<String> limits = SettingsValues.list(r.getLimits());
            if (r.getConcurrency() != null) {
                b.concurrency((int) v.whole(prefix + "concurrency", r.getConcurrency()));
            } else if (limits.isEmpty()) {
                throw new InvalidRateLimitConfigurationException(
                        v.at(prefix + "limits"),
                        null,
                        "not set",
                        "Give the rule's windows, e.g. '5/1s, 100/1m', or the calls in flight it allows per key, "
                                + "e.g. concurrency=2.");
            }
            b.limits(limits.toArray(String[]::new));
            b.mode(v.parseEnum(prefix + "mode", r.getMode(), Mode.class));
            Duration maxDelay = v.positive(prefix + "max-delay", r.getMaxDelay());
            if (maxDelay != null) {
                b.maxDelay(maxDelay);
            }
            if (r.getMaxWaiting() != null) {
                b.maxWaiting((int) v.whole(prefix + "max-waiting", r.getMaxWaiting()));
            }
            b.cost(v.whole(prefix + "cost", r.getCost()));
            Duration blockFor = v.positive(prefix + "block-for", r.getBlockFor());
            if (blockFor != null && blockFor.compareTo(Rule.MAX_BLOCK_FOR) > 0) {
                throw v.badValue(
                        prefix + "block-for",
                        Durations.format(blockFor),
                        "is longer than the allowed " + Durations.format(Rule.MAX_BLOCK_FOR),
                        "Use a block of at most " + Durations.format(Rule.MAX_BLOCK_FOR) + ".");
            }
            if (blockFor != null) {
                b.blockFor(blockFor);
            }
            count(v, prefix + "count", r.getCount(), b);
            String permits = SettingsValues.text(r.getPermits());
            if (permits != null) {
                b.permits(permits);
            }
            String charge = SettingsValues.text(r.getCharge());
            if (charge != null) {
                b.charge(charge(v, prefix + "charge", charge));
            }
            b.onStoreFailure(v.parseEnum(prefix + "on-store-failure", r.getOnStoreFailure(), StoreFailurePolicy.class));
            b.onMissingKey(v.parseEnum(prefix + "on-missing-key", r.getOnMissingKey(), MissingKeyPolicy.class));
            String algorithm = SettingsValues.text(r.getAlgorithm());
            if (algorithm != null) {
                // Without one, the rule's: token-bucket, or fixed-window for a calendar quota.
                b.algorithm(v.parseEnum(prefix + "algorithm", algorithm, Algorithm.class));
            }
            if (r.getLocalFirstTokens() != null) {
                try {
                    b.localFirst(new LocalFirst(
                            v.whole(prefix + "local-first-tokens", r.getLocalFirstTokens()),
                            v.positive(prefix + "local-first-time", r.getLocalFirstTime())));
                } catch (InvalidRateLimitConfigurationException e) {
                    throw e.within(v.at(where));
                }
            }
            List<String> paths = SettingsValues.list(r.getPaths());
            if (GATEWAY_PHASE.equalsIgnoreCase(SettingsValues.text(r.getPhase()))) {
                gatewayRules.add(gatewayRule(b.build(), r, prefix, paths));
                continue;
            }
            if (paths.isEmpty()) {
                throw new InvalidRateLimitConfigurationException(
                        v.at(prefix + "paths"), null, "not set", "Give the paths the rule applies to, e.g. '/api/**'.");
            }
            Phase phase = v.parseEnum(prefix + "phase", r.getPhase(), Phase.class);
            result.add(UrlRule.of(b.build(), paths, new LinkedHashSet<>(SettingsValues.list(r.getMethods())), phase));
        }
        return List.copyOf(result);
    }

    /**
     * A rule of {@code phase=gateway}: the route's predicates say which requests it decides, so it has no paths or
     * methods; and the gateway's {@code RateLimiter} is told nothing of how a request ends, so it cannot return
     * tokens or slots afterwards.
     */
    private Rule gatewayRule(Rule rule, RateLimitConfig.UrlRuleEntry r, String prefix, List<String> paths) {
        if (!paths.isEmpty() || !SettingsValues.list(r.getMethods()).isEmpty()) {
            String name = paths.isEmpty() ? "methods" : "paths";
            throw v.badValue(
                    prefix + name,
                    String.join(", ", paths.isEmpty() ? SettingsValues.list(r.getMethods()) : paths),
                    "is set on a rule of phase gateway, whose routes' predicates choose the requests",
                    "Remove it, or use phase after-authentication for a URL rule.");
        }
        if (rule.concurrency() > 0 || rule.count() != Counted.ALL || rule.charge() != null) {
            String name = rule.concurrency() > 0 ? "concurrency" : rule.count() != Counted.ALL ? "count" : "charge";
            throw v.badValue(
                    prefix + name,
                    rule.concurrency() > 0
                            ? String.valueOf(rule.concurrency())
                            : rule.count() != Counted.ALL ? r.getCount() : rule.charge(),
                    "needs to know how a request ended, which Spring Cloud Gateway's RateLimiter is never told",
                    "Count every request (count=all, windows in limits, no charge), or make it a URL rule with paths.");
        }
        return rule;
    }

    /** @return the charge source of a URL rule, checked: {@code response-header:<Name>} */
    private static String charge(SettingsValues v, String name, String text) {
        if (Charges.responseHeader(text) == null) {
            throw v.badValue(
                    name,
                    text,
                    "is no source of the tokens a request used: a URL rule reads them from a response header",
                    "Write response-header:<Name>, e.g. response-header:X-Tokens-Used.");
        }
        return text;
    }

    /** Reads {@code count}: {@code all}, {@code failures}, or {@code statuses:<codes>} ({@code statuses:404,5xx}). */
    private static void count(SettingsValues v, String name, String text, Rule.Builder b) {
        String trimmed = text == null ? "" : text.trim();
        if (trimmed.regionMatches(true, 0, "statuses:", 0, "statuses:".length())) {
            try {
                b.count(HttpStatuses.parse(trimmed.substring("statuses:".length())));
            } catch (InvalidRateLimitConfigurationException e) {
                throw v.badValue(name, text, "is no status set: " + e.constraint(), e.action());
            }
            return;
        }
        b.count(v.parseEnum(name, trimmed.isEmpty() ? "all" : trimmed, Counted.class));
    }

    Map<String, String> keyResolverClasses(Map<String, String> configured) {
        Map<String, String> result = new LinkedHashMap<>();
        new TreeMap<>(configured).forEach((name, className) -> result.put(name, SettingsValues.text(className)));
        return Collections.unmodifiableMap(result);
    }
}
