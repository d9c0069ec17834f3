package io.github.ratelimit.benchmarks.redis;

import io.github.ratelimit.testing.redis.RedisServer;
import java.net.URI;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.util.JedisURIHelper;

/**
 * The Redis the benchmark runs against: one it starts itself ({@link RedisServer}, a free port and its own temp
 * directory, stopped by {@link #close()}), or an existing one given by URL. Holds one extra connection for
 * INFO, SCRIPT LOAD and PTTL.
 */
final class RedisTarget implements AutoCloseable {

    private final RedisServer server;
    private final URI uri;
    private final Jedis admin;
    private final String origin;

    private RedisTarget(RedisServer server, URI uri, String origin) {
        this.server = server;
        this.uri = uri;
        this.origin = origin;
        DefaultJedisClientConfig config = DefaultJedisClientConfig.builder()
                .user(JedisURIHelper.getUser(uri))
                .password(JedisURIHelper.getPassword(uri))
                .database(JedisURIHelper.getDBIndex(uri))
                .ssl(JedisURIHelper.isRedisSSLScheme(uri))
                .socketTimeoutMillis(30_000)
                .connectionTimeoutMillis(5_000)
                .clientSetInfoConfig(ClientSetInfoConfig.DISABLED)
                .clientName("bench-admin")
                .build();
        this.admin = new Jedis(JedisURIHelper.getHostAndPort(uri), config);
        admin.ping();
    }

    /** Starts a redis-server of its own (from the PATH, or the embedded binary). */
    static RedisTarget start() {
        RedisServer server = RedisServer.start();
        try {
            return new RedisTarget(server, server.uri(), "started by the benchmark: " + server.binary());
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
    }

    /** Uses an existing Redis. */
    static RedisTarget connect(String url) {
        URI uri = URI.create(url.trim());
        if (!JedisURIHelper.isValid(uri)) {
            throw new Options.UsageException("--redis needs redis://host:port[/db], but was " + url);
        }
        return new RedisTarget(null, uri, "given by --redis");
    }

    /** @return the URL clients connect with */
    String url() {
        return uri.toString();
    }

    HostAndPort hostAndPort() {
        return JedisURIHelper.getHostAndPort(uri);
    }

    int database() {
        return JedisURIHelper.getDBIndex(uri);
    }

    String user() {
        return JedisURIHelper.getUser(uri);
    }

    String password() {
        return JedisURIHelper.getPassword(uri);
    }

    boolean ownServer() {
        return server != null;
    }

    /** @return e.g. {@code Redis 7.0.15 on 127.0.0.1:40123, started by the benchmark: redis-server 7.0.15 (PATH: ...)} */
    String description() {
        return "Redis " + version() + " on " + hostAndPort() + " db " + database() + ", " + origin;
    }

    String version() {
        for (String line : admin.info("server").split("\r?\n")) {
            if (line.startsWith("redis_version:")) {
                return line.substring("redis_version:".length()).strip();
            }
        }
        return "unknown";
    }

    /** @return a snapshot of the server's counters */
    ServerCounters counters() {
        return ServerCounters.parse(admin.info("all"));
    }

    /** @return the extra connection, for SCRIPT LOAD, EVALSHA checks and PTTL; one thread at a time */
    Jedis admin() {
        return admin;
    }

    @Override
    public void close() {
        try {
            admin.close();
        } finally {
            if (server != null) {
                server.close();
            }
        }
    }
}
