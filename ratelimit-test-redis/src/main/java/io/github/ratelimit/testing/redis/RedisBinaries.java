package io.github.ratelimit.testing.redis;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Locates the {@code redis-server} executable the harness runs.
 *
 * <p>Resolution order of {@link #server()}:
 * <ol>
 *   <li>system property {@value #FORCE_EMBEDDED_PROPERTY}{@code =true}: the embedded binary, PATH is ignored;</li>
 *   <li>environment variable {@value #SERVER_BIN_ENV}: that file, used as-is (failing if it does not run);</li>
 *   <li>{@code redis-server} found on {@code PATH}, if it runs and is at least Redis {@value #MIN_VERSION};</li>
 *   <li>otherwise the embedded binary: the Redis build shipped as a resource inside the Maven artifact
 *       {@code com.github.codemonstur:embedded-redis} (1.4.x, Redis 6.2.x for Linux x86_64/arm64 and macOS),
 *       which must then be on the (test) class path. It is extracted once per JVM into a temporary
 *       directory that is deleted when the JVM exits.</li>
 * </ol>
 * The chosen binary is resolved once per JVM and announced on {@code System.err}, with its version.
 *
 * <p>Thread-safe.
 */
public final class RedisBinaries {

    /** Environment variable naming an explicit {@code redis-server} executable. */
    public static final String SERVER_BIN_ENV = "REDIS_SERVER_BIN";
    /** System property; {@code true} makes {@link #server()} ignore PATH and the env variable and use the embedded binary. */
    public static final String FORCE_EMBEDDED_PROPERTY = "redis.harness.forceEmbedded";
    /** Oldest Redis accepted from PATH (the harness relies on ACL syntax and commands of 6.2). */
    public static final String MIN_VERSION = "6.2.0";

    private static final Pattern VERSION = Pattern.compile("v=(\\d+\\.\\d+\\.\\d+)");

    /** Where a binary came from. */
    public enum Origin {
        /** The file named by {@value #SERVER_BIN_ENV}. */
        ENV,
        /** {@code redis-server} found on PATH. */
        PATH,
        /** Extracted from the embedded-redis Maven artifact. */
        EMBEDDED
    }

    /**
     * A runnable {@code redis-server}.
     *
     * @param path absolute path of the executable
     * @param version the version it reports, e.g. {@code 7.0.15}
     * @param origin where it was found
     */
    public record Binary(Path path, String version, Origin origin) {

        public Binary {
            Objects.requireNonNull(path, "path");
            Objects.requireNonNull(version, "version");
            Objects.requireNonNull(origin, "origin");
        }

        /** @return whether {@link #version()} is at least {@code major.minor} */
        public boolean isAtLeast(int major, int minor) {
            String[] parts = version.split("\\.");
            int actualMajor = Integer.parseInt(parts[0]);
            int actualMinor = parts.length > 1 ? Integer.parseInt(parts[1]) : 0;
            return actualMajor > major || (actualMajor == major && actualMinor >= minor);
        }

        @Override
        public String toString() {
            return "redis-server " + version + " (" + origin + ": " + path + ")";
        }
    }

    private static volatile Binary server;
    private static volatile Binary embedded;

    private RedisBinaries() {}

    /**
     * Returns the {@code redis-server} the harness uses by default, resolving it on first call
     * (see the class documentation for the order).
     *
     * @throws RedisHarnessException if no usable binary can be found or run
     */
    public static Binary server() {
        Binary result = server;
        if (result == null) {
            synchronized (RedisBinaries.class) {
                result = server;
                if (result == null) {
                    result = resolve(System::getenv, System.getProperties()::getProperty);
                    System.err.println("[redis-harness] using " + result);
                    server = result;
                }
            }
        }
        return result;
    }

    /**
     * Returns the binary embedded in the {@code com.github.codemonstur:embedded-redis} artifact,
     * extracting it on first call (once per JVM) into a temporary directory deleted at JVM exit.
     *
     * @throws RedisHarnessException if the artifact is not on the class path, ships no binary for this
     *     OS/architecture, or the binary does not run here (e.g. a missing shared library)
     */
    public static Binary embedded() {
        Binary result = embedded;
        if (result == null) {
            synchronized (RedisBinaries.class) {
                result = embedded;
                if (result == null) {
                    result = extractEmbedded();
                    embedded = result;
                }
            }
        }
        return result;
    }

    /** Resolution without caching, with injectable environment and properties (for tests). */
    static Binary resolve(Function<String, String> env, Function<String, String> properties) {
        if (Boolean.parseBoolean(properties.apply(FORCE_EMBEDDED_PROPERTY))) {
            return embedded();
        }
        String explicit = env.apply(SERVER_BIN_ENV);
        if (explicit != null && !explicit.isBlank()) {
            Path path = Path.of(explicit).toAbsolutePath();
            if (!Files.isExecutable(path)) {
                throw new RedisHarnessException(SERVER_BIN_ENV + "=" + explicit + " is not an executable file");
            }
            return new Binary(path, versionOf(path), Origin.ENV);
        }
        Optional<Path> onPath = findOnPath("redis-server", env.apply("PATH"));
        if (onPath.isPresent()) {
            try {
                Binary candidate = new Binary(onPath.get(), versionOf(onPath.get()), Origin.PATH);
                if (candidate.isAtLeast(6, 2)) {
                    return candidate;
                }
                System.err.println("[redis-harness] ignoring " + candidate + ": older than " + MIN_VERSION);
            } catch (RedisHarnessException e) {
                System.err.println("[redis-harness] ignoring " + onPath.get() + ": " + e.getMessage());
            }
        }
        return embedded();
    }

    static Optional<Path> findOnPath(String name, String pathVariable) {
        if (pathVariable == null) {
            return Optional.empty();
        }
        for (String dir : pathVariable.split(File.pathSeparator)) {
            if (dir.isBlank()) {
                continue;
            }
            Path candidate = Path.of(dir, name);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate.toAbsolutePath());
            }
        }
        return Optional.empty();
    }

    /** Resource names inside embedded-redis 1.4.x for this platform, best first. */
    static List<String> embeddedResourceNames(String osName, String osArch) {
        String os = osName.toLowerCase(Locale.ROOT);
        String arch = osArch.toLowerCase(Locale.ROOT);
        boolean x64 = arch.equals("amd64") || arch.equals("x86_64");
        boolean arm64 = arch.equals("aarch64") || arch.equals("arm64");
        List<String> names = new ArrayList<>();
        if (os.contains("linux")) {
            if (x64) {
                names.add("redis-server-6.2.6-v5-linux-amd64");
            } else if (arm64) {
                names.add("redis-server-6.2.7-linux-arm64");
            }
        } else if (os.contains("mac") || os.contains("darwin")) {
            if (x64) {
                names.add("redis-server-6.2.6-v5-darwin-amd64");
            } else if (arm64) {
                names.add("redis-server-6.2.6-v5-darwin-arm64");
            }
        }
        return names;
    }

    private static Binary extractEmbedded() {
        String osName = System.getProperty("os.name");
        String osArch = System.getProperty("os.arch");
        List<String> names = embeddedResourceNames(osName, osArch);
        if (names.isEmpty()) {
            throw new RedisHarnessException("No embedded redis-server for " + osName + "/" + osArch
                    + "; install redis-server (>= " + MIN_VERSION + ") on PATH or set " + SERVER_BIN_ENV);
        }
        ClassLoader loader = Optional.ofNullable(Thread.currentThread().getContextClassLoader())
                .orElse(RedisBinaries.class.getClassLoader());
        for (String name : names) {
            try (InputStream in = loader.getResourceAsStream(name)) {
                if (in == null) {
                    continue;
                }
                Path dir = Files.createTempDirectory("redis-harness-bin-");
                Cleanup.registerDirectory(dir);
                Path target = dir.resolve("redis-server");
                Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
                try {
                    Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwx------"));
                } catch (UnsupportedOperationException e) {
                    if (!target.toFile().setExecutable(true, true)) {
                        throw new RedisHarnessException("Cannot make " + target + " executable");
                    }
                }
                return new Binary(target, versionOf(target), Origin.EMBEDDED);
            } catch (IOException e) {
                throw new UncheckedIOException("Extracting embedded redis-server " + name, e);
            }
        }
        throw new RedisHarnessException("Resource " + names + " not on the class path: add the test dependency "
                + "com.github.codemonstur:embedded-redis:1.4.4, install redis-server (>= " + MIN_VERSION
                + ") on PATH, or set " + SERVER_BIN_ENV);
    }

    /** Runs {@code binary --version} (bounded: 10 s) and returns the version, e.g. {@code 7.0.15}. */
    static String versionOf(Path binary) {
        String output = run(List.of(binary.toString(), "--version"), 10);
        Matcher matcher = VERSION.matcher(output);
        if (!matcher.find()) {
            throw new RedisHarnessException(binary + " --version printed no version: " + output.strip());
        }
        return matcher.group(1);
    }

    /** Runs a short command, returning its combined output; fails on non-zero exit or timeout. */
    static String run(List<String> command, int timeoutSeconds) {
        Process process;
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new RedisHarnessException("Cannot run " + command + ": " + e.getMessage(), e);
        }
        try {
            process.getOutputStream().close();
            ByteArrayOutputStream buffer = new ByteArrayOutputStream();
            Thread reader = new Thread(
                    () -> {
                        try (InputStream in = process.getInputStream()) {
                            in.transferTo(buffer);
                        } catch (IOException ignored) {
                            // process gone
                        }
                    },
                    "redis-harness-output");
            reader.setDaemon(true);
            reader.start();
            if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                Cleanup.killAndWait(process, 2_000);
                throw new RedisHarnessException(command + " did not finish within " + timeoutSeconds + " s");
            }
            reader.join(2_000);
            String output = buffer.toString(StandardCharsets.UTF_8); // BAOS methods are synchronized
            if (process.exitValue() != 0) {
                throw new RedisHarnessException(
                        command + " exited with " + process.exitValue() + ": " + output.strip());
            }
            return output;
        } catch (IOException e) {
            throw new RedisHarnessException("Running " + command + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            Cleanup.killAndWait(process, 2_000);
            throw new RedisHarnessException("Interrupted while running " + command, e);
        }
    }
}
