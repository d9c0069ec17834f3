package io.github.ratelimit.spring.boot.autoconfigure;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.internal.config.RedisSettings;
import io.github.ratelimit.redis.JedisBucketStore;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * Builds the Redis store from {@code spring.data.redis.*} (host, port, url, database, username, password, ssl,
 * sentinel, cluster) when {@code ratelimit.redis.*} names no server, so an application that already talks to Redis
 * needs no second set of connection properties. Loaded only when Jedis is present.
 */
final class JedisStores {

    private JedisStores() {
    }

    /**
     * @param client the client's settings from {@code ratelimit.redis.*} (key prefix, timeouts, pool size)
     * @param env where {@code spring.data.redis.*} names the server
     * @param clock replaces the Redis server's clock, or {@code null}
     * @return the store
     */
    static JedisBucketStore fromSpringDataRedis(RedisSettings client, Environment env,
                                                TimeMeter clock) {
        JedisBucketStore.Builder b = JedisBucketStore.builder()
                .keyPrefix(client.keyPrefix())
                .commandTimeout(client.commandTimeout())
                .connectTimeout(client.connectTimeout())
                .poolSize(client.poolSize())
                .autoPipelining(client.autoPipelining())
                .backgroundTimeout(client.backgroundTimeout());
        if (clock != null) {
            b.timeMeter(clock);
        }
        return fromSpringDataRedis(b, env);
    }

    private static JedisBucketStore fromSpringDataRedis(JedisBucketStore.Builder b, Environment env) {
        Binder binder = Binder.get(env);
        String user = env.getProperty("spring.data.redis.username");
        String password = env.getProperty("spring.data.redis.password");
        boolean ssl = env.getProperty("spring.data.redis.ssl.enabled", Boolean.class, false);
        String master = env.getProperty("spring.data.redis.sentinel.master");
        List<String> cluster = binder.bind("spring.data.redis.cluster.nodes", Bindable.listOf(String.class)).orElse(List.of());
        String url = env.getProperty("spring.data.redis.url");
        if (master != null) {
            List<String> nodes = binder.bind("spring.data.redis.sentinel.nodes", Bindable.listOf(String.class)).orElse(List.of());
            b.sentinel(master, nodes(nodes, "spring.data.redis.sentinel.nodes"));
        } else if (!cluster.isEmpty()) {
            b.cluster(cluster);
        } else if (url != null) {
            return b.url(url).build();
        } else {
            String host = env.getProperty("spring.data.redis.host", "localhost");
            int port = env.getProperty("spring.data.redis.port", Integer.class, 6379);
            int database = env.getProperty("spring.data.redis.database", Integer.class, 0);
            String auth = password == null ? "" : (user == null ? "" : encode(user)) + ":" + encode(password) + "@";
            String h = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
            return b.url((ssl ? "rediss://" : "redis://") + auth + h + ":" + port + "/" + database).build();
        }
        if (user != null || password != null) {
            b.credentials(user, password);
        }
        Duration timeout = env.getProperty("spring.data.redis.timeout", Duration.class);
        if (timeout != null && timeout.compareTo(Duration.ofSeconds(1)) < 0 && !timeout.isZero()) {
            b.commandTimeout(timeout);
        }
        return b.ssl(ssl).build();
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static List<String> nodes(List<String> nodes, String property) {
        if (nodes.isEmpty()) {
            throw new InvalidRateLimitConfigurationException(property + " is empty. List the sentinels as host:port, "
                    + "e.g. 'sentinel-1:26379'.");
        }
        return nodes;
    }
}
