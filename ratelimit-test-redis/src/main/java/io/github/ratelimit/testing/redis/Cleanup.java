package io.github.ratelimit.testing.redis;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * JVM-wide bookkeeping of what this harness created: the redis-server processes it started and the
 * temporary directories it made. One shutdown hook kills every registered process that is still
 * running (processes started by anybody else are never registered, so never touched) and then
 * deletes every registered directory.
 */
final class Cleanup {

    /** System property: when {@code true}, temp directories (logs, configs) are kept for debugging. */
    static final String KEEP_DIRS_PROPERTY = "redis.harness.keepTempDirs";

    private static final Set<Process> PROCESSES = ConcurrentHashMap.newKeySet();
    private static final Set<Path> DIRECTORIES = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(Cleanup::onJvmExit, "redis-harness-cleanup"));
    }

    private Cleanup() {}

    static void register(Process process) {
        PROCESSES.add(process);
    }

    static void unregister(Process process) {
        PROCESSES.remove(process);
    }

    static void registerDirectory(Path directory) {
        DIRECTORIES.add(directory);
    }

    /** Deletes {@code directory} now (unless kept by {@link #KEEP_DIRS_PROPERTY}) and forgets it. */
    static void deleteDirectory(Path directory) {
        DIRECTORIES.remove(directory);
        if (!Boolean.getBoolean(KEEP_DIRS_PROPERTY)) {
            deleteRecursively(directory);
        }
    }

    /** Kills {@code process} with SIGKILL and waits (bounded) for it to be gone. */
    static boolean killAndWait(Process process, long timeoutMillis) {
        process.destroyForcibly();
        try {
            return process.waitFor(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return !process.isAlive();
        }
    }

    /**
     * Closes every server in order, even if some fail; the first failure is thrown at the end
     * (or, when {@code primary} is given, all failures are added to it as suppressed instead).
     */
    static void closeAll(List<RedisServer> servers, Throwable primary) {
        RuntimeException failure = null;
        for (RedisServer server : servers) {
            try {
                server.close();
            } catch (RuntimeException e) {
                if (primary != null) {
                    primary.addSuppressed(e);
                } else if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static void onJvmExit() {
        List<Process> running = List.copyOf(PROCESSES);
        running.forEach(Process::destroyForcibly);
        for (Process process : running) {
            killAndWait(process, 2_000);
        }
        if (!Boolean.getBoolean(KEEP_DIRS_PROPERTY)) {
            List.copyOf(DIRECTORIES).forEach(Cleanup::deleteRecursively);
        }
    }

    static void deleteRecursively(Path root) {
        if (root == null || !Files.exists(root)) {
            return;
        }
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
                    Files.deleteIfExists(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException ignored) {
            // best effort: a leftover temp dir must never fail a test run
        }
    }
}
