package io.github.ratelimit.testing.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;

class RedisServerTest {

    private static final JedisClientConfig SHORT_TIMEOUTS = DefaultJedisClientConfig.builder()
            .connectionTimeoutMillis(300)
            .socketTimeoutMillis(300)
            .build();

    @Test
    void startsOnAFreeLoopbackPortAndCloseRemovesEverything() {
        RedisServer server = RedisServer.start();
        int port = server.port();
        long pid = server.pid();
        Path dir = server.logFile().getParent();

        assertThat(server.host()).isEqualTo("127.0.0.1");
        assertThat(port).isPositive().isNotEqualTo(6379);
        assertThat(server.uri()).hasToString("redis://127.0.0.1:" + port);
        assertThat(server.isAlive()).isTrue();
        assertThat(dir).isDirectory();
        try (RedisClient client = RedisClient.create(server.uri())) {
            client.set("greeting", "hello");
            assertThat(client.get("greeting")).isEqualTo("hello");
        }

        server.close();

        assertThat(server.isAlive()).isFalse();
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                .isFalse();
        assertThat(dir).doesNotExist();
        assertThatThrownBy(() -> ping(port)).isInstanceOf(JedisConnectionException.class);
        server.close(); // idempotent
    }

    @Test
    void concurrentServersGetDistinctPortsAndDirectories() {
        try (RedisServer a = RedisServer.start();
                RedisServer b = RedisServer.start()) {
            assertThat(a.port()).isNotEqualTo(b.port());
            assertThat(a.logFile().getParent()).isNotEqualTo(b.logFile().getParent());
            assertThat(ping(a.port())).isEqualTo("PONG");
            assertThat(ping(b.port())).isEqualTo("PONG");
        }
    }

    @Test
    void portTakenByAnotherProcessIsRetriedOnAFreshPort() throws Exception {
        try (ServerSocket squatter = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"));
                RedisServer server = RedisServer.builder()
                        .firstPortAttempt(squatter.getLocalPort())
                        .start()) {
            assertThat(server.port()).isNotEqualTo(squatter.getLocalPort());
            assertThat(ping(server.port())).isEqualTo("PONG");
            assertThat(Files.readString(server.logFile())).contains("Address already in use");
        }
    }

    @Test
    void killThenRestartKeepsThePortAndAnswersAgain() {
        try (RedisServer server = RedisServer.start()) {
            int port = server.port();
            long firstPid = server.pid();

            server.kill();
            assertThat(server.isAlive()).isFalse();
            assertThatThrownBy(() -> ping(port)).isInstanceOf(JedisConnectionException.class);

            server.restart();
            assertThat(server.port()).isEqualTo(port);
            assertThat(server.pid()).isNotEqualTo(firstPid);
            assertThat(ping(port)).isEqualTo("PONG");

            server.restart(); // while running: crash + start again
            assertThat(server.port()).isEqualTo(port);
            assertThat(ping(port)).isEqualTo("PONG");
        }
    }

