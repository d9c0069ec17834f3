package io.github.ratelimit.redis;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import java.net.URI;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.RedisSentinelClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.util.JedisURIHelper;

/**
 * The Jedis client a {@link JedisBucketStore} builds for itself from a URL, Sentinel or Cluster nodes: a pool as
 * large as the builder says, the command and connect timeouts on every connection, and the checks of the targets'
 * text, with messages that say how to write them.
 */
final class JedisClients {

    private JedisClients() {}

    /**
     * @param b the builder, with exactly one of a URL, a Sentinel master or Cluster nodes
     * @return a client the store owns and closes
     */
    static UnifiedJedis connect(JedisStoreOptions b) {
        return connect(b, b.commandTimeout, b.poolSize);
    }

    /**
     * @param b the builder, with exactly one of a URL, a Sentinel master or Cluster nodes
     * @param commandTimeout how long a command may take on this client's connections
     * @param poolSize connections per node
     * @return a client the store owns and closes
     */
    static UnifiedJedis connect(JedisStoreOptions b, Duration commandTimeout, int poolSize) {
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(poolSize);
        pool.setMaxIdle(poolSize);
        pool.setMaxWait(b.connectTimeout);
        pool.setBlockWhenExhausted(true);
        // Callers waiting for a connection are served in turn: a crowd waits its turn, none is passed over.
        pool.setFairness(true);
        if (b.url != null) {
            URI uri = parseUrl(b.url);
            DefaultJedisClientConfig config = clientConfig(
                            b,
                            commandTimeout,
                            JedisURIHelper.getUser(uri),
                            JedisURIHelper.getPassword(uri),
                            JedisURIHelper.isRedisSSLScheme(uri))
                    .database(JedisURIHelper.getDBIndex(uri))
                    .build();
            return RedisClient.builder()
                    .hostAndPort(JedisURIHelper.getHostAndPort(uri))
                    .clientConfig(config)
                    .poolConfig(pool)
                    .build();
        }
        JedisClientConfig config =
                clientConfig(b, commandTimeout, b.user, b.password, b.ssl).build();
        if (b.sentinelMaster != null) {
            JedisClientConfig sentinelConfig =
                    clientConfig(b, commandTimeout, null, null, b.ssl).build();
            return RedisSentinelClient.builder()
                    .masterName(b.sentinelMaster)
                    .sentinels(b.sentinels)
                    .clientConfig(config)
                    .sentinelClientConfig(sentinelConfig)
                    .poolConfig(pool)
                    .build();
        }
        return RedisClusterClient.builder()
                .nodes(b.clusterNodes)
                .clientConfig(config)
                .poolConfig(pool)
                .maxAttempts(3)
                .maxTotalRetriesDuration(commandTimeout.multipliedBy(3))
                .build();
    }

    private static DefaultJedisClientConfig.Builder clientConfig(
            JedisStoreOptions b,
            Duration commandTimeout,
            @Nullable String user,
            @Nullable String password,
            boolean ssl) {
        DefaultJedisClientConfig.Builder config = DefaultJedisClientConfig.builder()
                .socketTimeoutMillis((int) commandTimeout.toMillis())
                .connectionTimeoutMillis((int) b.connectTimeout.toMillis())
                .user(user)
                .password(password)
                .ssl(ssl)
                .clientName("ratelimit");
        if (b.sslSocketFactory != null) {
            config.ssl(true).sslSocketFactory(b.sslSocketFactory).sslParameters(b.sslParameters);
        }
        return config;
    }

    static URI parseUrl(String url) {
        URI uri;
        try {
            uri = URI.create(url.trim());
        } catch (IllegalArgumentException e) {
            throw invalidUrl(url);
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!(scheme.equals("redis") || scheme.equals("rediss")) || uri.getHost() == null) {
            throw invalidUrl(url);
        }
        return uri;
    }

    private static InvalidRateLimitConfigurationException invalidUrl(String url) {
        return new InvalidRateLimitConfigurationException("redis url '" + url.replaceAll("//[^@/]*@", "//***@")
                + "' is invalid. Use redis://[user:password@]host:port[/database], or rediss:// for TLS.");
    }

    static Set<HostAndPort> hostsAndPorts(String what, Collection<String> nodes) {
        if (nodes == null || nodes.isEmpty()) {
            throw new InvalidRateLimitConfigurationException(
                    "redis " + what + " nodes are empty. Give at least " + "one as host:port, e.g. 'redis-1:26379'.");
        }
        Set<HostAndPort> result = new LinkedHashSet<>();
        for (String node : nodes) {
            int colon = node == null ? -1 : node.lastIndexOf(':');
            int port = -1;
            if (colon > 0) {
                try {
                    port = Integer.parseInt(node.substring(colon + 1).trim());
                } catch (NumberFormatException e) {
                    port = -1;
                }
            }
            if (port < 1 || port > 65535) {
                throw new InvalidRateLimitConfigurationException(
                        "redis " + what + " node '" + node + "' is not " + "host:port. Write it like 'redis-1:6379'.");
            }
            String host = node.substring(0, colon).trim();
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            result.add(new HostAndPort(host, port));
        }
        return result;
    }
}
