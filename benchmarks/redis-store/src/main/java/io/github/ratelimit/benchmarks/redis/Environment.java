package io.github.ratelimit.benchmarks.redis;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Where and how the benchmark ran, for the report's header.
 *
 * @param command the command line that reproduces the run, from the working directory
 * @param workingDirectory where it ran
 * @param started when
 * @param java the JVM
 * @param machine OS, architecture and available processors
 * @param commit the git commit of the working directory, or a note that it is unknown
 */
record Environment(
        String command, String workingDirectory, Instant started, String java, String machine, String commit) {

    static Environment capture(List<String> args) {
        Path cwd = Path.of("").toAbsolutePath();
        return new Environment(
                command(cwd, args),
                cwd.toString(),
                Instant.now().truncatedTo(ChronoUnit.SECONDS),
                System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"),
                System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                        + System.getProperty("os.arch") + ", "
                        + Runtime.getRuntime().availableProcessors()
                        + " available processors",
                commit(cwd));
    }

    private static String command(Path cwd, List<String> args) {
        StringBuilder sb = new StringBuilder();
        try {
            Path code = Path.of(RedisStoreBenchmark.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
            if (code.toString().endsWith(".jar")) {
                Path shown = code.startsWith(cwd) ? cwd.relativize(code) : code;
                sb.append("java -jar ").append(shown);
            } else {
                sb.append("java -cp <class path> ").append(RedisStoreBenchmark.class.getName());
            }
        } catch (URISyntaxException | RuntimeException e) {
            sb.append("java ").append(RedisStoreBenchmark.class.getName());
        }
        for (String arg : args) {
            sb.append(' ').append(arg.matches("[A-Za-z0-9_./:=,@+-]+") ? arg : "'" + arg.replace("'", "'\\''") + "'");
        }
        return sb.toString();
    }

    private static String commit(Path cwd) {
        Git head = git(cwd, "rev-parse", "--short=12", "HEAD");
        if (head == null || head.exit != 0 || head.output.isBlank()) {
            return "unknown (not a git work tree)";
        }
        Git diff = git(cwd, "diff", "--quiet", "HEAD", "--");
        String state = diff == null ? "" : diff.exit == 0 ? "" : " with uncommitted changes";
        return head.output.strip() + state;
    }

    private record Git(int exit, String output) {}

    /** Runs a short git command (output of a few bytes, so it cannot fill the pipe); bounded to 5 s. */
    private static Git git(Path cwd, String... args) {
        List<String> command = new ArrayList<>(List.of("git", "-C", cwd.toString()));
        command.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(command)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            p.getOutputStream().close();
            if (!p.waitFor(5, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return null;
            }
            return new Git(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
