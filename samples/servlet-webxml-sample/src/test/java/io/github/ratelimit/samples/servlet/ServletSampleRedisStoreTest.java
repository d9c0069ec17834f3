package io.github.ratelimit.samples.servlet;

import io.github.ratelimit.testing.redis.RedisServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The same suite with the buckets in a real Redis, switched by two context-params. */
class ServletSampleRedisStoreTest extends ServletSampleContract {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @Override
    protected Map<String, String> storeParams() {
        return Map.of("ratelimit.store", "redis", "ratelimit.redis.url", redis.uri(),
                "ratelimit.redis.key-prefix", uniquePrefix());
    }

    @org.junit.jupiter.api.Test
    void closesItsRedisClientAndThreadsWhenTheApplicationStops() throws Exception {
        assertThat(get("/hello").statusCode()).isEqualTo(200);
        assertThat(clockThreads()).isPositive();
        stopServer();
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(5).toNanos();
        while (clockThreads() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(clockThreads()).isZero();
    }

    private static long clockThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().equals("ratelimit-redis-clock")).count();
    }
}