    @Test
    void pauseMakesCommandsTimeOutAndResumeRecovers() {
        try (RedisServer server = RedisServer.start()) {
            server.pause();
            assertThat(server.isPaused()).isTrue();
            assertThat(server.isAlive()).isTrue();

            long start = System.nanoTime();
            assertThatThrownBy(() -> ping(server.port()))
                    .isInstanceOf(JedisConnectionException.class)
                    .hasRootCauseInstanceOf(SocketTimeoutException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));

            server.resume();
            assertThat(server.isPaused()).isFalse();
            assertThat(ping(server.port())).isEqualTo("PONG");
        }
    }

    @Test
    void closeKillsAPausedServer() {
        RedisServer server = RedisServer.start();
        long pid = server.pid();
        server.pause();
        server.close();
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                .isFalse();
    }

    @Test
    void extraConfigLinesAreApplied() {
        try (RedisServer server = RedisServer.builder()
                        .config("maxmemory 1mb", "maxmemory-policy noeviction", "appendonly no", "save \"\"")
                        .start();
                Jedis jedis = new Jedis(
                        server.hostAndPort(), DefaultJedisClientConfig.builder().build())) {
            assertThat(jedis.configGet("maxmemory")).containsEntry("maxmemory", "1048576");
            assertThat(jedis.configGet("maxmemory-policy")).containsEntry("maxmemory-policy", "noeviction");
            assertThat(jedis.configGet("appendonly")).containsEntry("appendonly", "no");
            assertThat(jedis.configGet("save")).containsEntry("save", "");
            assertThat(jedis.configGet("bind")).containsEntry("bind", "127.0.0.1");

            String big = "x".repeat(600_000);
            assertThatThrownBy(() -> {
                        for (int i = 0; i < 5; i++) {
                            jedis.set("big" + i, big);
                        }
                    })
                    .isInstanceOf(JedisDataException.class)
                    .hasMessageContaining("OOM");
        }
    }

    @Test
    void passwordAndAclUserAreEnforced() {
        try (RedisServer server =
                RedisServer.builder().password("s3cret").user("app", "app-pw").start()) {
            assertThatThrownBy(() -> ping(server.port()))
                    .isInstanceOf(JedisDataException.class)
                    .hasMessageContaining("NOAUTH");
            try (Jedis asDefault = new Jedis(
                            server.hostAndPort(),
                            DefaultJedisClientConfig.builder()
                                    .password("s3cret")
                                    .build());
                    Jedis asApp = new Jedis(
                            server.hostAndPort(),
                            DefaultJedisClientConfig.builder()
                                    .user("app")
                                    .password("app-pw")
                                    .build())) {
                assertThat(asDefault.ping()).isEqualTo("PONG");
                asApp.set("k", "v");
                assertThat(asApp.get("k")).isEqualTo("v");
            }
        }
    }

    @Test
    void failedStartExplainsItselfAndLeavesNothingBehind() {
        long childrenBefore = redisChildren();

        assertThatThrownBy(() -> RedisServer.builder()
                        .config("maxmemory-policy no-such-policy")
                        .start())
                .isInstanceOf(RedisHarnessException.class)
                .hasMessageContaining("exited with code")
                .hasMessageContaining("no-such-policy");

        try {
            RedisServer.builder().config("maxmemory-policy no-such-policy").start();
        } catch (RedisHarnessException e) {
            Matcher logPath = Pattern.compile("last lines of (\\S+redis\\.log)").matcher(e.getMessage());
            assertThat(logPath.find())
                    .as("message names the log file: %s", e.getMessage())
                    .isTrue();
            assertThat(Path.of(logPath.group(1)).getParent()).doesNotExist();
        }
        assertThat(redisChildren()).isEqualTo(childrenBefore);
    }

    @Test
    void startupTimeoutIsBoundedReportedAndCleansUp(@TempDir Path tmp) throws Exception {
        // a "redis-server" that never listens: the harness must give up on time and kill it
        Path fake = tmp.resolve("fake-redis-server");
        Files.writeString(fake, "#!/bin/sh\necho fake redis starting\nexec sleep 60\n");
        Files.setPosixFilePermissions(fake, PosixFilePermissions.fromString("rwx------"));
        RedisBinaries.Binary never = new RedisBinaries.Binary(fake, "7.0.0", RedisBinaries.Origin.ENV);
        long childrenBefore = ProcessHandle.current().children().count();

        long start = System.nanoTime();
        assertThatThrownBy(() -> RedisServer.builder()
                        .binary(never)
                        .startupTimeout(Duration.ofMillis(700))
                        .start())
                .isInstanceOf(RedisHarnessException.class)
                .hasMessageContaining("did not answer PING within 700 ms")
                .hasMessageContaining("fake redis starting");

        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
        assertThat(ProcessHandle.current().children().count()).isEqualTo(childrenBefore);
    }

    @Test
    void directivesOwnedByTheHarnessAreRejected() {
        for (String line : List.of("port 6379", "bind 0.0.0.0", "daemonize yes", "dir /tmp", "logfile x.log")) {
            assertThatThrownBy(() -> RedisServer.builder().config(line)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void jvmShutdownHookKillsServersLeftRunning() throws Exception {
        String java = ProcessHandle.current()
                .info()
                .command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        Process child = new ProcessBuilder(
                        java, "-cp", System.getProperty("java.class.path"), ShutdownHookProbe.class.getName())
                .redirectErrorStream(true)
                .start();
        child.getOutputStream().close();
        assertThat(child.waitFor(60, TimeUnit.SECONDS)).as("probe JVM exits").isTrue();
        String output = new String(child.getInputStream().readAllBytes());
        Matcher ready = Pattern.compile("READY pid=(\\d+) dir=(\\S+)").matcher(output);
        assertThat(ready.find()).as("probe output: %s", output).isTrue();
        long pid = Long.parseLong(ready.group(1));
        Waits.until(
                Duration.ofSeconds(5),
                "orphaned redis-server " + pid + " to be gone",
                () -> !ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false),
                () -> output);
        assertThat(Path.of(ready.group(2))).doesNotExist();
    }

    private static String ping(int port) {
        try (Jedis jedis = new Jedis(RedisServer.HOST, port, SHORT_TIMEOUTS)) {
            return jedis.ping();
        }
    }

    private static long redisChildren() {
        return ProcessHandle.current()
                .children()
                .filter(p ->
                        p.info().command().map(c -> c.contains("redis-server")).orElse(false))
                .count();
    }
}
