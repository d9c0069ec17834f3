package io.github.ratelimit.spring.boot.autoconfigure;

import java.time.Duration;
import java.util.List;

/** The Redis store, {@code ratelimit.redis.*}; without url, sentinel or cluster, spring.data.redis.* is used. */
public class RateLimitRedisProperties {

    /** redis://[user:password@]host:port[/database], rediss:// for TLS. */
    private String url;

    private final Sentinel sentinel = new Sentinel();

    private final Cluster cluster = new Cluster();

    /** ACL user for Sentinel and Cluster (a URL carries its own). */
    private String username;

    /** Password for Sentinel and Cluster (a URL carries its own). */
    private String password;

    /** Whether Sentinel and Cluster connections use TLS. */
    private Boolean ssl;

    /** First part of every Redis key; instances that share limits share it. */
    private String keyPrefix;

    /** A Redis command fails after this, and the rule's failure policy applies. */
    private Duration commandTimeout;

    /**
     * How long Redis may take to answer the store's calls off the request path, on connections of their own: renewing
     * the leases of calls in flight, and giving back slots and tokens that could not be given back when a call ended.
     */
    private Duration backgroundTimeout;

    /** Connecting, or waiting for a pooled connection, fails after this. */
    private Duration connectTimeout;

    /** Connections per Redis node. */
    private Integer poolSize;

    /**
     * Whether decisions made at once by several threads share Redis round trips (standalone and Sentinel; not
     * on a Cluster).
     */
    private Boolean autoPipelining;

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

    public Boolean getSsl() {
        return ssl;
    }

    public void setSsl(Boolean ssl) {
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

    public Duration getBackgroundTimeout() {
        return backgroundTimeout;
    }

    public void setBackgroundTimeout(Duration backgroundTimeout) {
        this.backgroundTimeout = backgroundTimeout;
    }

    public Duration getConnectTimeout() {
        return connectTimeout;
    }

    public void setConnectTimeout(Duration connectTimeout) {
        this.connectTimeout = connectTimeout;
    }

    public Integer getPoolSize() {
        return poolSize;
    }

    public void setPoolSize(Integer poolSize) {
        this.poolSize = poolSize;
    }

    public Boolean getAutoPipelining() {
        return autoPipelining;
    }

    public void setAutoPipelining(Boolean autoPipelining) {
        this.autoPipelining = autoPipelining;
    }

    /** Redis Sentinel. */
    public static class Sentinel {

        /** Name of the master the sentinels monitor. */
        private String master;

        /** Sentinels, as host:port. */
        private List<String> nodes;

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

        /** Some of the cluster's nodes, as host:port. */
        private List<String> nodes;

        public List<String> getNodes() {
            return nodes;
        }

        public void setNodes(List<String> nodes) {
            this.nodes = nodes;
        }
    }
}
