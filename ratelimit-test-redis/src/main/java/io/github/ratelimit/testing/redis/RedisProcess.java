package io.github.ratelimit.testing.redis;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * One {@code redis-server} process behind a {@link RedisServer}: its temp working directory, config
 * file and log, its launch on a free port, the wait until it answers {@code PING}, its signals
 * (SIGSTOP/SIGCONT/SIGKILL) and its stop.
 *
 * <p>Contract:
 * <ul>
 *   <li>{@link #start()} picks the port (retrying on another one when it was taken meanwhile) and
 *       returns once the server answers PING; the port never changes afterwards, including across
 *       {@link #relaunch()}.</li>
 *   <li>A failed start or relaunch leaves no process behind; {@link #stopAndDelete()} also releases
 *       the port and deletes the working directory.</li>
 *   <li>Every process it launches is registered with {@link Cleanup} while it may be running.</li>
 * </ul>
 * It knows nothing about credentials: readiness is checked over connections opened by the
 * {@code admin} function it is given. Whether the owning server is closed is the owner's business.
 */
final class RedisProcess {

    private static final int MAX_PORT_ATTEMPTS = 5;
    private static final int LOG_TAIL_LINES = 40;
    private static final long STOP_GRACE_MILLIS = 3_000;
    private static final long KILL_WAIT_MILLIS = 10_000;

    private final RedisBinaries.Binary binary;
    private final List<String> extraConfig;
    private final boolean sentinel;
    private final boolean clusterBus;
    private final Duration startupTimeout;
    private final int firstPortAttempt;
    private final IntFunction<Jedis> admin;
    private final Path directory;
    private final Path configFile;
    private final Path logFile;

    private volatile int port;
    private volatile Process process;
    private volatile boolean paused;
    private long launchLogOffset;

    /**
     * Creates the temp working directory; launches nothing yet.
     *
     * @param extraConfig {@code redis.conf} lines written after the harness's defaults
     * @param firstPortAttempt port for the first start attempt, or 0 to probe one
     * @param name prefix of the temp directory, for readable diagnostics
     * @param admin opens a connection to {@link #port()} that the harness may use, with the given
     *     connect/socket timeout in milliseconds; the caller closes it
     */
    RedisProcess(
            RedisBinaries.Binary binary,
            boolean sentinel,
            List<String> extraConfig,
            Duration startupTimeout,
            int firstPortAttempt,
            String name,
            IntFunction<Jedis> admin) {
        this.binary = binary;
        this.sentinel = sentinel;
        this.extraConfig = List.copyOf(extraConfig);
        this.clusterBus =
                extraConfig.stream().anyMatch(l -> l.toLowerCase(Locale.ROOT).matches("cluster-enabled\\s+yes"));
        this.startupTimeout = startupTimeout;
        this.firstPortAttempt = firstPortAttempt;
        this.admin = admin;
        try {
            this.directory = Files.createTempDirectory("redis-harness-" + name + "-");
        } catch (IOException e) {
            throw new RedisHarnessException("Cannot create a temp directory for redis-server", e);
        }
        Cleanup.registerDirectory(directory);
        this.configFile = directory.resolve(sentinel ? "sentinel.conf" : "redis.conf");
        this.logFile = directory.resolve("redis.log");
    }

    int port() {
        return port;
    }

    RedisBinaries.Binary binary() {
        return binary;
    }

    Path logFile() {
        return logFile;
    }

    long pid() {
        Process current = process;
        if (current == null) {
            throw new IllegalStateException("Not started: " + this);
        }
        return current.pid();
    }

    boolean isAlive() {
        Process current = process;
        return current != null && current.isAlive();
    }

    boolean isPaused() {
        return paused && isAlive();
    }

    /** Chooses a port, writes the config, launches the process and waits until it answers PING. */
    void start() {
        PortInUseException lastConflict = null;
        for (int attempt = 1; attempt <= MAX_PORT_ATTEMPTS; attempt++) {
            port = attempt == 1 && firstPortAttempt > 0 ? firstPortAttempt : Ports.reserve(clusterBus);
            writeConfig();
            launch();
            try {
                awaitReady();
                return;
            } catch (PortInUseException e) {
                lastConflict = e;
                stopQuietly();
                Ports.release(port, clusterBus);
                port = 0;
            }
        }
        throw new RedisHarnessException(
                "redis-server could not bind a free port in " + MAX_PORT_ATTEMPTS
                        + " attempts (other processes kept taking them)",
                lastConflict);
    }

    /** Launches the (stopped) process again on the same port and config and waits until it answers PING. */
    void relaunch() {
        try {
            launch();
            awaitReady();
        } catch (PortInUseException e) {
            stopQuietly();
            throw new RedisHarnessException(
                    "Cannot restart " + this + ": port " + port + " was taken by another process meanwhile\n"
                            + logTail(),
                    e);
        } catch (RuntimeException e) {
            stopQuietly();
            throw e;
        }
    }

    /** SIGKILLs the process if it runs and waits until it is gone; no effect if never launched. */
    void kill() {
        Process current = process;
        if (current == null) {
            return;
        }
        if (current.isAlive() && !Cleanup.killAndWait(current, KILL_WAIT_MILLIS)) {
            throw new RedisHarnessException(
                    "redis-server pid " + current.pid() + " survived SIGKILL for " + KILL_WAIT_MILLIS + " ms: " + this);
        }
        Cleanup.unregister(current);
        paused = false;
    }

    /** SIGSTOPs the running process and waits until the OS reports it stopped. */
    void pause() {
        signal("STOP");
        paused = true;
        awaitStopped(true);
    }

    /** SIGCONTs the running process and waits until the OS reports it running. */
    void resume() {
        signal("CONT");
        paused = false;
        awaitStopped(false);
    }

    /**
     * Stops the process (SIGTERM, then SIGKILL after 3 s, or SIGKILL at once when paused), then
     * releases the port and deletes the working directory, even if stopping failed.
     */
    void stopAndDelete() {
        try {
            stopProcess();
        } finally {
            if (port > 0) {
                Ports.release(port, clusterBus);
            }
            Cleanup.deleteDirectory(directory);
        }
    }

    /** Last lines of the log file, headed by the server's description; never throws. */
    String logTail() {
        StringBuilder out = new StringBuilder("--- last lines of ")
                .append(logFile)
                .append(" (")
                .append(this)
                .append(") ---\n");
        try {
            List<String> lines =
                    Files.exists(logFile) ? Files.readAllLines(logFile, StandardCharsets.UTF_8) : List.of();
            lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size())
                    .forEach(l -> out.append(l).append('\n'));
        } catch (IOException | RuntimeException e) {
            out.append("(unreadable: ").append(e).append(")\n");
        }
        return out.append("---").toString();
    }

    /** The description of the owning {@link RedisServer}. */
    @Override
    public String toString() {
        Process current = process;
        return (sentinel ? "RedisSentinel[" : "RedisServer[") + RedisServer.HOST + ":" + port
                + (current == null ? "" : " pid=" + current.pid() + (current.isAlive() ? "" : " (dead)"))
                + (paused ? " paused" : "") + " " + binary.version() + " dir=" + directory + "]";
    }

    // ------------------------------------------------------------------------------------------

    private void writeConfig() {
        List<String> lines = new ArrayList<>();
        lines.add("# generated by the Redis test harness");
        lines.add("bind " + RedisServer.HOST);
        lines.add("port " + port);
        lines.add("daemonize no");
        lines.add("dir \"" + directory.toAbsolutePath() + "\"");
        lines.add("logfile \"\"");
        if (!sentinel) {
            lines.add("save \"\"");
            lines.add("appendonly no");
        }
        lines.addAll(extraConfig);
        try {
            Files.write(configFile, lines, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new RedisHarnessException("Cannot write " + configFile, e);
        }
    }

    private void launch() {
        List<String> command = new ArrayList<>(List.of(binary.path().toString(), configFile.toString()));
        if (sentinel) {
            command.add("--sentinel");
        }
        try {
            Files.writeString(
                    logFile,
                    "=== [redis-harness] " + Instant.now() + " starting: " + String.join(" ", command) + "\n",
                    StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
            launchLogOffset = Files.size(logFile);
            Process started = new ProcessBuilder(command)
                    .directory(directory.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                    .start();
            Cleanup.register(started);
            started.getOutputStream().close();
            process = started;
            paused = false;
        } catch (IOException e) {
            throw new RedisHarnessException("Cannot launch " + command + ": " + e.getMessage(), e);
        }
    }

    private void awaitReady() {
        long deadline = System.nanoTime() + startupTimeout.toNanos();
        Exception lastError = null;
        while (true) {
            Process current = process;
            if (!current.isAlive()) {
                waitQuietly(current);
                String output = logSinceLaunch();
                if (output.contains("Address already in use")) {
                    throw new PortInUseException("Port " + port + " already in use");
                }
                Cleanup.unregister(current);
                throw new RedisHarnessException("redis-server exited with code " + current.exitValue()
                        + " during startup on port " + port + "\n" + logTail());
            }
            try (Jedis jedis = admin.apply(500)) {
                if ("PONG".equalsIgnoreCase(jedis.ping())) {
                    return;
                }
            } catch (JedisDataException e) {
                String message = String.valueOf(e.getMessage());
                if (message.startsWith("WRONGPASS")
                        || message.startsWith("NOAUTH")
                        || message.contains("invalid password")) {
                    throw new RedisHarnessException(
                            "redis-server on port " + port + " rejected the harness's credentials: " + message + "\n"
                                    + logTail(),
                            e);
                }
                lastError = e; // e.g. LOADING: answers, but not ready yet
            } catch (JedisException e) {
                lastError = e;
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new RedisHarnessException(
                        "redis-server on port " + port + " did not answer PING within " + startupTimeout.toMillis()
                                + " ms (last error: " + lastError + ")\n" + logTail(),
                        lastError);
            }
            Waits.sleep(50);
        }
    }

    private String logSinceLaunch() {
        try (RandomAccessFile file = new RandomAccessFile(logFile.toFile(), "r")) {
            long length = file.length();
            if (length <= launchLogOffset) {
                return "";
            }
            byte[] bytes = new byte[(int) Math.min(length - launchLogOffset, 1 << 20)];
            file.seek(launchLogOffset);
            file.readFully(bytes);
            return new String(bytes, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private void stopProcess() {
        Process current = process;
        if (current == null) {
            return;
        }
        if (current.isAlive()) {
            if (paused) {
                Cleanup.killAndWait(current, KILL_WAIT_MILLIS);
            } else {
                current.destroy();
                boolean exited;
                try {
                    exited = current.waitFor(STOP_GRACE_MILLIS, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    exited = false;
                }
                if (!exited) {
                    Cleanup.killAndWait(current, KILL_WAIT_MILLIS);
                }
            }
        }
        paused = false;
        if (current.isAlive()) {
            throw new RedisHarnessException("Could not stop redis-server pid " + current.pid() + ": " + this);
        }
        Cleanup.unregister(current);
    }

    private void stopQuietly() {
        Process current = process;
        if (current != null) {
            Cleanup.killAndWait(current, KILL_WAIT_MILLIS);
            if (!current.isAlive()) {
                Cleanup.unregister(current);
            }
        }
        paused = false;
    }

    private static void waitQuietly(Process process) {
        try {
            process.waitFor(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void signal(String signal) {
        long pid = pid();
        RedisBinaries.run(killCommand(signal, pid), 5);
    }

    /** {@code kill -SIG pid}: /bin/kill or /usr/bin/kill if present, else the POSIX shell's builtin. */
    static List<String> killCommand(String signal, long pid) {
        for (String candidate : List.of("/bin/kill", "/usr/bin/kill")) {
            if (Files.isExecutable(Path.of(candidate))) {
                return List.of(candidate, "-" + signal, Long.toString(pid));
            }
        }
        return List.of("/bin/sh", "-c", "kill -" + signal + " " + pid);
    }

    /** Waits (max 2 s) until /proc reports the process stopped (or not); no-op without /proc. */
    private void awaitStopped(boolean stopped) {
        Path stat = Path.of("/proc", Long.toString(pid()), "stat");
        if (!Files.exists(stat)) {
            return;
        }
        Waits.until(
                Duration.ofSeconds(2),
                "pid " + pid() + (stopped ? " to stop" : " to continue"),
                () -> isStoppedState(stat) == stopped,
                this::logTail);
    }

    private static boolean isStoppedState(Path stat) {
        try {
            String content = Files.readString(stat, StandardCharsets.UTF_8);
            char state = content.charAt(content.lastIndexOf(')') + 2);
            return state == 'T' || state == 't';
        } catch (IOException e) {
            return false;
        }
    }

    /** Startup failed because the port was taken: the caller retries on another port. */
    private static final class PortInUseException extends RedisHarnessException {
        private static final long serialVersionUID = 1L;

        PortInUseException(String message) {
            super(message);
        }
    }
}
