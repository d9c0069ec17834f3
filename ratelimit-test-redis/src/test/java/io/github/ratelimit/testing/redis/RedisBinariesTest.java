package io.github.ratelimit.testing.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.RedisClient;

/**
 * Every test here runs and asserts on every machine: where this platform has no embedded binary, the tests of
 * the embedded path assert the clear error instead; the PATH test builds a PATH of its own.
 */
class RedisBinariesTest {

    private static boolean embeddedShipped() {
        return !RedisBinaries.embeddedResourceNames(System.getProperty("os.name"), System.getProperty("os.arch"))
                .isEmpty();
    }

    @Test
    void defaultBinaryIsRecentEnough() {
        RedisBinaries.Binary binary = RedisBinaries.server();
        assertThat(Files.isExecutable(binary.path())).isTrue();
        assertThat(binary.isAtLeast(6, 2)).as("%s", binary).isTrue();
    }

    @Test
    void forcingTheEmbeddedBinaryIgnoresPath() {
        Map<String, String> force = Map.of(RedisBinaries.FORCE_EMBEDDED_PROPERTY, "true");
        if (embeddedShipped()) {
            assertThat(RedisBinaries.resolve(System::getenv, force::get).origin())
                    .isEqualTo(RedisBinaries.Origin.EMBEDDED);
        } else {
            assertThatThrownBy(() -> RedisBinaries.resolve(System::getenv, force::get))
                    .isInstanceOf(RedisHarnessException.class)
                    .hasMessageContaining("No embedded redis-server");
        }
    }

    @Test
    void withoutRedisOnPathTheEmbeddedBinaryIsUsed() {
        Map<String, String> env = Map.of("PATH", "/nonexistent");
        if (embeddedShipped()) {
            assertThat(RedisBinaries.resolve(env::get, Map.<String, String>of()::get)
                            .origin())
                    .isEqualTo(RedisBinaries.Origin.EMBEDDED);
        } else {
            assertThatThrownBy(() -> RedisBinaries.resolve(env::get, Map.<String, String>of()::get))
                    .isInstanceOf(RedisHarnessException.class)
                    .hasMessageContaining("install redis-server");
        }
    }

    @Test
    void redisServerOnPathIsPreferred(@TempDir Path bin) throws Exception {
        // A PATH of our own holding a redis-server: a link to whichever binary this machine has (PATH or embedded).
        Files.createSymbolicLink(
                bin.resolve("redis-server"), RedisBinaries.server().path());
        RedisBinaries.Binary binary =
                RedisBinaries.resolve(Map.of("PATH", bin.toString())::get, Map.<String, String>of()::get);
        assertThat(binary.origin()).isEqualTo(RedisBinaries.Origin.PATH);
        assertThat(binary.path()).isEqualTo(bin.resolve("redis-server"));
    }

    @Test
    void environmentVariableWins() {
        String explicit = RedisBinaries.server().path().toString();
        RedisBinaries.Binary binary = RedisBinaries.resolve(
                Map.of(RedisBinaries.SERVER_BIN_ENV, explicit, "PATH", "/nonexistent")::get,
                Map.<String, String>of()::get);
        assertThat(binary.origin()).isEqualTo(RedisBinaries.Origin.ENV);
        assertThat(binary.path().toString()).isEqualTo(explicit);
    }

    @Test
    void embeddedBinaryRunsARealServer() {
        if (!embeddedShipped()) {
            assertThatThrownBy(RedisBinaries::embedded).isInstanceOf(RedisHarnessException.class);
            return;
        }
        RedisBinaries.Binary embedded = RedisBinaries.embedded();
        assertThat(embedded.isAtLeast(6, 2)).as("%s", embedded).isTrue();
        try (RedisServer server = RedisServer.builder()
                        .binary(embedded)
                        .config("maxmemory 2mb")
                        .start();
                Jedis admin = new Jedis(server.hostAndPort());
                RedisClient client = RedisClient.create(server.uri())) {
            assertThat(admin.info("server")).contains("redis_version:" + embedded.version());
            assertThat(admin.configGet("maxmemory")).containsEntry("maxmemory", "2097152");
            client.set("k", "v");
            assertThat(client.get("k")).isEqualTo("v");
        }
    }
}
