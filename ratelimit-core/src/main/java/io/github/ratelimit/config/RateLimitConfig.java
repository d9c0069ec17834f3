package io.github.ratelimit.config;

import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The {@code ratelimit.*} properties, declared once for every face: a JavaBean per group ({@code redis},
 * {@code local}, {@code limit-store}, {@code filter}, {@code rules[i]}, {@code keys[i]}), whose field initializers are
 * the defaults and whose fields carry what each property is for and the values it allows ({@link Described}). Spring
 * Boot's binder fills it through its setters; the servlet filter's rules file through a reflective binder of the
 * core. A property's name is its field's name in kebab case under its group's prefix.
 *
 * <p>The model holds values as written and checks nothing: the settings built from it check every value at start-up,
 * with messages that name the property. Values chosen from a list (a store, a mode, a policy) are text, so that each
 * face refuses a wrong one with the same message, listing the values as this model's {@link Described#values()} spell
 * them. Not thread-safe; filled once, then read.
 */
public class RateLimitConfig {

    /**
     * What a property is for, next to its field: the description the docs and the IDE metadata show, its allowed
     * values, and what reflection on the field cannot tell.
     */
    @Documented
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.FIELD)
    public @interface Described {

        /** @return what the property does, one or two sentences */
        String value();

        /** @return the values it allows, as written in a properties file; empty when free (booleans: true, false) */
        String[] values() default {};

        /**
         * @return the default as documented, when the field has none because the value is derived (a rule's name
         *         from its index, its algorithm from its limits); empty to show the field's initializer
         */
        String shown() default "";

        /** @return the one face that reads it, or {@link Face#BOTH} */
        Face only() default Face.BOTH;

        /** @return the least whole number allowed (whole-number properties) */
        long min() default Long.MIN_VALUE;

        /** @return the greatest whole number allowed (whole-number properties) */
        long max() default Long.MAX_VALUE;

        /** @return how a map property's key is written in its name, e.g. {@code <plan>} */
        String mapKey() default "<name>";
    }

    /** The faces that read the {@code ratelimit.*} properties. */
    public enum Face {
        /** Both faces. */
        BOTH,
        /** The plain servlet filter, configured by a rules file in {@code web.xml}. */
        SERVLET_FILTER,
        /** The Spring Boot starter. */
        SPRING_BOOT
    }

    @Described("Whether rate limiting is on; false lets every request through untouched.")
    private boolean enabled = true;

    @Described(
            value = "Where buckets live: auto (Redis when one is configured, else this JVM), local or " + "redis.",
            values = {"auto", "local", "redis"})
    private String store = "auto";

    private final Local local = new Local();

    private final Redis redis = new Redis();

    @Described(
            value = "What rules that do not say decide when the store fails.",
            values = {"fail-open", "fail-closed", "local-fallback"})
    private String defaultStoreFailurePolicy = "fail-open";

    @Described("Share of a limit a local-fallback bucket holds (1/N for N instances).")
    private double localFallbackShare = 1;

    @Described("Client addresses and ranges no rule limits, e.g. 10.0.0.0/8, 192.0.2.7; counted in "
            + "metrics with basis exempt.")
    private List<String> exempt = new ArrayList<>();

    @Described("A dry run: every rule only records what it would reject (as mode shadow), for "
            + "rolling a configuration out.")
    private boolean shadow = false;

    @Described(
            value = "Most requests waiting out a SOFT delay at once, all rules together.",
            min = 0,
            max = Integer.MAX_VALUE)
    private int maxWaiting = RateLimiter.Builder.DEFAULT_MAX_WAITING;

    @Described("Addresses or CIDRs of reverse proxies whose forwarding header is believed.")
    private List<String> trustedProxies = new ArrayList<>();

    @Described("Whether the ip key takes the client address the web server reports (its own "
            + "forwarding configuration decided) instead of the connection's; not with trusted-proxies.")
    private boolean trustContainerForwarding = false;

    @Described(
            value = "The one forwarding header the trusted proxies write.",
            values = {"x-forwarded-for", "forwarded"})
    private String forwardedHeader = "x-forwarded-for";

    @Described(value = "IPv6 clients are keyed by this prefix length (1 to 128).", min = 1, max = 128)
    private int ipv6PrefixLength = 64;

    @Described(
            value = "Rate-limit header styles written on responses, or none.",
            values = {"x-ratelimit", "ietf-draft-09", "none"})
    private List<String> headers = new ArrayList<>(List.of("x-ratelimit", "ietf-draft-09"));

    @Described(value = "Status of a rejected request, 400 to 599.", min = 400, max = 599)
    private int rejectStatus = 429;

    @Described("Whether to log what SHADOW rules would have rejected.")
    private boolean logShadow = true;

    @Described("Whether to record metrics with Micrometer when it is present.")
    private boolean metrics = true;

    @Described("Share of a window's limit below which a permitted call counts in "
            + "ratelimit.near.limit: 0.2 counts calls that left less than 20 % (above 0, at most 1).")
    private double nearLimit = 0.2;

    @Described("How long per-key limits (ratelimit.keys, or a LimitProvider) are cached.")
    private Duration limitCacheTtl = Duration.ofMinutes(1);

    private final LimitStore limitStore = new LimitStore();

    @Described(value = "Limits of a named plan, e.g. 10/1m, 1000/1d.", mapKey = "<plan>")
    private Map<String, List<String>> plans = new LinkedHashMap<>();

    @Described("Where a call's plan comes from, for keys with no entry of their own: header:<Name> "
            + "(believed only from trusted-proxies), a custom key, authority:<prefix> (Spring Security: authority "
            + "PLAN_pro selects plan pro) or SpEL.")
    private @Nullable String planFrom;

    @Described("Whether a plan header (plan-from=header:<Name>) is believed from every peer rather "
            + "than only from trusted-proxies: only when nothing reaches the application without passing something "
            + "that sets or removes the header; without trusted-proxies, a plan header needs it.")
    private boolean planHeaderTrusted = false;

    @Described("Names of the rules plans from the call are for; by default every rule counting by " + "the user.")
    private List<String> planRules = new ArrayList<>();

    private List<KeyEntry> keys = new ArrayList<>();

    private List<UrlRuleEntry> rules = new ArrayList<>();

    @Described(
            value = "A RejectionHandler class (public no-argument constructor) that writes rejections.",
            only = Face.SERVLET_FILTER)
    private @Nullable String rejectionHandler;

    @Described(
            value = "Whether to apply the @RateLimit annotations of the registered servlets.",
            only = Face.SERVLET_FILTER)
    private boolean annotations = true;

    @Described(
            value = "A KeyResolver class (public no-argument constructor) that keys can name.",
            only = Face.SERVLET_FILTER,
            mapKey = "<name>")
    private Map<String, String> keyResolvers = new LinkedHashMap<>();

    @Described(
            value = "Whether @RateLimit rules of methods other than the request's handler (a service "
                    + "method throttling an outbound call) add their items to the response's rate-limit headers.",
            only = Face.SPRING_BOOT)
    private boolean methodHeaders = false;

    private final Filter filter = new Filter();

    /** @return {@code ratelimit.enabled} */
    public boolean isEnabled() {
        return enabled;
    }

    /** @param enabled {@code ratelimit.enabled} */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /** @return {@code ratelimit.store} */
    public String getStore() {
        return store;
    }

    /** @param store {@code ratelimit.store} */
    public void setStore(String store) {
        this.store = store;
    }

    /** @return {@code ratelimit.local.*} */
    public Local getLocal() {
        return local;
    }

    /** @return {@code ratelimit.redis.*} */
    public Redis getRedis() {
        return redis;
    }

    /** @return {@code ratelimit.default-store-failure-policy} */
    public String getDefaultStoreFailurePolicy() {
        return defaultStoreFailurePolicy;
    }

    /** @param defaultStoreFailurePolicy {@code ratelimit.default-store-failure-policy} */
    public void setDefaultStoreFailurePolicy(String defaultStoreFailurePolicy) {
        this.defaultStoreFailurePolicy = defaultStoreFailurePolicy;
    }

    /** @return {@code ratelimit.local-fallback-share} */
    public double getLocalFallbackShare() {
        return localFallbackShare;
    }

    /** @param localFallbackShare {@code ratelimit.local-fallback-share} */
    public void setLocalFallbackShare(double localFallbackShare) {
        this.localFallbackShare = localFallbackShare;
    }

    /** @return {@code ratelimit.exempt} */
    public List<String> getExempt() {
        return exempt;
    }

    /** @param exempt {@code ratelimit.exempt} */
    public void setExempt(List<String> exempt) {
        this.exempt = exempt;
    }

    /** @return {@code ratelimit.shadow} */
    public boolean isShadow() {
        return shadow;
    }

    /** @param shadow {@code ratelimit.shadow} */
    public void setShadow(boolean shadow) {
        this.shadow = shadow;
    }

    /** @return {@code ratelimit.max-waiting} */
    public int getMaxWaiting() {
        return maxWaiting;
    }

    /** @param maxWaiting {@code ratelimit.max-waiting} */
    public void setMaxWaiting(int maxWaiting) {
        this.maxWaiting = maxWaiting;
    }

    /** @return {@code ratelimit.trusted-proxies} */
    public List<String> getTrustedProxies() {
        return trustedProxies;
    }

    /** @param trustedProxies {@code ratelimit.trusted-proxies} */
    public void setTrustedProxies(List<String> trustedProxies) {
        this.trustedProxies = trustedProxies;
    }

    /** @return {@code ratelimit.trust-container-forwarding} */
    public boolean isTrustContainerForwarding() {
        return trustContainerForwarding;
    }

    /** @param trustContainerForwarding {@code ratelimit.trust-container-forwarding} */
    public void setTrustContainerForwarding(boolean trustContainerForwarding) {
        this.trustContainerForwarding = trustContainerForwarding;
    }

    /** @return {@code ratelimit.forwarded-header} */
    public String getForwardedHeader() {
        return forwardedHeader;
    }

    /** @param forwardedHeader {@code ratelimit.forwarded-header} */
    public void setForwardedHeader(String forwardedHeader) {
        this.forwardedHeader = forwardedHeader;
    }

    /** @return {@code ratelimit.ipv6-prefix-length} */
    public int getIpv6PrefixLength() {
        return ipv6PrefixLength;
    }

    /** @param ipv6PrefixLength {@code ratelimit.ipv6-prefix-length} */
    public void setIpv6PrefixLength(int ipv6PrefixLength) {
        this.ipv6PrefixLength = ipv6PrefixLength;
    }

    /** @return {@code ratelimit.headers} */
    public List<String> getHeaders() {
        return headers;
    }

    /** @param headers {@code ratelimit.headers} */
    public void setHeaders(List<String> headers) {
        this.headers = headers;
    }

    /** @return {@code ratelimit.reject-status} */
    public int getRejectStatus() {
        return rejectStatus;
    }

    /** @param rejectStatus {@code ratelimit.reject-status} */
    public void setRejectStatus(int rejectStatus) {
        this.rejectStatus = rejectStatus;
    }

    /** @return {@code ratelimit.log-shadow} */
    public boolean isLogShadow() {
        return logShadow;
    }

    /** @param logShadow {@code ratelimit.log-shadow} */
    public void setLogShadow(boolean logShadow) {
        this.logShadow = logShadow;
    }

    /** @return {@code ratelimit.metrics} */
    public boolean isMetrics() {
        return metrics;
    }

    /** @param metrics {@code ratelimit.metrics} */
    public void setMetrics(boolean metrics) {
        this.metrics = metrics;
    }

    /** @return {@code ratelimit.near-limit} */
    public double getNearLimit() {
        return nearLimit;
    }

    /** @param nearLimit {@code ratelimit.near-limit} */
    public void setNearLimit(double nearLimit) {
        this.nearLimit = nearLimit;
    }

    /** @return {@code ratelimit.limit-cache-ttl} */
    public Duration getLimitCacheTtl() {
        return limitCacheTtl;
    }

    /** @param limitCacheTtl {@code ratelimit.limit-cache-ttl} */
    public void setLimitCacheTtl(Duration limitCacheTtl) {
        this.limitCacheTtl = limitCacheTtl;
    }

    /** @return {@code ratelimit.limit-store.*} */
    public LimitStore getLimitStore() {
        return limitStore;
    }

    /** @return {@code ratelimit.plans.*} */
    public Map<String, List<String>> getPlans() {
        return plans;
    }

    /** @param plans {@code ratelimit.plans.*} */
    public void setPlans(Map<String, List<String>> plans) {
        this.plans = plans;
    }

    /** @return {@code ratelimit.plan-from} */
    public @Nullable String getPlanFrom() {
        return planFrom;
    }

    /** @param planFrom {@code ratelimit.plan-from} */
    public void setPlanFrom(@Nullable String planFrom) {
        this.planFrom = planFrom;
    }

    /** @return {@code ratelimit.plan-header-trusted} */
    public boolean isPlanHeaderTrusted() {
        return planHeaderTrusted;
    }

    /** @param planHeaderTrusted {@code ratelimit.plan-header-trusted} */
    public void setPlanHeaderTrusted(boolean planHeaderTrusted) {
        this.planHeaderTrusted = planHeaderTrusted;
    }

    /** @return {@code ratelimit.plan-rules} */
    public List<String> getPlanRules() {
        return planRules;
    }

    /** @param planRules {@code ratelimit.plan-rules} */
    public void setPlanRules(List<String> planRules) {
        this.planRules = planRules;
    }

    /** @return {@code ratelimit.keys[i]} */
    public List<KeyEntry> getKeys() {
        return keys;
    }

    /** @param keys {@code ratelimit.keys[i]} */
    public void setKeys(List<KeyEntry> keys) {
        this.keys = keys;
    }

    /** @return {@code ratelimit.rules[i]} */
    public List<UrlRuleEntry> getRules() {
        return rules;
    }

    /** @param rules {@code ratelimit.rules[i]} */
    public void setRules(List<UrlRuleEntry> rules) {
        this.rules = rules;
    }

    /** @return {@code ratelimit.rejection-handler} */
    public @Nullable String getRejectionHandler() {
        return rejectionHandler;
    }

    /** @param rejectionHandler {@code ratelimit.rejection-handler} */
    public void setRejectionHandler(@Nullable String rejectionHandler) {
        this.rejectionHandler = rejectionHandler;
    }

    /** @return {@code ratelimit.annotations} */
    public boolean isAnnotations() {
        return annotations;
    }

    /** @param annotations {@code ratelimit.annotations} */
    public void setAnnotations(boolean annotations) {
        this.annotations = annotations;
    }

    /** @return {@code ratelimit.key-resolvers.*} */
    public Map<String, String> getKeyResolvers() {
        return keyResolvers;
    }

    /** @param keyResolvers {@code ratelimit.key-resolvers.*} */
    public void setKeyResolvers(Map<String, String> keyResolvers) {
        this.keyResolvers = keyResolvers;
    }

    /** @return {@code ratelimit.method-headers} */
    public boolean isMethodHeaders() {
        return methodHeaders;
    }

    /** @param methodHeaders {@code ratelimit.method-headers} */
    public void setMethodHeaders(boolean methodHeaders) {
        this.methodHeaders = methodHeaders;
    }

    /** @return {@code ratelimit.filter.*} */
    public Filter getFilter() {
        return filter;
    }

    /** The local store, {@code ratelimit.local.*}. */
    public static class Local {

        @Described(value = "Most buckets the local store keeps in memory.", min = 1, max = Long.MAX_VALUE)
        private long maximumKeys = 100_000;

        /** @return {@code ratelimit.local.maximum-keys} */
        public long getMaximumKeys() {
            return maximumKeys;
        }

        /** @param maximumKeys {@code ratelimit.local.maximum-keys} */
        public void setMaximumKeys(long maximumKeys) {
            this.maximumKeys = maximumKeys;
        }
    }

    /** The Redis store, {@code ratelimit.redis.*}: a server (at most one of a URL, a Sentinel master, Cluster nodes) and the client's settings. */
    public static class Redis {

        @Described("Redis server: redis://[user:password@]host:port[/database], rediss:// for TLS.")
        private @Nullable String url;

        private final Sentinel sentinel = new Sentinel();

        private final Cluster cluster = new Cluster();

        @Described("ACL user for Sentinel and Cluster connections (a URL carries its own).")
        private @Nullable String username;

        @Described("Password for Sentinel and Cluster connections (a URL carries its own).")
        private @Nullable String password;

        @Described("Whether Sentinel and Cluster connections use TLS (a URL says so with rediss://).")
        private boolean ssl = false;

        @Described("First part of every Redis key; instances that share limits share it.")
        private String keyPrefix = "ratelimit";

        @Described("A Redis command fails after this, and the rule's failure policy applies.")
        private Duration commandTimeout = Duration.ofMillis(50);

        @Described("How long Redis may take to answer the store's calls off the request path, on "
                + "connections of their own: renewing the leases of calls in flight, and giving back slots and tokens "
                + "that could not be given back when a call ended. Longer than the command timeout, so a slow Redis "
                + "loses none of them.")
        private Duration backgroundTimeout = Duration.ofSeconds(2);

        @Described("Connecting, or waiting for a pooled connection, fails after this.")
        private Duration connectTimeout = Duration.ofMillis(200);

        @Described(value = "Connections per Redis node.", min = 1, max = 10_000)
        private int poolSize = 16;

        @Described("Whether decisions made at once by several threads share Redis round trips "
                + "(standalone and Sentinel; not on a Cluster).")
        private boolean autoPipelining = true;

        @Described("Whether a store that starts moves the keys an earlier version wrote under the earlier key layout, "
                + "<prefix>:{<rule>:<key>}, to the current one, <prefix>:<rule>:{<key>}, in the background, so their "
                + "counts carry over an upgrade (docs/redis.md).")
        private boolean migrateKeys = true;

        /** @return {@code ratelimit.redis.url} */
        public @Nullable String getUrl() {
            return url;
        }

        /** @param url {@code ratelimit.redis.url} */
        public void setUrl(@Nullable String url) {
            this.url = url;
        }

        /** @return {@code ratelimit.redis.sentinel.*} */
        public Sentinel getSentinel() {
            return sentinel;
        }

        /** @return {@code ratelimit.redis.cluster.*} */
        public Cluster getCluster() {
            return cluster;
        }

        /** @return {@code ratelimit.redis.username} */
        public @Nullable String getUsername() {
            return username;
        }

        /** @param username {@code ratelimit.redis.username} */
        public void setUsername(@Nullable String username) {
            this.username = username;
        }

        /** @return {@code ratelimit.redis.password} */
        public @Nullable String getPassword() {
            return password;
        }

        /** @param password {@code ratelimit.redis.password} */
        public void setPassword(@Nullable String password) {
            this.password = password;
        }

        /** @return {@code ratelimit.redis.ssl} */
        public boolean isSsl() {
            return ssl;
        }

        /** @param ssl {@code ratelimit.redis.ssl} */
        public void setSsl(boolean ssl) {
            this.ssl = ssl;
        }

        /** @return {@code ratelimit.redis.key-prefix} */
        public String getKeyPrefix() {
            return keyPrefix;
        }

        /** @param keyPrefix {@code ratelimit.redis.key-prefix} */
        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }

        /** @return {@code ratelimit.redis.command-timeout} */
        public Duration getCommandTimeout() {
            return commandTimeout;
        }

        /** @param commandTimeout {@code ratelimit.redis.command-timeout} */
        public void setCommandTimeout(Duration commandTimeout) {
            this.commandTimeout = commandTimeout;
        }

        /** @return {@code ratelimit.redis.background-timeout} */
        public Duration getBackgroundTimeout() {
            return backgroundTimeout;
        }

        /** @param backgroundTimeout {@code ratelimit.redis.background-timeout} */
        public void setBackgroundTimeout(Duration backgroundTimeout) {
            this.backgroundTimeout = backgroundTimeout;
        }

        /** @return {@code ratelimit.redis.connect-timeout} */
        public Duration getConnectTimeout() {
            return connectTimeout;
        }

        /** @param connectTimeout {@code ratelimit.redis.connect-timeout} */
        public void setConnectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
        }

        /** @return {@code ratelimit.redis.pool-size} */
        public int getPoolSize() {
            return poolSize;
        }

        /** @param poolSize {@code ratelimit.redis.pool-size} */
        public void setPoolSize(int poolSize) {
            this.poolSize = poolSize;
        }

        /** @return {@code ratelimit.redis.auto-pipelining} */
        public boolean isAutoPipelining() {
            return autoPipelining;
        }

        /** @param autoPipelining {@code ratelimit.redis.auto-pipelining} */
        public void setAutoPipelining(boolean autoPipelining) {
            this.autoPipelining = autoPipelining;
        }

        /** @return {@code ratelimit.redis.migrate-keys} */
        public boolean isMigrateKeys() {
            return migrateKeys;
        }

        /** @param migrateKeys {@code ratelimit.redis.migrate-keys} */
        public void setMigrateKeys(boolean migrateKeys) {
            this.migrateKeys = migrateKeys;
        }

        /** Redis Sentinel, {@code ratelimit.redis.sentinel.*}. */
        public static class Sentinel {

            @Described("Name of the master the Redis sentinels monitor.")
            private @Nullable String master;

            @Described("Redis sentinels, as host:port, comma-separated.")
            private List<String> nodes = new ArrayList<>();

            /** @return {@code ratelimit.redis.sentinel.master} */
            public @Nullable String getMaster() {
                return master;
            }

            /** @param master {@code ratelimit.redis.sentinel.master} */
            public void setMaster(@Nullable String master) {
                this.master = master;
            }

            /** @return {@code ratelimit.redis.sentinel.nodes} */
            public List<String> getNodes() {
                return nodes;
            }

            /** @param nodes {@code ratelimit.redis.sentinel.nodes} */
            public void setNodes(List<String> nodes) {
                this.nodes = nodes;
            }
        }

        /** Redis Cluster, {@code ratelimit.redis.cluster.*}. */
        public static class Cluster {

            @Described("Some nodes of a Redis Cluster, as host:port, comma-separated.")
            private List<String> nodes = new ArrayList<>();

            /** @return {@code ratelimit.redis.cluster.nodes} */
            public List<String> getNodes() {
                return nodes;
            }

            /** @param nodes {@code ratelimit.redis.cluster.nodes} */
            public void setNodes(List<String> nodes) {
                this.nodes = nodes;
            }
        }
    }

    /** Per-key limits kept in Redis and changed at run time, {@code ratelimit.limit-store.*}. */
    public static class LimitStore {

        @Described("Whether per-key limits and plan assignments are also kept in the Redis of the "
                + "store, changed at run time (they win over ratelimit.keys).")
        private boolean enabled = false;

        @Described("How often each instance reads the changes of per-key limits made elsewhere: how "
                + "long another instance keeps a key's old limits.")
        private Duration refreshInterval = Duration.ofSeconds(1);

        /** @return {@code ratelimit.limit-store.enabled} */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled {@code ratelimit.limit-store.enabled} */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return {@code ratelimit.limit-store.refresh-interval} */
        public Duration getRefreshInterval() {
            return refreshInterval;
        }

        /** @param refreshInterval {@code ratelimit.limit-store.refresh-interval} */
        public void setRefreshInterval(Duration refreshInterval) {
            this.refreshInterval = refreshInterval;
        }
    }

    /** A key with limits or a plan of its own, {@code ratelimit.keys[i]}. */
    public static class KeyEntry {

        @Described("<key expression>:<key>, e.g. user:241531, whose limits these are.")
        private @Nullable String key;

        @Described("The key's own limits; or give a plan.")
        private List<String> limits = new ArrayList<>();

        @Described("A plan from ratelimit.plans for the key; or give limits.")
        private @Nullable String plan;

        @Described("Names of the rules the key's limits are for; by default every rule counting by "
                + "the key's expression.")
        private List<String> rules = new ArrayList<>();

        /** @return {@code ratelimit.keys[i].key} */
        public @Nullable String getKey() {
            return key;
        }

        /** @param key {@code ratelimit.keys[i].key} */
        public void setKey(@Nullable String key) {
            this.key = key;
        }

        /** @return {@code ratelimit.keys[i].limits} */
        public List<String> getLimits() {
            return limits;
        }

        /** @param limits {@code ratelimit.keys[i].limits} */
        public void setLimits(List<String> limits) {
            this.limits = limits;
        }

        /** @return {@code ratelimit.keys[i].plan} */
        public @Nullable String getPlan() {
            return plan;
        }

        /** @param plan {@code ratelimit.keys[i].plan} */
        public void setPlan(@Nullable String plan) {
            this.plan = plan;
        }

        /** @return {@code ratelimit.keys[i].rules} */
        public List<String> getRules() {
            return rules;
        }

        /** @param rules {@code ratelimit.keys[i].rules} */
        public void setRules(List<String> rules) {
            this.rules = rules;
        }
    }

    /** A URL rule, {@code ratelimit.rules[i]}. */
    public static class UrlRuleEntry {

        @Described(value = "The URL rule's name (buckets, headers, metrics).", shown = "rules[i]")
        private @Nullable String name;

        @Described("Ant-style path patterns: /api/**, /users/*/orders, /files/*.pdf.")
        private List<String> paths = new ArrayList<>();

        @Described("HTTP methods it applies to (any case; GET covers HEAD); all when empty.")
        private List<String> methods = new ArrayList<>();

        @Described("What to count by: global, ip, user, basic-user, form-user[:<parameter>], "
                + "header:<Name>, param:<name>, a custom key; + and | combine.")
        private String key = "global";

        @Described("Windows, e.g. 5/1s, 100/1m, 5/1s burst=20; calendar quotas 1000/1mo, 500/1w, "
                + "100/1d@Europe/Berlin, which make the rule a fixed window.")
        private List<String> limits = new ArrayList<>();

        @Described(
                value = "Makes a rule of calls in flight instead of windows: at most this many requests "
                        + "per key at once, each holding a slot until its response is written; on Redis, leases that come "
                        + "back within 15 s of a crash.",
                min = 1,
                max = Rule.MAX_CONCURRENCY)
        private @Nullable Integer concurrency;

        @Described(
                value = "What happens to a request over the limit.",
                values = {"hard", "soft", "shadow"})
        private String mode = "hard";

        @Described("Longest a SOFT request waits, e.g. 500ms; required for soft.")
        private @Nullable Duration maxDelay;

        @Described(
                value = "Most requests of this SOFT rule waiting at once.",
                shown = "" + Rule.DEFAULT_MAX_WAITING,
                min = 0,
                max = Integer.MAX_VALUE)
        private @Nullable Integer maxWaiting;

        @Described("How long a key stays refused once the rule refused one of its requests, e.g. 15m, at most 1d; "
                + "a request refused meanwhile does not make it longer.")
        private @Nullable Duration blockFor;

        @Described(value = "Tokens one request takes.", min = 1, max = Long.MAX_VALUE)
        private long cost = 1;

        @Described(
                value = "Which requests the tokens pay for: all admitted, only failed attempts, or only "
                        + "responses with the statuses given, e.g. statuses:404,5xx.",
                values = {"all", "failures", "statuses:<codes>"})
        private String count = "all";

        @Described("Key values the rule never limits, as it resolves them (alice for key user); for "
                + "keys that read the client address, addresses and ranges too.")
        private List<String> exempt = new ArrayList<>();

        @Described("How many permits a request counts as, resolved like a key: header:<Name>, "
                + "param:<name>, a custom key, or SpEL over #request; a whole number (0 counts as 1; leading zeros "
                + "are ignored; one no window holds, however many digits, gets 413); anything else refuses the "
                + "request.")
        private @Nullable String permits;

        @Described("Charges each request what it used, read from its response once the request has been handled: "
                + "response-header:<Name>, a whole number of tokens (the request took 1 token, or its permits, when "
                + "admitted; the rest is taken, going into debt, or given back). Token-bucket, fixed-window (calendar "
                + "quotas included) and sliding-window-counter rules.")
        private @Nullable String charge;

        @Described(
                value = "Whether the rule decides before authentication (for login attempts) or after; or, in "
                        + "Spring Boot, only in the Spring Cloud Gateway routes that name it (no paths then).",
                values = {"after-authentication", "before-authentication", "gateway"})
        private String phase = "after-authentication";

        @Described(
                value = "What the rule decides when the store fails.",
                values = {"default", "fail-open", "fail-closed", "local-fallback"})
        private String onStoreFailure = "default";

        @Described(
                value = "What the rule does when its key cannot be resolved.",
                values = {"reject", "skip", "shared"})
        private String onMissingKey = "reject";

        @Described(
                value = "How the rule counts calls within its windows; fixed-window when not given and a "
                        + "limit is a calendar quota.",
                values = {"token-bucket", "fixed-window", "sliding-window-log", "sliding-window-counter", "leaky-bucket"
                },
                shown = "token-bucket")
        private @Nullable String algorithm;

        @Described(
                value = "Tokens an instance may take before synchronizing with a shared store.",
                min = 1,
                max = Long.MAX_VALUE)
        private @Nullable Long localFirstTokens;

        @Described("Longest an instance goes without synchronizing, with local-first-tokens.")
        private Duration localFirstTime = Duration.ofMillis(100);

        /** @return {@code ratelimit.rules[i].name} */
        public @Nullable String getName() {
            return name;
        }

        /** @param name {@code ratelimit.rules[i].name} */
        public void setName(@Nullable String name) {
            this.name = name;
        }

        /** @return {@code ratelimit.rules[i].paths} */
        public List<String> getPaths() {
            return paths;
        }

        /** @param paths {@code ratelimit.rules[i].paths} */
        public void setPaths(List<String> paths) {
            this.paths = paths;
        }

        /** @return {@code ratelimit.rules[i].methods} */
        public List<String> getMethods() {
            return methods;
        }

        /** @param methods {@code ratelimit.rules[i].methods} */
        public void setMethods(List<String> methods) {
            this.methods = methods;
        }

        /** @return {@code ratelimit.rules[i].key} */
        public String getKey() {
            return key;
        }

        /** @param key {@code ratelimit.rules[i].key} */
        public void setKey(String key) {
            this.key = key;
        }

        /** @return {@code ratelimit.rules[i].limits} */
        public List<String> getLimits() {
            return limits;
        }

        /** @param limits {@code ratelimit.rules[i].limits} */
        public void setLimits(List<String> limits) {
            this.limits = limits;
        }

        /** @return {@code ratelimit.rules[i].concurrency} */
        public @Nullable Integer getConcurrency() {
            return concurrency;
        }

        /** @param concurrency {@code ratelimit.rules[i].concurrency} */
        public void setConcurrency(@Nullable Integer concurrency) {
            this.concurrency = concurrency;
        }

        /** @return {@code ratelimit.rules[i].mode} */
        public String getMode() {
            return mode;
        }

        /** @param mode {@code ratelimit.rules[i].mode} */
        public void setMode(String mode) {
            this.mode = mode;
        }

        /** @return {@code ratelimit.rules[i].max-delay} */
        public @Nullable Duration getMaxDelay() {
            return maxDelay;
        }

        /** @param maxDelay {@code ratelimit.rules[i].max-delay} */
        public void setMaxDelay(@Nullable Duration maxDelay) {
            this.maxDelay = maxDelay;
        }

        /** @return {@code ratelimit.rules[i].max-waiting} */
        public @Nullable Integer getMaxWaiting() {
            return maxWaiting;
        }

        /** @param maxWaiting {@code ratelimit.rules[i].max-waiting} */
        public void setMaxWaiting(@Nullable Integer maxWaiting) {
            this.maxWaiting = maxWaiting;
        }

        /** @return {@code ratelimit.rules[i].block-for} */
        public @Nullable Duration getBlockFor() {
            return blockFor;
        }

        /** @param blockFor {@code ratelimit.rules[i].block-for} */
        public void setBlockFor(@Nullable Duration blockFor) {
            this.blockFor = blockFor;
        }

        /** @return {@code ratelimit.rules[i].cost} */
        public long getCost() {
            return cost;
        }

        /** @param cost {@code ratelimit.rules[i].cost} */
        public void setCost(long cost) {
            this.cost = cost;
        }

        /** @return {@code ratelimit.rules[i].count} */
        public String getCount() {
            return count;
        }

        /** @param count {@code ratelimit.rules[i].count} */
        public void setCount(String count) {
            this.count = count;
        }

        /** @return {@code ratelimit.rules[i].exempt} */
        public List<String> getExempt() {
            return exempt;
        }

        /** @param exempt {@code ratelimit.rules[i].exempt} */
        public void setExempt(List<String> exempt) {
            this.exempt = exempt;
        }

        /** @return {@code ratelimit.rules[i].permits} */
        public @Nullable String getPermits() {
            return permits;
        }

        /** @param permits {@code ratelimit.rules[i].permits} */
        public void setPermits(@Nullable String permits) {
            this.permits = permits;
        }

        /** @return {@code ratelimit.rules[i].charge} */
        public @Nullable String getCharge() {
            return charge;
        }

        /** @param charge {@code ratelimit.rules[i].charge} */
        public void setCharge(@Nullable String charge) {
            this.charge = charge;
        }

        /** @return {@code ratelimit.rules[i].phase} */
        public String getPhase() {
            return phase;
        }

        /** @param phase {@code ratelimit.rules[i].phase} */
        public void setPhase(String phase) {
            this.phase = phase;
        }

        /** @return {@code ratelimit.rules[i].on-store-failure} */
        public String getOnStoreFailure() {
            return onStoreFailure;
        }

        /** @param onStoreFailure {@code ratelimit.rules[i].on-store-failure} */
        public void setOnStoreFailure(String onStoreFailure) {
            this.onStoreFailure = onStoreFailure;
        }

        /** @return {@code ratelimit.rules[i].on-missing-key} */
        public String getOnMissingKey() {
            return onMissingKey;
        }

        /** @param onMissingKey {@code ratelimit.rules[i].on-missing-key} */
        public void setOnMissingKey(String onMissingKey) {
            this.onMissingKey = onMissingKey;
        }

        /** @return {@code ratelimit.rules[i].algorithm} */
        public @Nullable String getAlgorithm() {
            return algorithm;
        }

        /** @param algorithm {@code ratelimit.rules[i].algorithm} */
        public void setAlgorithm(@Nullable String algorithm) {
            this.algorithm = algorithm;
        }

        /** @return {@code ratelimit.rules[i].local-first-tokens} */
        public @Nullable Long getLocalFirstTokens() {
            return localFirstTokens;
        }

        /** @param localFirstTokens {@code ratelimit.rules[i].local-first-tokens} */
        public void setLocalFirstTokens(@Nullable Long localFirstTokens) {
            this.localFirstTokens = localFirstTokens;
        }

        /** @return {@code ratelimit.rules[i].local-first-time} */
        public Duration getLocalFirstTime() {
            return localFirstTime;
        }

        /** @param localFirstTime {@code ratelimit.rules[i].local-first-time} */
        public void setLocalFirstTime(Duration localFirstTime) {
            this.localFirstTime = localFirstTime;
        }
    }

    /** The Spring Boot filters' positions, {@code ratelimit.filter.*}. */
    public static class Filter {

        @Described(
                value = "Order of the rate-limit filter; by default right after Spring Security's chain.",
                only = Face.SPRING_BOOT)
        private int order = -99;

        @Described(
                value = "Order of the filter for rules with phase before-authentication; by default right "
                        + "before Spring Security's chain.",
                only = Face.SPRING_BOOT)
        private int beforeAuthenticationOrder = -101;

        /** @return {@code ratelimit.filter.order} */
        public int getOrder() {
            return order;
        }

        /** @param order {@code ratelimit.filter.order} */
        public void setOrder(int order) {
            this.order = order;
        }

        /** @return {@code ratelimit.filter.before-authentication-order} */
        public int getBeforeAuthenticationOrder() {
            return beforeAuthenticationOrder;
        }

        /** @param beforeAuthenticationOrder {@code ratelimit.filter.before-authentication-order} */
        public void setBeforeAuthenticationOrder(int beforeAuthenticationOrder) {
            this.beforeAuthenticationOrder = beforeAuthenticationOrder;
        }
    }
}
