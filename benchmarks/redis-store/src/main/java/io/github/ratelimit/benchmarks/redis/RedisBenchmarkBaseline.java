package io.github.ratelimit.benchmarks.redis;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import redis.clients.jedis.Jedis;

/**
 * The G4 baseline: {@code redis-benchmark} running EVALSHA of a plain Lua token bucket ({@code token-bucket.lua},
 * HMGET / HSET / PEXPIRE) with {@code --threads} clients over {@code --keys} random keys, without pipelining. Its
 * requests/s are read from its output, and checked against the server's EVALSHA count: redis-benchmark counts an
 * error reply as a request too, so a run with failed EVALSHAs is reported as such.
 */
final class RedisBenchmarkBaseline {

    private static final Pattern REQUESTS_PER_SECOND = Pattern.compile("([0-9]+(?:\\.[0-9]+)?) requests per second");
    private static final long TOKENS_PER_SECOND = 1_000_000_000L;
    private static final long CAPACITY = 1_000_000_000L;

    /**
     * @param perSecond requests per second as redis-benchmark reports them
     * @param requests requests it was asked to make
     * @param evalshaCalls EVALSHA calls the server counted meanwhile
     * @param evalshaFailed those that failed
     * @param redisCpuMicros CPU time of the Redis server per request
     */
    record Result(double perSecond, long requests, long evalshaCalls, long evalshaFailed, double redisCpuMicros) {}

    private final Path binary;
    private final RedisTarget target;
    private final int clients;
    private final int keys;
    private String sha;

    private RedisBenchmarkBaseline(Path binary, RedisTarget target, int clients, int keys) {
        this.binary = binary;
        this.target = target;
        this.clients = clients;
        this.keys = keys;
    }

    /**
     * @return the baseline, or empty when {@code redis-benchmark} is not on the PATH
     */
    static Optional<RedisBenchmarkBaseline> find(RedisTarget target, int clients, int keys) {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (dir.isBlank()) {
                continue;
            }
            Path candidate = Path.of(dir, "redis-benchmark");
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(new RedisBenchmarkBaseline(candidate.toAbsolutePath(), target, clients, keys));
            }
        }
        return Optional.empty();
    }

    /** @return e.g. {@code /usr/bin/redis-benchmark (redis-benchmark 7.0.15)} */
    String description() {
        String version;
        try {
            version = run(List.of(binary.toString(), "--version"), 10).strip();
        } catch (RuntimeException e) {
            version = "version unknown: " + e.getMessage();
        }
        return binary + " (" + version + ")";
    }

    /**
     * Loads the script and checks that one EVALSHA of it allows a call.
     *
     * @throws IllegalStateException when the script does not answer as expected
     */
    void load() {
        String source = LuaSources.read("token-bucket.lua");
        Jedis admin = target.admin();
        sha = admin.scriptLoad(source);
        Object reply = admin.evalsha(
                sha, List.of("g4:check"), List.of(Long.toString(TOKENS_PER_SECOND), Long.toString(CAPACITY), "1"));
        if (!(reply instanceof List<?> list) || !Long.valueOf(1).equals(list.get(0))) {
            throw new IllegalStateException("the G4 token-bucket script answered " + reply + " instead of [1, n]");
        }
        admin.del("g4:check");
    }

    /**
     * Runs redis-benchmark once.
     *
     * @param requests how many EVALSHAs in total
     * @param keySpace part of every key, fresh per run
     * @param timeoutSeconds the longest the run may take
     */
    Result run(long requests, String keySpace, long timeoutSeconds) {
        List<String> command = new ArrayList<>(List.of(
                binary.toString(),
                "-h",
                target.hostAndPort().getHost(),
                "-p",
                Integer.toString(target.hostAndPort().getPort()),
                "-c",
                Integer.toString(clients),
                "-n",
                Long.toString(requests),
                "-r",
                Integer.toString(keys),
                "--dbnum",
                Integer.toString(target.database()),
                "-q"));
        if (target.password() != null) {
            if (target.user() != null) {
                command.addAll(List.of("--user", target.user()));
            }
            command.addAll(List.of("-a", target.password()));
        }
        command.addAll(List.of(
                "evalsha",
                sha,
                "1",
                "g4-" + keySpace + ":__rand_int__",
                Long.toString(TOKENS_PER_SECOND),
                Long.toString(CAPACITY),
                "1"));
        ServerCounters before = target.counters();
        String output = run(command, timeoutSeconds);
        ServerCounters.Delta delta = target.counters().since(before);
        Matcher m = REQUESTS_PER_SECOND.matcher(output);
        Double perSecond = null;
        while (m.find()) {
            perSecond = Double.parseDouble(m.group(1));
        }
        if (perSecond == null) {
            throw new IllegalStateException("redis-benchmark printed no requests per second: " + tail(output));
        }
        return new Result(
                perSecond,
                requests,
                delta.calls("evalsha"),
                delta.failed("evalsha"),
                delta.cpuNanos() / 1e3 / Math.max(1, requests));
    }

    /** Runs a command to completion within a time bound, returning its output (stdout and stderr). */
    private static String run(List<String> command, long timeoutSeconds) {
        Path log = null;
        Process process = null;
        try {
            log = Files.createTempFile("redis-benchmark-", ".log");
            process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            process.getOutputStream().close();
            if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                throw new IllegalStateException(command.get(0) + " did not finish within " + timeoutSeconds + " s");
            }
            String output = Files.readString(log, StandardCharsets.UTF_8);
            if (process.exitValue() != 0) {
                throw new IllegalStateException(
                        command.get(0) + " exited with " + process.exitValue() + ": " + tail(output));
            }
            return output;
        } catch (IOException e) {
            throw new UncheckedIOException("running " + command.get(0), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + command.get(0), e);
        } finally {
            if (process != null && process.isAlive()) {
                process.destroyForcibly();
            }
            if (log != null) {
                try {
                    Files.deleteIfExists(log);
                } catch (IOException ignored) {
                    // a temp file; the OS cleans it up eventually
                }
            }
        }
    }

    private static String tail(String output) {
        String s = output.strip();
        return s.length() <= 500 ? s : "..." + s.substring(s.length() - 500);
    }
}
