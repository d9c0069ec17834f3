package io.github.ratelimit.testing.redis;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

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
    private static final Set<String> RESERVED_DIRECTIVES =
            Set.of("port", "bind", "daemonize", "dir", "logfile", "include");

    private final String user;
    private final String password;
    private final RedisProcess process;
    private final AtomicBoolean closed = new AtomicBoolean();

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

        private Builder() {}

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
                server.process.start();
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
        List<String> lines = new ArrayList<>(builder.config);
        if (builder.password != null) {
            lines.add("requirepass " + builder.password);
        }
        if (builder.user != null) {
            lines.add("user " + builder.user + " on >" + builder.userPassword + " ~* &* +@all");
        }
        this.user = builder.user;
        this.password = builder.user != null ? builder.userPassword : builder.password;
        RedisBinaries.Binary binary = builder.binary != null ? builder.binary : RedisBinaries.server();
        this.process = new RedisProcess(
                binary,
                builder.sentinel,
                lines,
                builder.startupTimeout,
                builder.firstPortAttempt,
                builder.name,
                this::admin);
    }

    /** @return {@value #HOST} */
    public String host() {
        return HOST;
    }

    /** @return the TCP port; fixed for the life of this server, restarts included */
    public int port() {
        return process.port();
    }

    /** @return {@code host():port()} as a Jedis address */
    public HostAndPort hostAndPort() {
        return new HostAndPort(HOST, port());
    }

    /** @return {@code redis://127.0.0.1:PORT} (no credentials, even if a password is configured) */
    public URI uri() {
        return URI.create("redis://" + HOST + ":" + port());
    }

    /** @return the binary this server runs */
    public RedisBinaries.Binary binary() {
        return process.binary();
    }

    /** @return the file receiving stdout and stderr of every run of this server (deleted by {@link #close()}) */
    public Path logFile() {
        return process.logFile();
    }

    /** @return the OS process id of the current run */
    public long pid() {
        return process.pid();
    }

    /** @return whether the process of the current run is alive (a paused server is alive) */
    public boolean isAlive() {
        return process.isAlive();
    }

    /** @return whether {@link #pause()} was called and not yet undone by {@link #resume()}, {@link #kill()} or a restart */
    public boolean isPaused() {
        return process.isPaused();
    }

    /**
     * Kills the process at once with SIGKILL (a crash: no shutdown, no persistence) and waits until it
     * is gone. No effect if it is not running. The port and temp directory stay reserved for
     * {@link #restart()}.
     */
    public void kill() {
        ensureNotClosed();
        process.kill();
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
        process.pause();
    }

    /**
     * Undoes {@link #pause()} with SIGCONT. Harmless on a running server that is not paused.
     *
     * @throws RedisHarnessException if the server is not running
     */
    public void resume() {
        ensureAlive("resume");
        process.resume();
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
        process.relaunch();
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
        process.stopAndDelete();
    }

    @Override
    public String toString() {
        return process.toString();
    }

    /**
     * Calls of commands since the server started, from {@code INFO commandstats}, which counts the commands scripts
     * run too. Read on a connection of its own that sends nothing else.
     *
     * @param commands command names in lower case ({@code evalsha}, {@code get}); none for every command but the
     *        ones a connection and this read make ({@code info}, {@code auth}, {@code hello}, {@code client})
     * @return the calls, summed
     */
    public long commandCalls(String... commands) {
        Set<String> wanted = Set.of(commands);
        Set<String> handshake = Set.of("info", "auth", "hello", "client");
        String stats;
        try (Jedis jedis = admin(5_000)) {
            stats = jedis.info("commandstats");
        }
        long calls = 0;
        for (String line : stats.split("\r?\n")) {
            int colon = line.indexOf(':');
            if (!line.startsWith("cmdstat_") || colon < 0) {
                continue;
            }
            String name = line.substring("cmdstat_".length(), colon);
            if (wanted.isEmpty() ? !handshake.contains(name) : wanted.contains(name)) {
                int start = line.indexOf("calls=") + "calls=".length();
                calls += Long.parseLong(line.substring(start, line.indexOf(',', start)));
            }
        }
        return calls;
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
        return new Jedis(HOST, port(), config.build());
    }

    /** Last lines of the log file, headed by the server's description; never throws. */
    String logTail() {
        return process.logTail();
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
}
