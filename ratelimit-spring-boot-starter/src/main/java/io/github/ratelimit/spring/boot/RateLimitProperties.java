package io.github.ratelimit.spring.boot;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Count;
import io.github.ratelimit.HeaderStyle;
import io.github.ratelimit.MissingKeyPolicy;
import io.github.ratelimit.Mode;
import io.github.ratelimit.StoreFailurePolicy;
import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.web.Phase;
import org.springframework.boot.context.properties.ConfigurationProperties;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Rate limiting, under {@code ratelimit.*}: the same names a servlet filter's rules file uses.
 */
@ConfigurationProperties("ratelimit")
public class RateLimitProperties {

    /** Where buckets live. */
    public enum StoreType {
        /** Redis when ratelimit.redis.* or spring.data.redis.* gives a connection, else this JVM. */
        AUTO,
        /** This JVM's memory. */
        LOCAL,
        /** Redis, from ratelimit.redis.* or else spring.data.redis.*. */
        REDIS
    }

    /** Whether rate limiting is enabled. */
    private boolean enabled = true;

    /** Where buckets live. */
    private StoreType store = StoreType.AUTO;

    private final Local local = new Local();

    private final Redis redis = new Redis();

    /** What rules that do not say decide when the store fails. */
    private StoreFailurePolicy defaultStoreFailurePolicy = StoreFailurePolicy.FAIL_OPEN;

    /** Share of a limit a local fallback bucket holds (1/N for N instances). */
    private double localFallbackShare = 1.0;

    /** Most calls waiting out a SOFT delay at once, all rules together; each SOFT rule also has its own bound. */
    private int maxWaiting = io.github.ratelimit.RateLimiter.Builder.DEFAULT_MAX_WAITING;

    /** Addresses or CIDRs of reverse proxies whose forwarding header is believed. */
    private List<String> trustedProxies = new ArrayList<>();

    /**
     * Whether the ip key takes the client address the web server reports (rewritten by its own forwarding
     * configuration, server.forward-headers-strategy=native with server.tomcat.remoteip.*) instead of the
     * connection's, walked through ratelimit.trusted-proxies. Only with an internal-proxies setting that lists your
     * own proxies alone; not with trusted-proxies.
     */
    private boolean trustContainerForwarding;

    /** The one forwarding header the trusted proxies write. */
    private ClientIpResolver.ForwardedHeader forwardedHeader = ClientIpResolver.ForwardedHeader.X_FORWARDED_FOR;

    /** IPv6 clients are keyed by this prefix length. */
    private int ipv6PrefixLength = 64;

    /** Rate-limit header styles written on responses. */
    private Set<HeaderStyle> headers = EnumSet.of(HeaderStyle.X_RATELIMIT, HeaderStyle.IETF_DRAFT_09);

    /** Status of a rejected web request. */
    private int rejectStatus = 429;

    /** Whether to log what SHADOW rules would have rejected. */
    private boolean logShadow = true;

    /** How long per-key limits (ratelimit.keys, a LimitProvider bean) are cached. */
    private Duration limitCacheTtl = Duration.ofMinutes(1);

    /** Limits of named plans, e.g. free: 10/1m. */
    private Map<String, List<String>> plans = new LinkedHashMap<>();

    /** Keys with limits or a plan of their own. */
    private List<KeyLimit> keys = new ArrayList<>();

    /** URL rules, enforced by a servlet filter. */
    private List<UrlRuleProperties> rules = new ArrayList<>();

    private final Filter filter = new Filter();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public StoreType getStore() {
        return store;
    }

    public void setStore(StoreType store) {
        this.store = store;
    }

    public Local getLocal() {
        return local;
    }

    public Redis getRedis() {
        return redis;
    }

    public StoreFailurePolicy getDefaultStoreFailurePolicy() {
        return defaultStoreFailurePolicy;
    }

