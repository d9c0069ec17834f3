package io.github.ratelimit.spring.boot.autoconfigure;

import io.github.ratelimit.StoreFailurePolicy;
import io.github.ratelimit.internal.config.RateLimitSettings;
import io.github.ratelimit.key.ClientIpResolver;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Rate limiting, under {@code ratelimit.*}: the names a servlet filter's rules file uses. Spring binds these
 * properties (relaxed names, profiles, YAML lists) and the starter hands them to {@link RateLimitSettings}, the
 * model the filter uses too: that is where the defaults are, where every value is checked, and where an unknown
 * property is refused. So nothing here has a default of its own; an unset property is {@code null}.
 */
@ConfigurationProperties("ratelimit")
public class RateLimitProperties {

    /** Whether rate limiting is enabled. */
    private Boolean enabled;

    /** Where buckets live: auto (Redis when one is configured here or in spring.data.redis, else this JVM), local or redis. */
    private RateLimitSettings.StoreKind store;

    private final Local local = new Local();

    @NestedConfigurationProperty
    private final RateLimitRedisProperties redis = new RateLimitRedisProperties();

    /** What rules that do not say decide when the store fails. */
    private StoreFailurePolicy defaultStoreFailurePolicy;

    /** Share of a limit a local fallback bucket holds (1/N for N instances). */
    private Double localFallbackShare;

    /** Most calls waiting out a SOFT delay at once, all rules together; each SOFT rule also has its own bound. */
    private Integer maxWaiting;

    /**
     * A dry run: every rule only records what it would reject, whatever its mode (as mode shadow), for rolling a
     * configuration out: nothing is rejected or delayed, metrics count shadow_rejected, no header claims a limit.
     */
    private Boolean shadow;

    /** Client addresses and ranges no rule limits, e.g. 10.0.0.0/8, 192.0.2.7; counted in metrics with basis exempt. */
    private List<String> exempt;

    /** Addresses or CIDRs of reverse proxies whose forwarding header is believed. */
    private List<String> trustedProxies;

    /**
     * Whether the ip key takes the client address the web server reports (rewritten by its own forwarding
     * configuration, server.forward-headers-strategy=native with server.tomcat.remoteip.*) instead of the
     * connection's, walked through ratelimit.trusted-proxies. Only with an internal-proxies setting that lists your
     * own proxies alone; not with trusted-proxies.
     */
    private Boolean trustContainerForwarding;

    /** The one forwarding header the trusted proxies write. */
    private ClientIpResolver.ForwardedHeader forwardedHeader;

    /** IPv6 clients are keyed by this prefix length. */
    private Integer ipv6PrefixLength;

    /** Rate-limit header styles written on responses: x-ratelimit, ietf-draft-09, or none. */
    private List<String> headers;

    /** Status of a rejected web request. */
    private Integer rejectStatus;

    /** Whether to log what SHADOW rules would have rejected. */
    private Boolean logShadow;

    /** Whether to record metrics in the application's Micrometer registry. */
    private Boolean metrics;

    /**
     * Share of a window's limit below which a permitted call counts in ratelimit.near.limit: 0.2 counts calls that
     * left less than 20 % (above 0, at most 1).
     */
    private Double nearLimit;

    /**
     * Whether @RateLimit rules of methods other than the request's handler (a service method throttling an
     * outbound call) add their items to the response's rate-limit headers.
     */
    private Boolean methodHeaders;

    /** How long per-key limits (ratelimit.keys, a LimitProvider bean) are cached. */
    private Duration limitCacheTtl;

    /** Per-key limits kept in Redis and changed at run time. */
    private final LimitStore limitStore = new LimitStore();

    /** Limits of named plans, e.g. free: 10/1m. */
    private Map<String, List<String>> plans = new LinkedHashMap<>();

    /**
     * Where a call's plan comes from, for keys with no entry of their own: authority:PLAN_ (authority PLAN_pro selects
     * plan pro), header:Name (believed only from ratelimit.trusted-proxies, or from every peer with
     * plan-header-trusted), a KeyResolver bean's name, or SpEL over #request.
     */
    private String planFrom;

    /**
     * Whether a plan header (plan-from=header:Name) is believed from every peer rather than only from
     * ratelimit.trusted-proxies: only when nothing reaches the application without passing something that sets or
     * removes the header. Without trusted-proxies, a plan header needs it.
     */
    private Boolean planHeaderTrusted;

    /** Names of the rules plans from the call are for; by default every rule counting by the user. */
    private List<String> planRules;

    /** Keys with limits or a plan of their own. */
    private List<KeyLimit> keys = new ArrayList<>();

    /** URL rules, enforced by a servlet filter. */
    private List<RateLimitRuleProperties> rules = new ArrayList<>();

    private final Filter filter = new Filter();

    public Boolean getEnabled() {
        return enabled;
    }

    public void setEnabled(Boolean enabled) {
        this.enabled = enabled;
    }

    public RateLimitSettings.StoreKind getStore() {
        return store;
    }

    public void setStore(RateLimitSettings.StoreKind store) {
        this.store = store;
    }

    public Local getLocal() {
        return local;
    }

    public RateLimitRedisProperties getRedis() {
        return redis;
    }

    public StoreFailurePolicy getDefaultStoreFailurePolicy() {
        return defaultStoreFailurePolicy;
    }

    public void setDefaultStoreFailurePolicy(StoreFailurePolicy defaultStoreFailurePolicy) {
        this.defaultStoreFailurePolicy = defaultStoreFailurePolicy;
    }

    public Double getLocalFallbackShare() {
        return localFallbackShare;
    }

