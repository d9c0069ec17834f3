package io.github.ratelimit.servlet;

import io.github.ratelimit.web.Phase;
import io.github.ratelimit.web.UrlRule;
import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Count;
import io.github.ratelimit.DecisionLog;
import io.github.ratelimit.HeaderStyle;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.LocalFirst;
import io.github.ratelimit.MapLimitProvider;
import io.github.ratelimit.MissingKeyPolicy;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.StoreFailurePolicy;
import io.github.ratelimit.internal.Durations;
import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.key.KeyResolver;
import io.github.ratelimit.key.NamedKeyResolver;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.LocalBucketStore;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the filter's configuration: {@code ratelimit.*} properties, the same names the Spring Boot starter binds,
 * from a {@code .properties} rules file overlaid with {@code ratelimit.*} context and filter init-params. Every
 * value is checked here, at {@code init}: an unknown property, a bad value or a bad rule fails deployment with a
 * message that names the property. {@code ${NAME}} and {@code ${NAME:default}} in values are replaced by system
 * properties or environment variables. See {@code docs/servlet.md} for every property.
 */
final class RulesFile {

    private static final Pattern INDEXED = Pattern.compile("ratelimit\\.(rules|keys)\\[(\\d{1,4})]\\.([a-z-]+)");
    private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([A-Za-z0-9_.\\-]+)(?::([^}]*))?}");
    private static final Set<String> RULE_PROPERTIES = Set.of("name", "paths", "methods", "key", "limits", "mode",
            "max-delay", "max-waiting", "cost", "count", "phase", "on-store-failure", "on-missing-key", "algorithm", "local-first-tokens",
            "local-first-time");
    private static final Set<String> KEY_PROPERTIES = Set.of("key", "limits", "plan");
    private static final Set<String> PROPERTIES = Set.of("ratelimit.enabled", "ratelimit.store",
            "ratelimit.local.maximum-keys", "ratelimit.redis.url", "ratelimit.redis.sentinel.master",
            "ratelimit.redis.sentinel.nodes", "ratelimit.redis.cluster.nodes", "ratelimit.redis.username",
            "ratelimit.redis.password", "ratelimit.redis.ssl", "ratelimit.redis.key-prefix",
            "ratelimit.redis.command-timeout", "ratelimit.redis.connect-timeout", "ratelimit.redis.pool-size",
            "ratelimit.default-store-failure-policy", "ratelimit.local-fallback-share", "ratelimit.max-waiting",
            "ratelimit.trusted-proxies", "ratelimit.forwarded-header", "ratelimit.ipv6-prefix-length",
            "ratelimit.headers", "ratelimit.reject-status", "ratelimit.rejection-handler", "ratelimit.annotations", "ratelimit.limit-cache-ttl",
            "ratelimit.log-shadow", "ratelimit.trust-container-forwarding", "ratelimit.metrics");

    /** What the file configures. */
    record Settings(boolean enabled, RateLimiter limiter, List<UrlRule> rules, Set<HeaderStyle> headers,
                    RejectionHandler rejectionHandler, boolean annotations, boolean trustContainerForwarding) {
    }

    private final Map<String, String> values;
    private final String source;
    private final Set<String> used = new HashSet<>();

    private RulesFile(Map<String, String> values, String source) {
        this.values = values;
        this.source = source;
    }

    /**
     * @param properties the merged {@code ratelimit.*} properties
     * @param source where they come from, for messages (e.g. {@code /WEB-INF/ratelimit.properties})
     * @param classLoader loads custom key resolvers
     * @return the settings, with a built limiter (which owns its store)
     * @throws InvalidRateLimitConfigurationException naming the property, the value and the fix
     */
    static Settings parse(Map<String, String> properties, String source, ClassLoader classLoader) {
        Map<String, String> resolved = new TreeMap<>();
        properties.forEach((k, v) -> {
            if (k.startsWith("ratelimit.")) {
                resolved.put(k.trim(), resolvePlaceholders(v == null ? "" : v.trim(), k, source));
            }
        });
        return new RulesFile(resolved, source).parse(classLoader);
    }

    private Settings parse(ClassLoader classLoader) {
        checkNames();
        boolean enabled = bool("ratelimit.enabled", true);
        RateLimiter.Builder builder = RateLimiter.builder();
        builder.defaultStoreFailurePolicy(enumValue("ratelimit.default-store-failure-policy", StoreFailurePolicy.class,
                StoreFailurePolicy.FAIL_OPEN));
        String share = get("ratelimit.local-fallback-share");
        if (share != null) {
            builder.localFallbackShare(decimal("ratelimit.local-fallback-share", share));
        }
        builder.maxWaiting(integer("ratelimit.max-waiting", RateLimiter.Builder.DEFAULT_MAX_WAITING));
        builder.clientIpResolver(clientIp());
        keyResolvers(builder, classLoader);
        MapLimitProvider provider = limitProvider();
        if (provider != null) {
            builder.limitProvider(provider, duration("ratelimit.limit-cache-ttl", Duration.ofMinutes(1)));
        }
        if (bool("ratelimit.log-shadow", true)) {
            builder.listener(new DecisionLog());
        }
        List<UrlRule> rules = rules();
        Set<HeaderStyle> headers = headerStyles();
        int status = integer("ratelimit.reject-status", 429);
        if (status < 400 || status > 599) {
            throw fail("ratelimit.reject-status", String.valueOf(status), "must be an HTTP error status from 400 to 599, "
                    + "e.g. 429");
        }
        RejectionHandler handler = rejectionHandler(status, classLoader);
        boolean annotations = bool("ratelimit.annotations", true);
        boolean trustContainer = bool("ratelimit.trust-container-forwarding", false);
        if (trustContainer && !list("ratelimit.trusted-proxies").isEmpty()) {
            throw new InvalidRateLimitConfigurationException(source + ": ratelimit.trust-container-forwarding = true "
                    + "and ratelimit.trusted-proxies are both set: the container's forwarding configuration and the "
                    + "limiter's would both decide which proxies to believe. Keep one: remove ratelimit.trusted-proxies "
                    + "to trust the container's, or set ratelimit.trust-container-forwarding=false.");
        }
        boolean metrics = bool("ratelimit.metrics", true);
        BucketStore store = store();
        if (metrics && micrometerPresent()) {
            builder.listener(MicrometerBinding.globalRegistry(store));
        }
        RateLimiter limiter = builder.store(store).build();
        return new Settings(enabled, limiter, rules, headers, handler, annotations, trustContainer);
    }

    private void checkNames() {
        for (String name : values.keySet()) {
            Matcher m = INDEXED.matcher(name);
            boolean known = PROPERTIES.contains(name) || name.startsWith("ratelimit.plans.")
                    || name.startsWith("ratelimit.key-resolvers.")
                    || (m.matches() && (m.group(1).equals("rules") ? RULE_PROPERTIES : KEY_PROPERTIES).contains(m.group(3)));
            if (!known) {
                throw new InvalidRateLimitConfigurationException(source + ": unknown property '" + name + "'. Known: "
                        + new TreeSet<>(PROPERTIES) + ", ratelimit.plans.<plan>, ratelimit.key-resolvers.<name>, "
                        + "ratelimit.rules[i]." + new TreeSet<>(RULE_PROPERTIES) + ", ratelimit.keys[i]."
                        + new TreeSet<>(KEY_PROPERTIES) + ". Check the spelling.");
            }
        }
    }

    private ClientIpResolver clientIp() {
        List<String> proxies = list("ratelimit.trusted-proxies");
        String header = get("ratelimit.forwarded-header");
        String ipv6 = get("ratelimit.ipv6-prefix-length");
        if (proxies.isEmpty() && header == null && ipv6 == null) {
            return ClientIpResolver.direct();
        }
        ClientIpResolver.Builder b = ClientIpResolver.builder();
        try {
            b.trustedProxies(proxies);
        } catch (InvalidRateLimitConfigurationException e) {
            throw new InvalidRateLimitConfigurationException(source + ": ratelimit.trusted-proxies: " + e.getMessage(), e);
        }
        if (header != null) {
            b.forwardedHeader(enumValue("ratelimit.forwarded-header", ClientIpResolver.ForwardedHeader.class,
                    ClientIpResolver.ForwardedHeader.X_FORWARDED_FOR));
        }
        if (ipv6 != null) {
            try {
                b.ipv6PrefixLength(integer("ratelimit.ipv6-prefix-length", 64));
            } catch (InvalidRateLimitConfigurationException e) {
                throw new InvalidRateLimitConfigurationException(source + ": ratelimit.ipv6-prefix-length: "
                        + e.getMessage(), e);
            }
        }
        return b.build();
    }

    private void keyResolvers(RateLimiter.Builder builder, ClassLoader classLoader) {
        for (NamedKeyResolver resolver : ServiceLoader.load(NamedKeyResolver.class, classLoader)) {
            builder.keyResolver(resolver.name(), resolver);
        }
        for (String name : namesUnder("ratelimit.key-resolvers.")) {
            String property = "ratelimit.key-resolvers." + name;
            builder.keyResolver(name, instantiate(property, get(property), KeyResolver.class, classLoader));
        }
    }

    private RejectionHandler rejectionHandler(int status, ClassLoader classLoader) {
        String property = "ratelimit.rejection-handler";
        String className = get(property);
        if (className == null) {
            return new ProblemDetailsRejectionHandler(status);
        }
        return instantiate(property, className, RejectionHandler.class, classLoader);
    }

    private <T> T instantiate(String property, String className, Class<T> type, ClassLoader classLoader) {
        try {
            Class<?> c = Class.forName(className, true, classLoader);
            if (!type.isAssignableFrom(c)) {
                throw fail(property, className, "is not a " + type.getName() + ". Implement " + type.getSimpleName());
            }
            return type.cast(c.getDeclaredConstructor().newInstance());
        } catch (ReflectiveOperationException | LinkageError e) {
            throw new InvalidRateLimitConfigurationException(source + ": " + property + " = '" + className
                    + "' cannot be instantiated (" + e + "). Give a " + type.getSimpleName() + " class with a public "
                    + "no-argument constructor on the web application's class path.", e);
        }
    }

    private MapLimitProvider limitProvider() {
        List<String> plans = namesUnder("ratelimit.plans.");
        TreeMap<Integer, String> keyIndexes = indexes("keys");
        if (plans.isEmpty() && keyIndexes.isEmpty()) {
            return null;
        }
        MapLimitProvider.Builder b = MapLimitProvider.builder().source(source);
        for (String plan : plans) {
            b.plan(plan, list("ratelimit.plans." + plan).toArray(String[]::new));
        }
        for (int i : keyIndexes.keySet()) {
            String prefix = "ratelimit.keys[" + i + "].";
            String key = required(prefix + "key", "e.g. 'user:241531'");
            String plan = get(prefix + "plan");
            List<String> limits = list(prefix + "limits");
            if ((plan == null) == limits.isEmpty()) {
                throw new InvalidRateLimitConfigurationException(source + ": " + prefix + "plan and " + prefix
                        + "limits: give exactly one of them for key '" + key + "'.");
            }
            if (plan != null) {
                b.assign(key, plan);
            } else {
                b.limits(key, limits.toArray(String[]::new));
            }
        }
        return b.build();
    }

    private List<UrlRule> rules() {
        List<UrlRule> rules = new ArrayList<>();
        for (int i : indexes("rules").keySet()) {
            String prefix = "ratelimit.rules[" + i + "].";
            String where = source + ": ratelimit.rules[" + i + "]";
            String name = get(prefix + "name");
            Rule.Builder b = Rule.builder(name == null ? "rules[" + i + "]" : name).source(where);
            String key = get(prefix + "key");
            if (key != null) {
                b.key(key);
            }
            b.limits(list(prefix + "limits").toArray(String[]::new));
            b.mode(enumValue(prefix + "mode", Mode.class, Mode.HARD));
            Duration maxDelay = duration(prefix + "max-delay", null);
            if (maxDelay != null) {
                b.maxDelay(maxDelay);
            }
            if (get(prefix + "max-waiting") != null) {
                b.maxWaiting(integer(prefix + "max-waiting", Rule.DEFAULT_MAX_WAITING));
            }
            b.cost(integer(prefix + "cost", 1));
            b.onStoreFailure(enumValue(prefix + "on-store-failure", StoreFailurePolicy.class, StoreFailurePolicy.DEFAULT));
            b.onMissingKey(enumValue(prefix + "on-missing-key", MissingKeyPolicy.class, MissingKeyPolicy.REJECT));
            b.algorithm(enumValue(prefix + "algorithm", Algorithm.class, Algorithm.TOKEN_BUCKET));
            String lfTokens = get(prefix + "local-first-tokens");
            if (lfTokens != null) {
                try {
                    b.localFirst(new LocalFirst(integer(prefix + "local-first-tokens", 0),
                            duration(prefix + "local-first-time", Duration.ofMillis(100))));
                } catch (InvalidRateLimitConfigurationException e) {
                    throw new InvalidRateLimitConfigurationException(where + ": " + e.getMessage(), e);
                }
            }
            b.count(enumValue(prefix + "count", Count.class, Count.ALL));
            Phase phase = enumValue(prefix + "phase", Phase.class, Phase.AFTER_AUTHENTICATION);
            rules.add(UrlRule.of(b.build(), list(prefix + "paths"), new LinkedHashSet<>(list(prefix + "methods")), phase));
        }
        return rules;
    }

    private Set<HeaderStyle> headerStyles() {
        List<String> styles = list("ratelimit.headers");
        if (get("ratelimit.headers") == null) {
            return EnumSet.of(HeaderStyle.X_RATELIMIT, HeaderStyle.IETF_DRAFT_09);
        }
        EnumSet<HeaderStyle> set = EnumSet.noneOf(HeaderStyle.class);
        for (String style : styles) {
            if (!style.equalsIgnoreCase("none")) {
                set.add(parseEnum("ratelimit.headers", style, HeaderStyle.class));
            }
        }
        return set;
    }

    private BucketStore store() {
        String store = get("ratelimit.store");
        String kind = store == null ? "local" : store.toLowerCase(Locale.ROOT);
        switch (kind) {
            case "local":
                return LocalBucketStore.builder().maximumKeys(integer("ratelimit.local.maximum-keys",
                        (int) LocalBucketStore.DEFAULT_MAXIMUM_KEYS)).build();
            case "redis":
                return redisStore();
            default:
                throw fail("ratelimit.store", store, "is not a store. Use 'local' or 'redis'");
        }
    }

    private static boolean micrometerPresent() {
        try {
            Class.forName("io.micrometer.core.instrument.MeterRegistry", false, RulesFile.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    private BucketStore redisStore() {
        try {
            Class.forName("redis.clients.jedis.UnifiedJedis", false, RulesFile.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new InvalidRateLimitConfigurationException(source + ": ratelimit.store = redis, but Jedis is not on "
                    + "the class path. Add redis.clients:jedis (7.x) to the web application.");
        }
        return RedisStores.create(this::get, this::list, this::bool, this::integer, this::duration, source);
    }

    // ---- typed access --------------------------------------------------------------------------------

    private String get(String name) {
        used.add(name);
        String v = values.get(name);
        return v == null || v.isEmpty() ? null : v;
    }

    private String required(String name, String example) {
        String v = get(name);
        if (v == null) {
            throw new InvalidRateLimitConfigurationException(source + ": " + name + " is missing. Set it, " + example + ".");
        }
        return v;
    }

    private List<String> list(String name) {
        String v = get(name);
        if (v == null) {
            return List.of();
        }
        return Arrays.stream(v.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
    }

    private List<String> namesUnder(String prefix) {
        return values.keySet().stream().filter(k -> k.startsWith(prefix)).map(k -> k.substring(prefix.length())).toList();
    }

    private TreeMap<Integer, String> indexes(String group) {
        TreeMap<Integer, String> result = new TreeMap<>();
        for (String name : values.keySet()) {
            Matcher m = INDEXED.matcher(name);
            if (m.matches() && m.group(1).equals(group)) {
                result.put(Integer.parseInt(m.group(2)), name);
            }
        }
        return result;
    }

    private boolean bool(String name, boolean fallback) {
        String v = get(name);
        if (v == null) {
            return fallback;
        }
        if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(v);
        }
        throw fail(name, v, "is not a boolean. Use true or false");
    }

    private int integer(String name, int fallback) {
        String v = get(name);
        if (v == null) {
            return fallback;
        }
        try {
            return Integer.parseInt(v.replace("_", ""));
        } catch (NumberFormatException e) {
            throw fail(name, v, "is not a whole number");
        }
    }

    private double decimal(String name, String v) {
        try {
            return Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw fail(name, v, "is not a number. Use e.g. 0.5");
        }
    }

    private Duration duration(String name, Duration fallback) {
        String v = get(name);
        if (v == null) {
            return fallback;
        }
        Duration d = Durations.parseOrNull(v);
        if (d == null) {
            throw fail(name, v, "is not a duration. Use " + Durations.SYNTAX);
        }
        return d;
    }

    private <E extends Enum<E>> E enumValue(String name, Class<E> type, E fallback) {
        String v = get(name);
        return v == null ? fallback : parseEnum(name, v, type);
    }

    private <E extends Enum<E>> E parseEnum(String name, String value, Class<E> type) {
        String normalized = value.trim().toUpperCase(Locale.ROOT).replace('-', '_');
        for (E constant : type.getEnumConstants()) {
            if (constant.name().equals(normalized)) {
                return constant;
            }
        }
        List<String> allowed = Arrays.stream(type.getEnumConstants())
                .map(c -> c.name().toLowerCase(Locale.ROOT).replace('_', '-')).toList();
        throw fail(name, value, "is not one of " + allowed);
    }

    private InvalidRateLimitConfigurationException fail(String name, String value, String what) {
        return new InvalidRateLimitConfigurationException(source + ": " + name + " = '" + value + "' " + what + ".");
    }

    static String resolvePlaceholders(String value, String name, String source) {
        if (value.indexOf("${") < 0) {
            return value;
        }
        Matcher m = PLACEHOLDER.matcher(value);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            String key = m.group(1);
            String replacement = System.getProperty(key);
            if (replacement == null) {
                replacement = System.getenv(key);
            }
            if (replacement == null) {
                replacement = m.group(2);
            }
            if (replacement == null) {
                throw new InvalidRateLimitConfigurationException(source + ": " + name + " refers to ${" + key + "}, "
                        + "which is neither a system property nor an environment variable. Set it, or give a default: "
                        + "${" + key + ":value}.");
            }
            m.appendReplacement(sb, Matcher.quoteReplacement(replacement));
        }
        m.appendTail(sb);
        return sb.toString();
    }
}
