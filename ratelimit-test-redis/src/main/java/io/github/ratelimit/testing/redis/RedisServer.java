package io.github.ratelimit.testing.redis;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * One real {@code redis-server} process for tests, bound to {@code 127.0.0.1} on a free port.
 *
 * <p>Contract:
 * <ul>
 *   <li>{@link #start()} / {@link Builder#start()} return only once the server answers {@code PING}
 *       (bounded by the startup timeout, default 15 s); otherwise they throw a
 *       {@link RedisHarnessException} carrying the tail of the server's log, and leave no process or
 *       temp directory behind.</li>
 *   <li>The port is chosen by the harness (never a fixed port). If another process wins the race for
 *       it, startup is retried on a new port (up to 5 times). {@link #port()} never changes afterwards,
 *       including across {@link #restart()}.</li>
 *   <li>Each server has its own temp working directory holding {@code redis.conf} and
 *       {@code redis.log} (stdout+stderr of every run, appended). {@link #close()} deletes it
 *       (set system property {@code redis.harness.keepTempDirs=true} to keep it).</li>
 *   <li>Defaults written to the config: {@code bind 127.0.0.1}, {@code daemonize no},
 *       {@code save ""}, {@code appendonly no} (the last two are not written for sentinels); lines
 *       given through {@link Builder#config(String...)} come after them and win.</li>
 *   <li>A JVM shutdown hook SIGKILLs every server this JVM started that is still running, and only
 *       those.</li>
 * </ul>
 * Methods are safe to call from any thread, but a server is meant to be driven by one test at a time.
 */
public final class RedisServer implements AutoCloseable {

    /** The only address servers bind to. */
    public static final String HOST = Ports.LOOPBACK;

    private static final Duration DEFAULT_STARTUP_TIMEOUT = Duration.ofSeconds(15);
    private static final int MAX_PORT_ATTEMPTS = 5;
    private static final int LOG_TAIL_LINES = 40;
    private static final long STOP_GRACE_MILLIS = 3_000;
    private static final long KILL_WAIT_MILLIS = 10_000;
    private static final Set<String> RESERVED_DIRECTIVES = Set.of("port", "bind", "daemonize", "dir", "logfile", "include");

    private final RedisBinaries.Binary binary;
    private final List<String> extraConfig;
    private final boolean sentinel;
    private final boolean clusterBus;
    private final String user;
    private final String password;
    private final Duration startupTimeout;
    private final Path directory;
    private final Path configFile;
    private final Path logFile;
    private final int firstPortAttempt;
    private final AtomicBoolean closed = new AtomicBoolean();

    private volatile int port;
    private volatile Process process;
    private volatile boolean paused;
    private long launchLogOffset;

    /** Starts a server with default settings. Same as {@code builder().start()}. */
    public static RedisServer start() {
        return builder().start();
    }

    /** @return a builder for a server with extra configuration */
    public static Builder builder() {
        return new Builder();
    }

    /** Configures and starts a {@link RedisServer}. Not thread-safe; use once. */
    public static final class Builder {

        private final List<String> config = new ArrayList<>();
        private RedisBinaries.Binary binary;
        private Duration startupTimeout = DEFAULT_STARTUP_TIMEOUT;
        private String user;
        private String userPassword;
        private String password;
        private boolean sentinel;
        private String name = "redis";
        private int firstPortAttempt;

        private Builder() {
        }

        /**
         * Adds raw {@code redis.conf} lines, e.g. {@code "maxmemory 1mb"},
         * {@code "maxmemory-policy noeviction"}, {@code "appendonly yes"}.
         *
         * @throws IllegalArgumentException for multi-line values or for directives the harness owns
         *     ({@code port, bind, daemonize, dir, logfile, include})
         */
        public Builder config(String... lines) {
            for (String line : lines) {
                Objects.requireNonNull(line, "config line");
                if (line.contains("\n") || line.contains("\r")) {
                    throw new IllegalArgumentException("One directive per line: " + line);
                }
                String directive = line.strip().split("\\s+", 2)[0].toLowerCase(Locale.ROOT);
                if (RESERVED_DIRECTIVES.contains(directive)) {
                    throw new IllegalArgumentException("'" + directive + "' is managed by the harness: " + line);
                }
                config.add(line.strip());
            }
            return this;
        }

        /**
         * Sets {@code requirepass}: the default user then needs this password. The harness's own
         * connections authenticate with it (unless {@link #user} is set).
         */
        public Builder password(String password) {
            this.password = requireToken(password, "password");
            return this;
        }

        /**
         * Adds an ACL user with full access ({@code user NAME on >PASSWORD ~* &* +@all}); the harness's
         * own connections authenticate as this user.
         */
        public Builder user(String username, String password) {
            this.user = requireToken(username, "username");
            this.userPassword = requireToken(password, "password");
            return this;
        }

        /** Runs this binary instead of {@link RedisBinaries#server()}. */
        public Builder binary(RedisBinaries.Binary binary) {
            this.binary = Objects.requireNonNull(binary, "binary");
            return this;
        }

        /** Bound for the server to answer PING after each (re)start; default 15 s. */
        public Builder startupTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout must be positive");
            }
            this.startupTimeout = timeout;
            return this;
        }

        /** Runs {@code redis-server --sentinel} (used by {@link RedisSentinelGroup}). */
        Builder sentinel() {
            this.sentinel = true;
            return this;
        }

        /** Test seam: the first start attempt uses this port instead of a probed one. */
        Builder firstPortAttempt(int port) {
            this.firstPortAttempt = port;
            return this;
        }

        /** Prefix of the temp directory, for readable diagnostics. */
        Builder name(String name) {
            this.name = name;
            return this;
        }

        /**
         * Starts the server and waits until it answers PING.
         *
         * @throws RedisHarnessException if it does not come up in time (no process or temp dir is left behind)
         */
        public RedisServer start() {
            RedisServer server = new RedisServer(this);
            try {
                server.startOnFreePort();
                return server;
            } catch (RuntimeException | Error e) {
                try {
                    server.close();
                } catch (RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw e;
            }
        }

        private static String requireToken(String value, String what) {
            Objects.requireNonNull(value, what);
            if (value.isEmpty() || value.chars().anyMatch(c -> Character.isWhitespace(c) || c == '"' || c == '\'')) {
                throw new IllegalArgumentException(what + " must be non-empty without whitespace or quotes");
            }
            return value;
        }
    }

    private RedisServer(Builder builder) {
        this.binary = builder.binary != null ? builder.binary : RedisBinaries.server();
        this.sentinel = builder.sentinel;
        this.startupTimeout = builder.startupTimeout;
        List<String> lines = new ArrayList<>(builder.config);
        if (builder.password != null) {
            lines.add("requirepass " + builder.password);
        }
        if (builder.user != null) {
            lines.add("user " + builder.user + " on >" + builder.userPassword + " ~* &* +@all");
        }
        this.extraConfig = List.copyOf(lines);
        this.clusterBus = extraConfig.stream().anyMatch(l -> l.toLowerCase(Locale.ROOT).matches("cluster-enabled\\s+yes"));
        this.firstPortAttempt = builder.firstPortAttempt;
        this.user = builder.user;
        this.password = builder.user != null ? builder.userPassword : builder.password;
        try {
            this.directory = Files.createTempDirectory("redis-harness-" + builder.name + "-");
        } catch (IOException e) {
            throw new RedisHarnessException("Cannot create a temp directory for redis-server", e);
        }
        Cleanup.registerDirectory(directory);
        this.configFile = directory.resolve(sentinel ? "sentinel.conf" : "redis.conf");
        this.logFile = directory.resolve("redis.log");
    }

    /** @return {@value #HOST} */
    public String host() {
        return HOST;
    }

    /** @return the TCP port; fixed for the life of this server, restarts included */
    public int port() {
        return port;
    }

    /** @return {@code host():port()} as a Jedis address */
    public HostAndPort hostAndPort() {
        return new HostAndPort(HOST, port);
    }

    /** @return {@code redis://127.0.0.1:PORT} (no credentials, even if a password is configured) */
    public URI uri() {
        return URI.create("redis://" + HOST + ":" + port);
    }

    /** @return the binary this server runs */
    public RedisBinaries.Binary binary() {
        return binary;
    }

    /** @return the file receiving stdout and stderr of every run of this server (deleted by {@link #close()}) */
    public Path logFile() {
        return logFile;
    }

    /** @return the OS process id of the current run */
    public long pid() {
        Process current = process;
        if (current == null) {
            throw new IllegalStateException("Not started: " + this);
        }
        return current.pid();
    }

    /** @return whether the process of the current run is alive (a paused server is alive) */
    public boolean isAlive() {
        Process current = process;
        return current != null && current.isAlive();
    }

    /** @return whether {@link #pause()} was called and not yet undone by {@link #resume()}, {@link #kill()} or a restart */
    public boolean isPaused() {
        return paused && isAlive();
    }

    /**
     * Kills the process at once with SIGKILL (a crash: no shutdown, no persistence) and waits until it
     * is gone. No effect if it is not running. The port and temp directory stay reserved for
     * {@link #restart()}.
     */
    public void kill() {
        ensureNotClosed();
        Process current = process;
        if (current == null) {
            return;
        }
        if (current.isAlive() && !Cleanup.killAndWait(current, KILL_WAIT_MILLIS)) {
            throw new RedisHarnessException("redis-server pid " + current.pid() + " survived SIGKILL for "
                    + KILL_WAIT_MILLIS + " ms: " + this);
        }
        Cleanup.unregister(current);
        paused = false;
    }

    /**
     * Freezes the process with SIGSTOP: connections stay open and new ones are accepted by the
     * kernel, but no command is answered until {@link #resume()}. Returns once the OS reports the
     * process stopped (checked via {@code /proc} where available).
     *
     * @throws RedisHarnessException if the server is not running or cannot be signalled
     */
    public void pause() {
        ensureAlive("pause");
        signal("STOP");
        paused = true;
        awaitStopped(true);
    }

    /**
     * Undoes {@link #pause()} with SIGCONT. Harmless on a running server that is not paused.
     *
     * @throws RedisHarnessException if the server is not running
     */
    public void resume() {
        ensureAlive("resume");
        signal("CONT");
        paused = false;
        awaitStopped(false);
    }

    /**
     * Stops the server abruptly if it is running (SIGKILL, as {@link #kill()}), starts it again with
     * the same configuration, port and working directory, and waits until it answers PING.
     * Data survives only if the configuration persists it (by default it does not).
     *
     * @throws RedisHarnessException if it does not come back in time, e.g. because another process
     *     took the port meanwhile
     */
    public void restart() {
        ensureNotClosed();
        kill();
        try {
            launch();
            awaitReady();
        } catch (PortInUseException e) {
            stopQuietly();
            throw new RedisHarnessException("Cannot restart " + this + ": port " + port
                    + " was taken by another process meanwhile\n" + logTail(), e);
        } catch (RuntimeException e) {
            stopQuietly();
            throw e;
        }
    }

    /**
     * Stops the server (SIGTERM, then SIGKILL after 3 s, or SIGKILL at once when paused), waits for
     * the process to be gone and deletes the temp directory. Idempotent; a later call does nothing.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            stopProcess();
        } finally {
            if (port > 0) {
                Ports.release(port, clusterBus);
            }
            Cleanup.deleteDirectory(directory);
        }
    }

    @Override
    public String toString() {
        Process current = process;
        return (sentinel ? "RedisSentinel[" : "RedisServer[") + HOST + ":" + port
                + (current == null ? "" : " pid=" + current.pid() + (current.isAlive() ? "" : " (dead)"))
                + (paused ? " paused" : "") + " " + binary.version() + " dir=" + directory + "]";
    }

    // ------------------------------------------------------------------------------------------

    /**
     * Opens a connection for harness/admin use, authenticated as configured; the caller closes it.
     * Does not send CLIENT SETINFO (works on any server version).
     */
    Jedis admin(int timeoutMillis) {
        DefaultJedisClientConfig.Builder config = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(timeoutMillis)
                .socketTimeoutMillis(timeoutMillis)
                .clientSetInfoConfig(ClientSetInfoConfig.DISABLED);
        if (user != null) {
            config.user(user);
        }
        if (password != null) {
            config.password(password);
        }
        return new Jedis(HOST, port, config.build());
    }

    /** Last lines of the log file, headed by the server's description; never throws. */
    String logTail() {
        StringBuilder out = new StringBuilder("--- last lines of ").append(logFile).append(" (").append(this).append(") ---\n");
        try {
            List<String> lines = Files.exists(logFile) ? Files.readAllLines(logFile, StandardCharsets.UTF_8) : List.of();
            lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()).forEach(l -> out.append(l).append('\n'));
        } catch (IOException | RuntimeException e) {
            out.append("(unreadable: ").append(e).append(")\n");
        }
        return out.append("---").toString();
    }

    private void startOnFreePort() {
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
        throw new RedisHarnessException("redis-server could not bind a free port in " + MAX_PORT_ATTEMPTS
                + " attempts (other processes kept taking them)", lastConflict);
    }

    private void writeConfig() {
        List<String> lines = new ArrayList<>();
        lines.add("# generated by the Redis test harness");
        lines.add("bind " + HOST);
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
            Files.writeString(logFile, "=== [redis-harness] " + Instant.now() + " starting: " + String.join(" ", command) + "\n",
                    StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
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
            try (Jedis jedis = admin(500)) {
                if ("PONG".equalsIgnoreCase(jedis.ping())) {
                    return;
                }
            } catch (JedisDataException e) {
                String message = String.valueOf(e.getMessage());
                if (message.startsWith("WRONGPASS") || message.startsWith("NOAUTH") || message.contains("invalid password")) {
                    throw new RedisHarnessException("redis-server on port " + port + " rejected the harness's credentials: "
                            + message + "\n" + logTail(), e);
                }
                lastError = e; // e.g. LOADING: answers, but not ready yet
            } catch (JedisException e) {
                lastError = e;
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new RedisHarnessException("redis-server on port " + port + " did not answer PING within "
                        + startupTimeout.toMillis() + " ms (last error: " + lastError + ")\n" + logTail(), lastError);
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

    private void ensureNotClosed() {
        if (closed.get()) {
            throw new IllegalStateException("Closed: " + this);
        }
    }

    private void ensureAlive(String action) {
        ensureNotClosed();
        if (!isAlive()) {
            throw new RedisHarnessException("Cannot " + action + " " + this + ": process is not running");
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
        Waits.until(Duration.ofSeconds(2), "pid " + pid() + (stopped ? " to stop" : " to continue"),
                () -> isStoppedState(stat) == stopped, this::logTail);
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
