package io.github.ratelimit.spring.boot.autoconfigure;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/** Whether Redis can be used: Jedis on the class path, and {@code spring.data.redis.*} naming a server. */
final class JedisPresence {

    private JedisPresence() {
    }

    static boolean springDataRedisConfigured(Environment env) {
        return env.containsProperty("spring.data.redis.host") || env.containsProperty("spring.data.redis.url")
                || env.containsProperty("spring.data.redis.port")
                || env.containsProperty("spring.data.redis.sentinel.master")
                || env.containsProperty("spring.data.redis.cluster.nodes")
                || env.containsProperty("spring.data.redis.cluster.nodes[0]");
    }

    /**
     * @param classLoader the application's class loader
     * @throws InvalidRateLimitConfigurationException when Jedis is missing
     */
    static void require(ClassLoader classLoader) {
        if (!ClassUtils.isPresent("redis.clients.jedis.UnifiedJedis", classLoader)) {
            throw new InvalidRateLimitConfigurationException("ratelimit.store", null, "the Redis store needs Jedis, "
                    + "which is not on the class path", "Add the dependency redis.clients:jedis (7.x), or set "
                    + "ratelimit.store=local.");
        }
    }
}
