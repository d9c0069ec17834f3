package io.github.ratelimit.internal.config;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.store.BucketStore;
import java.time.Duration;
import java.util.List;

/**
 * The Redis server the store talks to (at most one of a URL, a Sentinel master, Cluster nodes; none when
 * {@code ratelimit.redis.*} names no server) and the client's settings, as {@link RateLimitSettings} read them from
 * {@code ratelimit.redis.*}. The client's settings apply to a server found elsewhere too (Spring Boot's
 * {@code spring.data.redis.*}).
 *
 * @param url {@code redis://[user:password@]host:port[/db]} or {@code rediss://...}, or {@code null}
 * @param sentinelMaster the name the sentinels monitor, or {@code null}
 * @param sentinelNodes the sentinels as {@code host:port}, empty unless a Sentinel master is set
 * @param clusterNodes some Cluster nodes as {@code host:port}, or empty
 * @param username the ACL user for Sentinel and Cluster, or {@code null}
 * @param password its password, or {@code null}
 * @param ssl whether Sentinel and Cluster connections use TLS
 * @param keyPrefix the first part of every key
 * @param commandTimeout how long a command may take
 * @param connectTimeout how long connecting, or waiting for a pooled connection, may take
 * @param poolSize connections per node
 * @param autoPipelining whether concurrent threads' scripts share round trips (standalone and Sentinel)
 * @param migrateKeys whether the store moves keys of the earlier key layout to the current one at start-up
 * @param backgroundTimeout how long a call off the request path may take (lease renewals, late refunds)
 */
public record RedisSettings(
        String url,
        String sentinelMaster,
        List<String> sentinelNodes,
        List<String> clusterNodes,
        String username,
        String password,
        boolean ssl,
        String keyPrefix,
        Duration commandTimeout,
        Duration connectTimeout,
        int poolSize,
        boolean autoPipelining,
        boolean migrateKeys,
        Duration backgroundTimeout) {

    /**
     * Copies the lists.
     *
     * @param url the URL, or {@code null}
     * @param sentinelMaster the name the sentinels monitor, or {@code null}
     * @param sentinelNodes the sentinels as {@code host:port}
     * @param clusterNodes some Cluster nodes as {@code host:port}
     * @param username the ACL user for Sentinel and Cluster, or {@code null}
     * @param password its password, or {@code null}
     * @param ssl whether Sentinel and Cluster connections use TLS
     * @param keyPrefix the first part of every key
     * @param commandTimeout how long a command may take
     * @param connectTimeout how long connecting, or waiting for a pooled connection, may take
     * @param poolSize connections per node
     * @param autoPipelining whether concurrent threads' scripts share round trips
     * @param migrateKeys whether the store moves keys of the earlier key layout to the current one at start-up
     * @param backgroundTimeout how long a call off the request path may take
     */
    public RedisSettings {
        sentinelNodes = List.copyOf(sentinelNodes);
        clusterNodes = List.copyOf(clusterNodes);
    }

    /**
     * @return whether a server is named: a URL, a Sentinel master or Cluster nodes
     */
    public boolean hasServer() {
        return url != null || sentinelMaster != null || !clusterNodes.isEmpty();
    }

    /**
     * @return a Redis store for these settings; needs Jedis on the class path and {@link #hasServer()}
     * @throws InvalidRateLimitConfigurationException when the store refuses a value
     */
    public BucketStore toStore() {
        return toStore(null);
    }

    /**
     * @param clock replaces the Redis server's clock (tests that control time), or {@code null}
     * @return a Redis store for these settings, as {@link #toStore()}
     * @throws InvalidRateLimitConfigurationException when the store refuses a value
     */
    public BucketStore toStore(TimeMeter clock) {
        return JedisStoreFactory.create(this, clock);
    }

    @Override
    public String toString() {
        return "RedisSettings["
                + (url != null
                        ? "url=" + url.replaceAll("//[^@/]*@", "//***@")
                        : sentinelMaster != null
                                ? "sentinel=" + sentinelMaster + sentinelNodes
                                : clusterNodes.isEmpty() ? "no server" : "cluster=" + clusterNodes)
                + ", keyPrefix=" + keyPrefix + ", commandTimeout=" + commandTimeout + "]";
    }
}
