package io.github.ratelimit.testing.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.util.Map;

import org.junit.jupiter.api.Test;

import redis.clients.jedis.Jedis;
import redis.clients.jedis.RedisClient;

class RedisBinariesTest {

    @Test
    void defaultBinaryIsRecentEnough() {
        RedisBinaries.Binary binary = RedisBinaries.server();
        assertThat(Files.isExecutable(binary.path())).isTrue();
        assertThat(binary.isAtLeast(6, 2)).as("%s", binary).isTrue();
    }

    @Test
    void forcingTheEmbeddedBinaryIgnoresPath() {
        assumeEmbeddedSupported();
        RedisBinaries.Binary binary = RedisBinaries.resolve(System::getenv,
                Map.of(RedisBinaries.FORCE_EMBEDDED_PROPERTY, "true")::get);
        assertThat(binary.origin()).isEqualTo(RedisBinaries.Origin.EMBEDDED);
    }

    @Test
    void withoutRedisOnPathTheEmbeddedBinaryIsUsed() {
        assumeEmbeddedSupported();
        RedisBinaries.Binary binary = RedisBinaries.resolve(Map.of("PATH", "/nonexistent")::get, Map.<String, String>of()::get);
        assertThat(binary.origin()).isEqualTo(RedisBinaries.Origin.EMBEDDED);
    }

    @Test
    void redisServerOnPathIsPreferred() {
        assumeTrue(RedisBinaries.findOnPath("redis-server", System.getenv("PATH")).isPresent(), "no redis-server on PATH");
        RedisBinaries.Binary binary = RedisBinaries.resolve(Map.of("PATH", System.getenv("PATH"))::get, Map.<String, String>of()::get);
        assertThat(binary.origin()).isEqualTo(RedisBinaries.Origin.PATH);
    }

    @Test
    void environmentVariableWins() {
        assumeEmbeddedSupported();
        String explicit = RedisBinaries.embedded().path().toString();
        RedisBinaries.Binary binary = RedisBinaries.resolve(
                Map.of(RedisBinaries.SERVER_BIN_ENV, explicit, "PATH", String.valueOf(System.getenv("PATH")))::get,
                Map.<String, String>of()::get);
        assertThat(binary.origin()).isEqualTo(RedisBinaries.Origin.ENV);
        assertThat(binary.path().toString()).isEqualTo(explicit);
    }

    @Test
    void embeddedBinaryRunsARealServer() {
        assumeEmbeddedSupported();
        RedisBinaries.Binary embedded = RedisBinaries.embedded();
        assertThat(embedded.isAtLeast(6, 2)).as("%s", embedded).isTrue();
        try (RedisServer server = RedisServer.builder().binary(embedded).config("maxmemory 2mb").start();
             Jedis admin = new Jedis(server.hostAndPort());
             RedisClient client = RedisClient.create(server.uri())) {
            assertThat(admin.info("server")).contains("redis_version:" + embedded.version());
            assertThat(admin.configGet("maxmemory")).containsEntry("maxmemory", "2097152");
            client.set("k", "v");
            assertThat(client.get("k")).isEqualTo("v");
        }
    }

    private static void assumeEmbeddedSupported() {
        assumeTrue(!RedisBinaries.embeddedResourceNames(System.getProperty("os.name"), System.getProperty("os.arch")).isEmpty(),
                "embedded-redis ships no binary for this platform");
    }
}