    public void setDefaultStoreFailurePolicy(StoreFailurePolicy defaultStoreFailurePolicy) {
        this.defaultStoreFailurePolicy = defaultStoreFailurePolicy;
    }

    public double getLocalFallbackShare() {
        return localFallbackShare;
    }

    public void setLocalFallbackShare(double localFallbackShare) {
        this.localFallbackShare = localFallbackShare;
    }

    public int getMaxWaiting() {
        return maxWaiting;
    }

    public void setMaxWaiting(int maxWaiting) {
        this.maxWaiting = maxWaiting;
    }

    public List<String> getTrustedProxies() {
        return trustedProxies;
    }

    public void setTrustedProxies(List<String> trustedProxies) {
        this.trustedProxies = trustedProxies;
    }

    public boolean isTrustContainerForwarding() {
        return trustContainerForwarding;
    }

    public void setTrustContainerForwarding(boolean trustContainerForwarding) {
        this.trustContainerForwarding = trustContainerForwarding;
    }

    public ClientIpResolver.ForwardedHeader getForwardedHeader() {
        return forwardedHeader;
    }

    public void setForwardedHeader(ClientIpResolver.ForwardedHeader forwardedHeader) {
        this.forwardedHeader = forwardedHeader;
    }

    public int getIpv6PrefixLength() {
        return ipv6PrefixLength;
    }

    public void setIpv6PrefixLength(int ipv6PrefixLength) {
        this.ipv6PrefixLength = ipv6PrefixLength;
    }

    public Set<HeaderStyle> getHeaders() {
        return headers;
    }

    public void setHeaders(Set<HeaderStyle> headers) {
        this.headers = headers;
    }

    public int getRejectStatus() {
        return rejectStatus;
    }

    public void setRejectStatus(int rejectStatus) {
        this.rejectStatus = rejectStatus;
    }

    public boolean isLogShadow() {
        return logShadow;
    }

    public void setLogShadow(boolean logShadow) {
        this.logShadow = logShadow;
    }

    public Duration getLimitCacheTtl() {
        return limitCacheTtl;
    }

    public void setLimitCacheTtl(Duration limitCacheTtl) {
        this.limitCacheTtl = limitCacheTtl;
    }

    public Map<String, List<String>> getPlans() {
        return plans;
    }

    public void setPlans(Map<String, List<String>> plans) {
        this.plans = plans;
    }

    public List<KeyLimit> getKeys() {
        return keys;
    }

    public void setKeys(List<KeyLimit> keys) {
        this.keys = keys;
    }

    public List<UrlRuleProperties> getRules() {
        return rules;
    }

    public void setRules(List<UrlRuleProperties> rules) {
        this.rules = rules;
    }

    public Filter getFilter() {
        return filter;
    }

    /** The local store. */
    public static class Local {

        /** Most buckets kept in memory. */
        private long maximumKeys = 100_000;

        public long getMaximumKeys() {
            return maximumKeys;
        }

        public void setMaximumKeys(long maximumKeys) {
            this.maximumKeys = maximumKeys;
        }
    }

    /** The Redis store. Without url, sentinel or cluster here, spring.data.redis.* is used. */
    public static class Redis {

        /** Redis URL: redis://[user:password@]host:port[/db], or rediss:// for TLS. */
        private String url;

        private final Sentinel sentinel = new Sentinel();

        private final Cluster cluster = new Cluster();

        /** ACL user for Sentinel and Cluster connections. */
        private String username;

        /** Password for Sentinel and Cluster connections. */
        private String password;

        /** Whether Sentinel and Cluster connections use TLS. */
        private boolean ssl;

        /** First part of every Redis key; instances that share limits share it. */
        private String keyPrefix = "ratelimit";

        /** How long one Redis command may take before it fails. */
        private Duration commandTimeout = Duration.ofMillis(50);

        /** How long connecting, or waiting for a pooled connection, may take. */
        private Duration connectTimeout = Duration.ofMillis(200);

        /** Connections per Redis node. */
        private int poolSize = 16;

