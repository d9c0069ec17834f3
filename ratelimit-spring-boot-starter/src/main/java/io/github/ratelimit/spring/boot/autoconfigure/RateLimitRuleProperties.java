package io.github.ratelimit.spring.boot.autoconfigure;


import io.github.ratelimit.Algorithm;
import io.github.ratelimit.MissingKeyPolicy;
import io.github.ratelimit.Mode;
import io.github.ratelimit.StoreFailurePolicy;
import io.github.ratelimit.internal.web.Phase;

import java.time.Duration;
import java.util.List;

/** A URL rule, {@code ratelimit.rules[i]}. */
public class RateLimitRuleProperties {

    /** The rule's name (buckets, headers, metrics); default rules[i]. */
    private String name;

    /** Ant-style path patterns, e.g. /api/**. */
    private List<String> paths;

    /** HTTP methods (any case; GET covers HEAD); all when empty. */
    private List<String> methods;

    /** What to count by: global, ip, user, basic-user, form-user, header:Name, param:name, a KeyResolver bean's name; + and | combine. */
    private String key;

    /** Windows, e.g. 5/1s, 100/1m, 5/1s burst=20; calendar quotas 1000/1mo, 100/1d@Europe/Berlin, which make the rule a fixed window. */
    private List<String> limits;

    /**
     * Makes a rule of calls in flight instead of windows: at most this many requests per key at once, each holding a
     * slot until its response is written; on Redis, leases that come back within 15 s of a crash.
     */
    private Integer concurrency;

    /** What happens to a request over the limit. */
    private Mode mode;

    /** Longest a SOFT request waits. */
    private Duration maxDelay;

    /** Most requests of this SOFT rule waiting at once; beyond it they are rejected. */
    private Integer maxWaiting;

    /**
     * Which requests the tokens pay for: all (all admitted ones), failures (only failed attempts: status 401, a failed
     * login), or statuses:&lt;codes&gt; (only responses with those statuses, e.g. statuses:404,5xx).
     */
    private String count;

    /**
     * How many permits a request counts as, resolved like a key: header:Name, param:name, a KeyResolver bean's name,
     * or SpEL over #request; a whole number (0 counts as 1); anything else refuses the request.
     */
    private String permits;

    /** Whether the rule decides before Spring Security authenticates (for limiting login attempts) or after. */
    private Phase phase;

    /** Tokens one request takes. */
    private Long cost;

    /** What the rule decides when the store fails. */
    private StoreFailurePolicy onStoreFailure;

    /** What the rule does when its key cannot be resolved. */
    private MissingKeyPolicy onMissingKey;

    /** How the rule counts calls within its windows; fixed-window when not given and a limit is a calendar quota. */
    private Algorithm algorithm;

    /**
     * Key values the rule never limits, as it resolves them (alice for key user); for keys that read the client address,
     * addresses and ranges too (10.0.0.0/8).
     */
    private List<String> exempt;

    /** Tokens an instance may take before synchronizing with a shared store; unset decides with a round trip each. */
    private Long localFirstTokens;

    /** Longest an instance goes without synchronizing, with local-first-tokens. */
    private Duration localFirstTime;

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

    public void setMaxDelay(Duration maxDelay) {
        this.maxDelay = maxDelay;
    }

    public Integer getMaxWaiting() {
        return maxWaiting;
    }

    public void setMaxWaiting(Integer maxWaiting) {
        this.maxWaiting = maxWaiting;
    }

    public String getCount() {
        return count;
    }

    public void setCount(String count) {
        this.count = count;
    }

    public List<String> getExempt() {
        return exempt;
    }

    public void setExempt(List<String> exempt) {
        this.exempt = exempt;
    }

    public Integer getConcurrency() {
        return concurrency;
    }

    public void setConcurrency(Integer concurrency) {
        this.concurrency = concurrency;
    }

    public String getPermits() {
        return permits;
    }

    public void setPermits(String permits) {
        this.permits = permits;
    }

    public Phase getPhase() {
        return phase;
    }

    public void setPhase(Phase phase) {
        this.phase = phase;
    }

    public Long getCost() {
        return cost;
    }

    public void setCost(Long cost) {
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
}
