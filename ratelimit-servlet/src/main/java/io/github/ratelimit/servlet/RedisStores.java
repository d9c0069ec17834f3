package io.github.ratelimit.servlet;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.JedisBucketStore;

import java.time.Duration;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * Builds the Redis store from {@code ratelimit.redis.*}. A class of its own, loaded only when the store is
 * {@code redis}, so a web application without Jedis never links against it.
 */
final class RedisStores {

    private RedisStores() {
    }

    static BucketStore create(Function<String, String> get, Function<String, List<String>> list,
                              BiFunction<String, Boolean, Boolean> bool, BiFunction<String, Integer, Integer> integer,
                              BiFunction<String, Duration, Duration> duration, String source) {
        String url = get.apply("ratelimit.redis.url");
        String master = get.apply("ratelimit.redis.sentinel.master");
        List<String> cluster = list.apply("ratelimit.redis.cluster.nodes");
        int targets = (url != null ? 1 : 0) + (master != null ? 1 : 0) + (cluster.isEmpty() ? 0 : 1);
        if (targets != 1) {
            throw new InvalidRateLimitConfigurationException(source + ": ratelimit.store = redis needs exactly one of "
                    + "ratelimit.redis.url, ratelimit.redis.sentinel.master (with .nodes) or ratelimit.redis.cluster.nodes, "
                    + "but " + (targets == 0 ? "none is" : targets + " are") + " set.");
        }
        JedisBucketStore.Builder b = JedisBucketStore.builder();
        try {
            if (url != null) {
                b.url(url);
            } else if (master != null) {
                b.sentinel(master, list.apply("ratelimit.redis.sentinel.nodes"));
            } else {
                b.cluster(cluster);
            }
            String user = get.apply("ratelimit.redis.username");
            String password = get.apply("ratelimit.redis.password");
            if (user != null || password != null) {
                b.credentials(user, password);
            }
            b.ssl(bool.apply("ratelimit.redis.ssl", false));
            String prefix = get.apply("ratelimit.redis.key-prefix");
            if (prefix != null) {
                b.keyPrefix(prefix);
            }
            b.commandTimeout(duration.apply("ratelimit.redis.command-timeout", Duration.ofMillis(50)));
            b.connectTimeout(duration.apply("ratelimit.redis.connect-timeout", Duration.ofMillis(200)));
            b.poolSize(integer.apply("ratelimit.redis.pool-size", 16));
            return b.build();
        } catch (InvalidRateLimitConfigurationException e) {
            if (e.getMessage().startsWith(source)) {
                throw e;
            }
            throw new InvalidRateLimitConfigurationException(source + ": " + e.getMessage(), e);
        }
    }
}
