package io.github.ratelimit.internal.config;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.RateLimitHeaders.HeaderStyle;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.StoreFailurePolicy;
import io.github.ratelimit.config.RateLimitConfig;
import io.github.ratelimit.internal.DecisionLog;
import io.github.ratelimit.internal.MapLimitProvider;
import io.github.ratelimit.internal.web.Phase;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.redis.RedisLimitProvider;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.LocalBucketStore;
import io.github.ratelimit.support.Durations;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The {@code ratelimit.*} settings, read and checked from the one configuration model, {@link RateLimitConfig}, for
 * every entry point. The Spring Boot starter binds the model and hands it to {@link #of}; the servlet filter's rules
 * file is filled into it by {@link #parse}; both get the same limiter, URL rules and responses, with the same
 * defaults (the model's) and the same messages.
 *
 * <p>Everything is checked at start-up: an unknown property (a typo) is rejected with the nearest known name
 * ({@link #checkNames}); a bad value with its property path, the value, the constraint and the fix. Property names
 * are canonical: lower case, words joined by {@code -}, indices in brackets ({@code ratelimit.rules[0].max-delay}).
 * Lists are comma-separated text or indexed entries ({@code limits[0]}, {@code limits[1]}). Every property, its
 * default and its allowed values: {@link #properties()}; in prose, {@code docs/properties.md}.
 *
 * <p>Immutable; the limiter parts are built anew by {@link #applyTo} and {@link #createStore}.
 */
public final class RateLimitSettings {

    /** Which entry point reads the settings: a few properties belong to one of them. */
    public enum EntryPoint {
        /** The plain servlet filter, configured by a rules file in {@code web.xml}. */
        SERVLET_FILTER,
        /** The Spring Boot starter, configured by Spring's properties. */
        SPRING_BOOT
    }

    /** Where buckets live. */
    public enum StoreKind {
        /** Redis when a Redis server is configured (in Spring Boot, also through {@code spring.data.redis.*}), else this JVM. */
        AUTO,
        /** This JVM's memory. */
        LOCAL,
        /** Redis; a server must be configured. */
        REDIS
    }

    /**
     * One property: its canonical name ({@code [i]} for an index, {@code <name>} for a map key), its default as
     * written in a properties file ({@code null} for none), its allowed values (empty when free), which entry point
     * reads it ({@code null} for both), and what it is for.
     *
     * @param name the canonical name, e.g. {@code ratelimit.rules[i].max-delay}
     * @param defaultValue the default, as text, or {@code null}
     * @param values the allowed values, or empty
     * @param entryPoint the only entry point that reads it, or {@code null} for both
     * @param description what it is for
     */
    public record Property(
            String name, String defaultValue, List<String> values, EntryPoint entryPoint, String description) {}

    private static final String P = SettingsCatalog.P;
    private final EntryPoint entryPoint;
    private boolean enabled;
    private StoreKind store;
    private long localMaximumKeys;
    private RedisSettings redis;
    private StoreFailurePolicy defaultStoreFailurePolicy;
    private double localFallbackShare;
    private int maxWaiting;
    private boolean shadow;
    private List<String> exempt;
    private Map<String, List<String>> ruleExempt;
    private String planFrom;
    private List<String> planRules;
    private boolean planHeaderTrusted;
    private ClientIpResolver clientIp;
    private boolean trustContainerForwarding;
    private Set<HeaderStyle> headers;
    private int rejectStatus;
    private boolean logShadow;
    private boolean metrics;
    private double nearLimit;
    private boolean methodHeaders;
    private Duration limitCacheTtl;
    private MapLimitProvider limitProvider;
    private boolean limitStore;
    private Duration limitStoreRefresh;
    private List<UrlRule> rules;
    private List<Rule> gatewayRules;
    private String rejectionHandler;
    private boolean annotations;
    private Map<String, String> keyResolvers;
    private int filterOrder;
    private int beforeAuthenticationOrder;

    // ---- reading state -----------------------------------------------------------------------------------

    /** The checks, with messages naming each property. */
    private final SettingsValues v;

    private RateLimitSettings(String source, EntryPoint entryPoint) {
        this.v = new SettingsValues(source);
        this.entryPoint = entryPoint;
    }

    /**
     * Reads and checks settings from text: a rules file's properties, filled into a {@link RateLimitConfig} and read
     * as {@link #of} reads one.
     *
     * @param properties {@code ratelimit.*} properties by canonical name; others are ignored; list properties as
     *        comma-separated text or as indexed entries
     * @param source where they come from, the prefix of every message (a file: {@code /WEB-INF/ratelimit.properties});
     *        {@code null} when property paths alone say where
     * @param entryPoint which entry point reads them
     * @return the settings
     * @throws InvalidRateLimitConfigurationException for an unknown property (naming the nearest known one) or a
     *         bad value (naming the property, the value, the constraint and the fix)
     */
    public static RateLimitSettings parse(Map<String, String> properties, String source, EntryPoint entryPoint) {
        Map<String, String> canonical = new TreeMap<>();
        properties.forEach((k, value) -> {
            if (k != null && k.startsWith(P)) {
                canonical.put(k.trim(), value == null ? "" : value.trim());
            }
        });
        SettingsCatalog.checkNames(canonical.keySet(), source, entryPoint);
        return of(new TextBinder(new SettingsValues(source)).bind(canonical), source, entryPoint);
    }

    /**
     * Reads and checks settings from a filled model (Spring Boot binds one; {@link #parse} fills one from text).
     *
     * @param config the model, unchanged by this
     * @param source where its values come from, the prefix of every message; {@code null} when property paths alone
     *        say where (Spring's properties)
     * @param entryPoint which entry point reads them
     * @return the settings
     * @throws InvalidRateLimitConfigurationException for a bad value, naming the property, the value, the
     *         constraint and the fix
     */
    public static RateLimitSettings of(RateLimitConfig config, String source, EntryPoint entryPoint) {
        RateLimitSettings settings = new RateLimitSettings(source, entryPoint);
        settings.read(config);
        return settings;
    }

    /**
     * Refuses a value that is not of its property's kind, as a rules file would: for an entry point whose own
     * conversion failed (Spring's binder), so the message is the same in every face.
     *
     * @param name a canonical property name, e.g. {@code ratelimit.rules[0].max-delay}
     * @param text the value as written
     * @throws InvalidRateLimitConfigurationException when the text is not a value of the property's kind (a whole
     *         number in its range, a boolean, a number, a duration); returns when it is one, or the name is unknown
     */
    public static void checkText(String name, String text) {
        new TextBinder(new SettingsValues(null)).check(name, text);
    }

    /**
     * @return every property, with its default, allowed values and the entry point that reads it
     */
    public static List<Property> properties() {
        return SettingsCatalog.PROPERTIES;
    }

    private void read(RateLimitConfig c) {
        SettingsSections sections = new SettingsSections(v);
        enabled = c.isEnabled();
        store = v.parseEnum("ratelimit.store", c.getStore(), StoreKind.class);
        localMaximumKeys = v.whole("ratelimit.local.maximum-keys", c.getLocal().getMaximumKeys());
        redis = sections.redisSettings(c.getRedis());
        if (store == StoreKind.REDIS && !redis.hasServer() && entryPoint == EntryPoint.SERVLET_FILTER) {
            throw new InvalidRateLimitConfigurationException(
                    v.at("ratelimit.store"),
                    "redis",
                    "'redis' "
                            + "needs a Redis server, but none of ratelimit.redis.url, ratelimit.redis.sentinel.master or "
                            + "ratelimit.redis.cluster.nodes is set",
                    "Set one of them, e.g. ratelimit.redis.url=redis://localhost:6379.");
        }
        defaultStoreFailurePolicy = v.parseEnum(
                "ratelimit.default-store-failure-policy", c.getDefaultStoreFailurePolicy(), StoreFailurePolicy.class);
        if (defaultStoreFailurePolicy == StoreFailurePolicy.DEFAULT) {
            throw v.badValue(
                    "ratelimit.default-store-failure-policy",
                    "default",
                    "is not one of [fail-open, " + "fail-closed, local-fallback]",
                    "Use one of them.");
        }
        localFallbackShare = c.getLocalFallbackShare();
        if (!(localFallbackShare > 0 && localFallbackShare <= 1)) {
            throw v.badValue(
                    "ratelimit.local-fallback-share",
                    ConfigModel.text(localFallbackShare),
                    "is not above 0 " + "and at most 1",
                    "With N instances, use 1/N, e.g. 0.25 for four.");
        }
        maxWaiting = (int) v.whole("ratelimit.max-waiting", c.getMaxWaiting());
        shadow = c.isShadow();
        trustContainerForwarding = c.isTrustContainerForwarding();
        clientIp = sections.clientIp(c, trustContainerForwarding);
        exempt = SettingsValues.list(c.getExempt());
        clientIp.clientIn(exempt, v.at("ratelimit.exempt") + ": entry");
        headers = sections.headerStyles(c.getHeaders());
        rejectStatus = (int) v.whole("ratelimit.reject-status", c.getRejectStatus());
        logShadow = c.isLogShadow();
        metrics = c.isMetrics();
        nearLimit = c.getNearLimit();
        if (!(nearLimit > 0 && nearLimit <= 1)) {
            throw v.badValue(
                    "ratelimit.near-limit",
                    ConfigModel.text(nearLimit),
                    "is not above 0 and at most 1",
                    "Use the share of a limit left that should count as near it, e.g. 0.2 for 20 %.");
        }
        methodHeaders = c.isMethodHeaders();
        limitCacheTtl = v.positive("ratelimit.limit-cache-ttl", c.getLimitCacheTtl());
        limitProvider = sections.readLimitProvider(c);
        limitStore = c.getLimitStore().isEnabled();
        limitStoreRefresh = v.positive(
                "ratelimit.limit-store.refresh-interval", c.getLimitStore().getRefreshInterval());
        if (limitStoreRefresh.compareTo(Duration.ofMillis(10)) < 0) {
            throw v.badValue(
                    "ratelimit.limit-store.refresh-interval",
                    Durations.format(limitStoreRefresh),
                    "is below 10ms",
                    "Use e.g. 1s.");
        }
        List<Rule> gateway = new ArrayList<>();
        rules = sections.urlRules(c.getRules(), gateway);
        gatewayRules = List.copyOf(gateway);
        if (!gatewayRules.isEmpty() && entryPoint == EntryPoint.SERVLET_FILTER) {
            int i = 0;
            while (c.getRules().get(i) == null
                    || !SettingsSections.GATEWAY_PHASE.equalsIgnoreCase(
                            SettingsValues.text(c.getRules().get(i).getPhase()))) {
                i++;
            }
            throw v.badValue(
                    "ratelimit.rules[" + i + "].phase",
                    c.getRules().get(i).getPhase(),
                    "is for the routes of Spring Cloud Gateway, which the servlet filter does not serve",
                    "Use after-authentication or before-authentication, with the rule's paths.");
        }
        ruleExempt = sections.ruleExemptions(c.getRules());
        planFrom = SettingsValues.text(c.getPlanFrom());
        planRules = SettingsValues.list(c.getPlanRules());
        if (planFrom != null && (limitProvider == null || limitProvider.plans().isEmpty())) {
            throw v.badValue(
                    "ratelimit.plan-from",
                    planFrom,
                    "names where a call's plan comes from, but no plan is " + "defined",
                    "Define the plans, e.g. ratelimit.plans.pro=100/1m.");
        }
        if (planFrom == null && !planRules.isEmpty()) {
            throw v.badValue(
                    "ratelimit.plan-rules",
                    String.join(", ", planRules),
                    "is set without " + "ratelimit.plan-from",
                    "Say where a call's plan comes from, e.g. ratelimit.plan-from=header:X-Plan.");
        }
        // Whether a plan header is believed from every peer is checked against the trusted proxies when the limiter is
        // built, where it is known whether plan-from reads a header at all (a SpEL expression does not).
        planHeaderTrusted = c.isPlanHeaderTrusted();
        if (planFrom == null && planHeaderTrusted) {
            throw v.badValue(
                    "ratelimit.plan-header-trusted",
                    "true",
                    "is set without ratelimit.plan-from",
                    "Remove it, or say which header names the plan, e.g. ratelimit.plan-from=header:X-Plan.");
        }
        rejectionHandler = SettingsValues.text(c.getRejectionHandler());
        annotations = c.isAnnotations();
        keyResolvers = sections.keyResolverClasses(c.getKeyResolvers());
        filterOrder = (int) v.whole("ratelimit.filter.order", c.getFilter().getOrder());
        beforeAuthenticationOrder = (int) v.whole(
                "ratelimit.filter.before-authentication-order", c.getFilter().getBeforeAuthenticationOrder());
    }

    // ---- names ---------------------------------------------------------------------------------------------

    /**
     * Checks property names alone: for an entry point whose values arrive bound already (Spring Boot), with the
     * names as its environment holds them.
     *
     * @param names {@code ratelimit.*} property names, canonical ({@code ratelimit.rules[0].max-delay})
     * @param entryPoint the entry point
     * @throws InvalidRateLimitConfigurationException for an unknown name, naming the nearest known one
     */
    public static void checkNames(Iterable<String> names, EntryPoint entryPoint) {
        SettingsCatalog.checkNames(names, null, entryPoint);
    }

    // ---- typed access --------------------------------------------------------------------------------------

    // ---- results -------------------------------------------------------------------------------------------

    /** @return whether rate limiting is on */
    public boolean enabled() {
        return enabled;
    }

    /** @return where buckets live */
    public StoreKind store() {
        return store;
    }

    /** @return the Redis server (see {@link RedisSettings#hasServer()}) and client settings */
    public RedisSettings redis() {
        return redis;
    }

    /** @return the most buckets the local store keeps */
    public long localMaximumKeys() {
        return localMaximumKeys;
    }

    /** @return whether the {@code ip} key takes the address the container reports */
    public boolean trustContainerForwarding() {
        return trustContainerForwarding;
    }

    /** @return the rate-limit header styles to write */
    public Set<HeaderStyle> headers() {
        return headers;
    }

    /** @return the status of a rejection */
    public int rejectStatus() {
        return rejectStatus;
    }

    /** @return whether to record metrics where Micrometer is present */
    public boolean metrics() {
        return metrics;
    }

    /** @return the share of a window's limit below which a permitted call counts as near the limit */
    public double nearLimit() {
        return nearLimit;
    }

    /** @return the URL rules, in index order */
    public List<UrlRule> rules() {
        return rules;
    }

    /**
     * @param phase the phase
     * @return the URL rules of one phase
     */
    public List<UrlRule> rules(Phase phase) {
        return rules.stream().filter(r -> r.phase() == phase).toList();
    }

    /**
     * @return the rules of {@code phase=gateway}, in index order: decided by the Spring Cloud Gateway routes that name
     *         them (or whose id is their name), never by a URL filter
     */
    public List<Rule> gatewayRules() {
        return gatewayRules;
    }

    /** @return the per-key limits of {@code ratelimit.plans} and {@code ratelimit.keys}, or {@code null} when none */
    public MapLimitProvider limitProvider() {
        return limitProvider;
    }

    /** @return how long per-key limits are cached */
    public Duration limitCacheTtl() {
        return limitCacheTtl;
    }

    /** @return the rules file's {@code RejectionHandler} class name, or {@code null} for the default */
    public String rejectionHandler() {
        return rejectionHandler;
    }

    /** @return whether the filter applies the registered servlets' annotations */
    public boolean annotations() {
        return annotations;
    }

    /** @return the rules file's key resolver classes, by key name */
    public Map<String, String> keyResolvers() {
        return keyResolvers;
    }

    /**
     * @return whether {@code @RateLimit} rules of methods other than the request's handler add their items to the
     *         response's rate-limit headers
     */
    public boolean methodHeaders() {
        return methodHeaders;
    }

    /** @return the order of the Spring Boot filter for rules after authentication */
    public int filterOrder() {
        return filterOrder;
    }

    /** @return the order of the Spring Boot filter for rules before authentication */
    public int beforeAuthenticationOrder() {
        return beforeAuthenticationOrder;
    }

    /**
     * Sets on a limiter builder everything these settings say about the limiter: the default failure policy, the
     * local fallback share, the cap on waiting calls, the client-address resolver, the per-key limits and their
     * cache, the dry run ({@code ratelimit.shadow}), the exemptions, plans from the call and the shadow log. The
     * store, key resolvers and listeners of the entry point are the caller's.
     *
     * @param builder a limiter builder
     * @return the builder
     */
    public RateLimiter.Builder applyTo(RateLimiter.Builder builder) {
        builder.defaultStoreFailurePolicy(defaultStoreFailurePolicy)
                .localFallbackShare(localFallbackShare)
                .maxWaiting(maxWaiting)
                .clientIpResolver(clientIp)
                .shadow(shadow)
                .exempt(exempt);
        ruleExempt.forEach(builder::exempt);
        if (planFrom != null) {
            builder.planFrom(planFrom, limitProvider.plans(), planRules).planHeaderTrusted(planHeaderTrusted);
        }
        if (limitProvider != null) {
            builder.limitProvider(limitProvider, limitCacheTtl);
        }
        if (logShadow) {
            builder.listener(new DecisionLog());
        }
        return builder;
    }

    /**
     * Builds a limiter these settings were {@linkplain #applyTo applied} to. A {@code ratelimit.plan-from} that is
     * none of the forms it may take is refused naming every form, not only the keys.
     *
     * @param builder the limiter's builder, complete
     * @return the limiter
     * @throws InvalidRateLimitConfigurationException when the builder refuses a value
     */
    public RateLimiter build(RateLimiter.Builder builder) {
        try {
            return builder.build();
        } catch (InvalidRateLimitConfigurationException e) {
            if (planFrom != null
                    && "plan-from".equals(e.where())
                    && e.constraint() != null
                    && e.constraint().startsWith("unknown key")) {
                throw new InvalidRateLimitConfigurationException(
                        "ratelimit.plan-from",
                        planFrom,
                        e.constraint(),
                        "Write where a call's plan comes from as header:<Name> (believed only from "
                                + "ratelimit.trusted-proxies), a custom key (a KeyResolver), authority:<prefix> (Spring "
                                + "Boot with Spring Security: authority PLAN_pro selects plan pro) or a SpEL expression "
                                + "over #request (Spring Boot).");
            }
            throw e;
        }
    }

    /**
     * @return a new store: the Redis store when a Redis server is configured and the store is {@code auto} or
     *         {@code redis}, else the local store
     * @throws InvalidRateLimitConfigurationException when Redis is configured but Jedis is not on the class path
     */
    public BucketStore createStore() {
        return createStore(null);
    }

    /**
     * The per-key limits kept in Redis when {@code ratelimit.limit-store.enabled} is set: a
     * {@link RedisLimitProvider} on the store's client and key prefix, with the plans of
     * {@code ratelimit.plans}, answering from {@code ratelimit.keys} for keys without an entry of their own.
     *
     * @param store the store {@link #createStore} made (the limit store shares its Redis client)
     * @return the limit store, or {@code null} when not enabled; close it with the store
     * @throws InvalidRateLimitConfigurationException when enabled and the store is not on Redis
     */
    public LimitProvider createLimitStore(BucketStore store) {
        if (!limitStore) {
            return null;
        }
        return JedisStoreFactory.createLimitStore(store, limitProvider, limitStoreRefresh);
    }

    /**
     * @param clock the buckets' clock, for tests that control time; {@code null} for the defaults (this JVM's
     *        wall clock for local buckets, the Redis server's clock for Redis)
     * @return a new store, as {@link #createStore()}
     * @throws InvalidRateLimitConfigurationException when Redis is configured but Jedis is not on the class path
     */
    public BucketStore createStore(TimeMeter clock) {
        if (store == StoreKind.LOCAL || !redis.hasServer()) {
            LocalBucketStore.Builder local = LocalBucketStore.builder().maximumKeys(localMaximumKeys);
            return (clock == null ? local : local.timeMeter(clock)).build();
        }
        try {
            Class.forName("redis.clients.jedis.UnifiedJedis", false, RateLimitSettings.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            throw new InvalidRateLimitConfigurationException(
                    v.at("ratelimit.store"),
                    null,
                    "the Redis store needs Jedis, " + "which is not on the class path",
                    "Add the dependency redis.clients:jedis (7.x), or set " + "ratelimit.store=local.");
        }
        try {
            return redis.toStore(clock);
        } catch (InvalidRateLimitConfigurationException e) {
            throw e.within(v.at("ratelimit.redis"));
        }
    }

    /** @return whether plans come from the caller's granted authorities ({@code ratelimit.plan-from=authority:...}) */
    public boolean plansFromAuthorities() {
        return planFrom != null && planFrom.trim().startsWith("authority:");
    }

    /** @return where a call's plan comes from ({@code ratelimit.plan-from}), or {@code null} */
    public String planFrom() {
        return planFrom;
    }

    /** @return the names of the rules plans from the call are for ({@code ratelimit.plan-rules}); empty for default */
    public List<String> planRules() {
        return planRules;
    }
}