    public void setLocalFallbackShare(Double localFallbackShare) {
        this.localFallbackShare = localFallbackShare;
    }

    public Integer getMaxWaiting() {
        return maxWaiting;
    }

    public void setMaxWaiting(Integer maxWaiting) {
        this.maxWaiting = maxWaiting;
    }

    public Boolean getShadow() {
        return shadow;
    }

    public void setShadow(Boolean shadow) {
        this.shadow = shadow;
    }

    public List<String> getExempt() {
        return exempt;
    }

    public void setExempt(List<String> exempt) {
        this.exempt = exempt;
    }

    public List<String> getTrustedProxies() {
        return trustedProxies;
    }

    public void setTrustedProxies(List<String> trustedProxies) {
        this.trustedProxies = trustedProxies;
    }

    public Boolean getTrustContainerForwarding() {
        return trustContainerForwarding;
    }

    public void setTrustContainerForwarding(Boolean trustContainerForwarding) {
        this.trustContainerForwarding = trustContainerForwarding;
    }

    public ClientIpResolver.ForwardedHeader getForwardedHeader() {
        return forwardedHeader;
    }

    public void setForwardedHeader(ClientIpResolver.ForwardedHeader forwardedHeader) {
        this.forwardedHeader = forwardedHeader;
    }

    public Integer getIpv6PrefixLength() {
        return ipv6PrefixLength;
    }

    public void setIpv6PrefixLength(Integer ipv6PrefixLength) {
        this.ipv6PrefixLength = ipv6PrefixLength;
    }

    public List<String> getHeaders() {
        return headers;
    }

    public void setHeaders(List<String> headers) {
        this.headers = headers;
    }

    public Integer getRejectStatus() {
        return rejectStatus;
    }

    public void setRejectStatus(Integer rejectStatus) {
        this.rejectStatus = rejectStatus;
    }

    public Boolean getLogShadow() {
        return logShadow;
    }

    public void setLogShadow(Boolean logShadow) {
        this.logShadow = logShadow;
    }

    public Boolean getMetrics() {
        return metrics;
    }

    public void setMetrics(Boolean metrics) {
        this.metrics = metrics;
    }

    public Double getNearLimit() {
        return nearLimit;
    }

    public void setNearLimit(Double nearLimit) {
        this.nearLimit = nearLimit;
    }

    public Boolean getMethodHeaders() {
        return methodHeaders;
    }

    public void setMethodHeaders(Boolean methodHeaders) {
        this.methodHeaders = methodHeaders;
    }

    public LimitStore getLimitStore() {
        return limitStore;
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

    public String getPlanFrom() {
        return planFrom;
    }

    public void setPlanFrom(String planFrom) {
        this.planFrom = planFrom;
    }

    public Boolean getPlanHeaderTrusted() {
        return planHeaderTrusted;
    }

    public void setPlanHeaderTrusted(Boolean planHeaderTrusted) {
        this.planHeaderTrusted = planHeaderTrusted;
    }

    public List<String> getPlanRules() {
        return planRules;
    }

    public void setPlanRules(List<String> planRules) {
        this.planRules = planRules;
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

    public List<RateLimitRuleProperties> getRules() {
        return rules;
    }

    public void setRules(List<RateLimitRuleProperties> rules) {
        this.rules = rules;
    }

    public Filter getFilter() {
        return filter;
    }

    /** The local store. */
    public static class Local {

        /** Most buckets kept in memory. */
        private Long maximumKeys;

        public Long getMaximumKeys() {
            return maximumKeys;
        }

        public void setMaximumKeys(Long maximumKeys) {
            this.maximumKeys = maximumKeys;
        }
    }

    /** A key with limits of its own, or a plan. */
    public static class KeyLimit {

        /** <key expression>:<key>, e.g. user:241531. */
        private String key;

        /** The key's own limits; or give a plan. */
        private List<String> limits;

        /** A plan from ratelimit.plans; or give limits. */
        private String plan;

        /** Names of the rules the key's limits are for; by default every rule counting by the key's expression. */
        private List<String> rules;

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

        public List<String> getRules() {
            return rules;
        }

        public void setRules(List<String> rules) {
            this.rules = rules;
        }
    }

    /** The servlet filters' positions. */
    public static class Filter {

        /** Order of the rate-limit filter; by default right after Spring Security's chain. */
        private Integer order;

        /** Order of the filter for rules with phase before-authentication; by default right before Spring Security's chain. */
        private Integer beforeAuthenticationOrder;

        public Integer getOrder() {
            return order;
        }

        public void setOrder(Integer order) {
            this.order = order;
        }

        public Integer getBeforeAuthenticationOrder() {
            return beforeAuthenticationOrder;
        }

        public void setBeforeAuthenticationOrder(Integer beforeAuthenticationOrder) {
            this.beforeAuthenticationOrder = beforeAuthenticationOrder;
        }
    }

    /** Per-key limits kept in Redis and changed at run time. */
    public static class LimitStore {

        /**
         * Whether per-key limits and plan assignments are also kept in the Redis of the store, changed at run time
         * (they win over ratelimit.keys).
         */
        private Boolean enabled;

        /**
         * How often each instance reads the changes of per-key limits made elsewhere: how long another instance
         * keeps a key's old limits.
         */
        private Duration refreshInterval;

        public Boolean getEnabled() {
            return enabled;
        }

        public void setEnabled(Boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getRefreshInterval() {
            return refreshInterval;
        }

        public void setRefreshInterval(Duration refreshInterval) {
            this.refreshInterval = refreshInterval;
        }
    }
}