        public String getUrl() {
            return url;
        }

        public void setUrl(String url) {
            this.url = url;
        }

        public Sentinel getSentinel() {
            return sentinel;
        }

        public Cluster getCluster() {
            return cluster;
        }

        public String getUsername() {
            return username;
        }

        public void setUsername(String username) {
            this.username = username;
        }

        public String getPassword() {
            return password;
        }

        public void setPassword(String password) {
            this.password = password;
        }

        public boolean isSsl() {
            return ssl;
        }

        public void setSsl(boolean ssl) {
            this.ssl = ssl;
        }

        public String getKeyPrefix() {
            return keyPrefix;
        }

        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }

        public Duration getCommandTimeout() {
            return commandTimeout;
        }

        public void setCommandTimeout(Duration commandTimeout) {
            this.commandTimeout = commandTimeout;
        }

        public Duration getConnectTimeout() {
            return connectTimeout;
        }

        public void setConnectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
        }

        public int getPoolSize() {
            return poolSize;
        }

        public void setPoolSize(int poolSize) {
            this.poolSize = poolSize;
        }

        /** Whether any connection target is set here. */
        boolean isConfigured() {
            return url != null || sentinel.master != null || !cluster.nodes.isEmpty();
        }

        /** Redis Sentinel. */
        public static class Sentinel {

            /** Name of the master the sentinels monitor. */
            private String master;

            /** Sentinels as host:port. */
            private List<String> nodes = new ArrayList<>();

            public String getMaster() {
                return master;
            }

            public void setMaster(String master) {
                this.master = master;
            }

            public List<String> getNodes() {
                return nodes;
            }

            public void setNodes(List<String> nodes) {
                this.nodes = nodes;
            }
        }

        /** Redis Cluster. */
        public static class Cluster {

            /** Some of the cluster's nodes as host:port. */
            private List<String> nodes = new ArrayList<>();

            public List<String> getNodes() {
                return nodes;
            }

            public void setNodes(List<String> nodes) {
                this.nodes = nodes;
            }
        }
    }

    /** A key with limits, or a plan, of its own. */
    public static class KeyLimit {

        /** The key as key-expression:key, e.g. user:241531. */
        private String key;

        /** The key's own limits, e.g. 5/1s. */
        private List<String> limits = new ArrayList<>();

        /** A plan from ratelimit.plans. */
        private String plan;

        public String getKey() {
            return key;
        }

        public void setKey(String key) {
            this.key = key;
        }

        public List<String> getLimits() {
            return limits;
        }

        public void setLimits(List<String> limits) {
            this.limits = limits;
        }

        public String getPlan() {
            return plan;
        }

        public void setPlan(String plan) {
            this.plan = plan;
        }
    }

    /** A rule for the requests whose path and method match. */
    public static class UrlRuleProperties {

        /** The rule's name (buckets, headers, metrics); defaults to rules[i]. */
        private String name;

        /** Ant-style path patterns, e.g. /api/**. */
        private List<String> paths = new ArrayList<>();

        /** HTTP methods; empty for all. */
        private List<String> methods = new ArrayList<>();

        /** What to count by: global, ip, user, header:Name, a KeyResolver bean's name; + and | combine. */
        private String key = "global";

        /** Windows, e.g. 5/1s, 100/1m, 5/1s burst=20. */
        private List<String> limits = new ArrayList<>();

        /** What happens to a request over the limit. */
        private Mode mode = Mode.HARD;

        /** Longest a SOFT request waits. */
        private Duration maxDelay;

        /** Most requests of this SOFT rule waiting at once (default 100); beyond it they are rejected. */
        private Integer maxWaiting;

        /** Which requests the tokens pay for: all admitted ones, or only failed attempts (status 401, a failed login). */
        private Count count = Count.ALL;

        /** Whether the rule decides before Spring Security authenticates (for limiting login attempts) or after. */
        private Phase phase = Phase.AFTER_AUTHENTICATION;

        /** Tokens one request takes. */
        private long cost = 1;

        /** What the rule decides when the store fails. */
        private StoreFailurePolicy onStoreFailure = StoreFailurePolicy.DEFAULT;

        /** What the rule does when its key cannot be resolved. */
        private MissingKeyPolicy onMissingKey = MissingKeyPolicy.REJECT;

        /** How buckets refill. */
        private Algorithm algorithm = Algorithm.TOKEN_BUCKET;

        /** Tokens an instance may take before synchronizing with a shared store; unset decides with a round trip each. */
        private Long localFirstTokens;

        /** Longest an instance goes without synchronizing, with local-first-tokens. */
        private Duration localFirstTime = Duration.ofMillis(100);

        public Long getLocalFirstTokens() {
            return localFirstTokens;
        }

        public void setLocalFirstTokens(Long localFirstTokens) {
            this.localFirstTokens = localFirstTokens;
        }

        public Duration getLocalFirstTime() {
            return localFirstTime;
        }

        public void setLocalFirstTime(Duration localFirstTime) {
            this.localFirstTime = localFirstTime;
        }

        public String getName() {
            return name;
        }

        public void setName(String name) {
            this.name = name;
        }

        public List<String> getPaths() {
            return paths;
        }

        public void setPaths(List<String> paths) {
            this.paths = paths;
        }

        public List<String> getMethods() {
            return methods;
        }

        public void setMethods(List<String> methods) {
            this.methods = methods;
        }

        public String getKey() {
            return key;
        }

        public void setKey(String key) {
            this.key = key;
        }

        public List<String> getLimits() {
            return limits;
        }

        public void setLimits(List<String> limits) {
            this.limits = limits;
        }

        public Mode getMode() {
            return mode;
        }

        public void setMode(Mode mode) {
            this.mode = mode;
        }

        public Duration getMaxDelay() {
            return maxDelay;
        }

        public Integer getMaxWaiting() {
            return maxWaiting;
        }

        public Count getCount() {
            return count;
        }

        public void setCount(Count count) {
            this.count = count;
        }

        public Phase getPhase() {
            return phase;
        }

        public void setPhase(Phase phase) {
            this.phase = phase;
        }

        public void setMaxWaiting(Integer maxWaiting) {
            this.maxWaiting = maxWaiting;
        }

        public void setMaxDelay(Duration maxDelay) {
            this.maxDelay = maxDelay;
        }

        public long getCost() {
            return cost;
        }

        public void setCost(long cost) {
            this.cost = cost;
        }

        public StoreFailurePolicy getOnStoreFailure() {
            return onStoreFailure;
        }

        public void setOnStoreFailure(StoreFailurePolicy onStoreFailure) {
            this.onStoreFailure = onStoreFailure;
        }

        public MissingKeyPolicy getOnMissingKey() {
            return onMissingKey;
        }

        public void setOnMissingKey(MissingKeyPolicy onMissingKey) {
            this.onMissingKey = onMissingKey;
        }

        public Algorithm getAlgorithm() {
            return algorithm;
        }

        public void setAlgorithm(Algorithm algorithm) {
            this.algorithm = algorithm;
        }
    }

    /** The servlet filter that enforces the URL rules. */
    public static class Filter {

        /** Filter order; by default right after Spring Security's filter chain, so user keys see the principal. */
        private int order = -99;

        /**
         * Order of the filter for rules with phase before-authentication; by default right before Spring Security's
         * filter chain (and after Spring's request context filter).
         */
        private int beforeAuthenticationOrder = -101;

        public int getOrder() {
            return order;
        }

        public void setOrder(int order) {
            this.order = order;
        }

        public int getBeforeAuthenticationOrder() {
            return beforeAuthenticationOrder;
        }

        public void setBeforeAuthenticationOrder(int beforeAuthenticationOrder) {
            this.beforeAuthenticationOrder = beforeAuthenticationOrder;
        }
    }
}
