package io.github.ratelimit.samples.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.util.Map;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The same suite with the buckets in a real Redis, switched by two context-params. */
class ServletSampleRedisStoreTest extends ServletSampleContract {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @Override
    protected Map<String, String> storeParams() {
        return Map.of(
                "ratelimit.store",
                "redis",
                "ratelimit.redis.url",
                redis.uri(),
                "ratelimit.redis.key-prefix",
                uniquePrefix());
    }

    @org.junit.jupiter.api.Test
    void closesItsRedisClientAndThreadsWhenTheApplicationStops() throws Exception {
        assertThat(get("/hello").statusCode()).isEqualTo(200);
        assertThat(clockThreads()).isPositive();
        stopServer();
        org.awaitility.Awaitility.await("the store's threads end")
                .atMost(java.time.Duration.ofSeconds(5))
                .until(() -> clockThreads() == 0);
    }

    /** Jedis logs through SLF4J; the WAR's provider hands its records to java.util.logging, Tomcat's log. */
    @org.junit.jupiter.api.Test
    void jedisLogRecordsReachJavaUtilLogging() {
        java.util.List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.logging.Logger jedis = java.util.logging.Logger.getLogger("redis.clients.jedis");
        java.util.logging.Handler capture = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord record) {
                seen.add(record.getLoggerName() + " " + record.getMessage());
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        jedis.addHandler(capture);
        try {
            org.slf4j.LoggerFactory.getLogger("redis.clients.jedis.Connection").warn("probe through SLF4J");
        } finally {
            jedis.removeHandler(capture);
        }
        assertThat(seen).contains("redis.clients.jedis.Connection probe through SLF4J");
    }

    private static long clockThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().equals("ratelimit-redis-clock"))
                .count();
    }
}
