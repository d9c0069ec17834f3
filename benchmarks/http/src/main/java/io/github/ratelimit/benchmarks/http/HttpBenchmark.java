package io.github.ratelimit.benchmarks.http;

import io.github.ratelimit.testing.redis.RedisServer;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * The HTTP benchmark: starts the application under test three times (local store; Redis; Redis down, so the
 * circuit breaker is open and the default fail-open policy decides), drives a bare endpoint, a hand-written one (one
 * {@code EVALSHA} through a {@code JedisPool}, no library code: the physical limit of a round trip per request), an
 * annotated one and one under a URL rule with closed-loop load at several connection counts, interleaved over rounds,
 * and prints a Markdown report (medians over rounds, the goals as ratios within the run) and writes an SVG chart.
 *
 * <pre>
 * ./mvnw -q -B -pl benchmarks/http -am package -DskipTests &amp;&amp; java -jar benchmarks/http/target/http-benchmark.jar
 * </pre>
 *
 * Options: {@code --seconds N} (5), {@code --warmup N} (2), {@code --rounds N} (3), {@code --connections LIST}
 * (1,4,16), {@code --goal-connections N} (the largest), {@code --generator auto|wrk|java} (auto: wrk when on the
 * PATH), {@code --chart FILE} (http-benchmark.svg), {@code --out FILE}, {@code --stack servlet|webflux} (servlet:
 * Spring MVC on Tomcat; webflux: the same application as Spring WebFlux on Reactor Netty).
 */
public final class HttpBenchmark {

    /** The endpoints, in report order: {@code hand} is the hand-written Jedis call ({@link HandWrittenEndpoint}). */
    static final List<String> ENDPOINTS = List.of("bare", "hand", "annotated", "url");

    /** The connection counts the Redis goals are stated at, and the ratio each asks of the hand-written. */
    private static final Map<Integer, Double> HAND_GOALS = Map.of(2, 0.95, 8, 0.95, 64, 1.2);

    /** @return the endpoints measured on an application: with Redis down, a hand-written call has nothing to say */
    static List<String> endpoints(String app) {
        return app.equals("redis-down") ? List.of("bare", "annotated", "url") : ENDPOINTS;
    }

    private record App(String name, String label, Process process, int port) {}

    private record Key(String app, String endpoint, int connections) {}

    private HttpBenchmark() {}

    /**
     * @param args options, or {@code app ...} to run the application under test itself
     * @throws Exception when the benchmark cannot run
     */
    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("app")) {
            BenchApplication.main(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        if (args.length > 1 && args[0].equals("limiter-share")) {
            LimiterShare.main(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        if (args.length > 0 && args[0].equals("rejected-keys")) {
            RejectedKeysBenchmark.main(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        Map<String, String> options = options(args);
        int seconds = Integer.parseInt(options.getOrDefault("seconds", "5"));
        int warmup = Integer.parseInt(options.getOrDefault("warmup", "2"));
        int rounds = Integer.parseInt(options.getOrDefault("rounds", "3"));
        int[] connections = Arrays.stream(
                        options.getOrDefault("connections", "1,4,16").split(","))
                .mapToInt(s -> Integer.parseInt(s.trim()))
                .toArray();
        int goalConnections = Integer.parseInt(options.getOrDefault(
                "goal-connections",
                String.valueOf(Arrays.stream(connections).max().orElseThrow())));
        Load.Generator generator = generator(options.getOrDefault("generator", "auto"));
        Path chart = Path.of(options.getOrDefault("chart", "http-benchmark.svg"));
        String stack = options.getOrDefault("stack", "servlet");
        if (!stack.equals("servlet") && !stack.equals("webflux")) {
            throw new IllegalArgumentException("--stack must be servlet or webflux, not " + stack);
        }
        // The same controllers serve either way: WebFlux runs them on Netty's event loops.
        List<String> web = stack.equals("webflux") ? List.of("--spring.main.web-application-type=reactive") : List.of();
        String on = stack.equals("webflux") ? ", WebFlux" : "";
        String jar = System.getProperty("java.class.path");
        if (!jar.endsWith(".jar") || jar.contains(File.pathSeparator)) {
            throw new IllegalStateException("run it as java -jar benchmarks/http/target/http-benchmark.jar");
        }

        List<App> apps = new ArrayList<>();
        Map<Key, List<Load>> results = new LinkedHashMap<>();
        try (RedisServer redis = RedisServer.start()) {
            int deadPort = freePort(); // nothing listens there: connections are refused at once
            apps.add(start(jar, "local", "local store" + on, web));
            apps.add(start(jar, "redis", "Redis (loopback)" + on, concat(web, "--ratelimit.redis.url=" + redis.uri())));
            apps.add(start(
                    jar,
                    "redis-down",
                    "Redis down, breaker open" + on,
                    concat(web, "--ratelimit.redis.url=redis://127.0.0.1:" + deadPort)));
            for (App app : apps) {
                for (String endpoint :
                        endpoints(app.name)) { // JIT, connections, scripts; the breaker opens on redis-down
                    generator.run("127.0.0.1", app.port, "/" + endpoint, 4, Math.max(warmup, 3));
                }
            }
            for (int round = 1; round <= rounds; round++) {
                for (int c : connections) {
                    for (App app : apps) {
                        for (String endpoint : endpoints(app.name)) {
                            if (warmup > 0) {
                                generator.run("127.0.0.1", app.port, "/" + endpoint, c, warmup);
                            }
                            Load load = generator.run("127.0.0.1", app.port, "/" + endpoint, c, seconds);
                            results.computeIfAbsent(new Key(app.name, endpoint, c), k -> new ArrayList<>())
                                    .add(load);
                            System.err.printf(
                                    Locale.ROOT,
                                    "round %d, %d connections, %s %s: %.0f/s, p99 %.0f us%s%n",
                                    round,
                                    c,
                                    app.name,
                                    endpoint,
                                    load.requestsPerSecond(),
                                    load.p99Micros(),
                                    load.failed() > 0 ? ", " + load.failed() + " FAILED" : "");
                        }
                    }
                }
            }
        } finally {
            for (App app : apps) {
                app.process.destroy();
                if (!app.process.waitFor(10, TimeUnit.SECONDS)) {
                    app.process.destroyForcibly();
                }
            }
        }

        String report =
                report(apps, results, connections, goalConnections, seconds, warmup, rounds, generator, chart, stack);
        System.out.println(report);
        if (options.containsKey("out")) {
            Files.writeString(Path.of(options.get("out")), report);
        }
        Files.writeString(
                chart,
                Chart.svg(
                        apps.stream().map(App::name).toList(),
                        apps.stream().map(App::label).toList(),
                        ENDPOINTS,
                        connections,
                        (app, endpoint, c) -> {
                            List<Load> loads = results.get(new Key(app, endpoint, c));
                            return loads == null ? Double.NaN : median(loads, Load::requestsPerSecond);
                        }));
    }

    private static Load.Generator generator(String choice) {
        WrkGenerator wrk = WrkGenerator.find();
        return switch (choice) {
            case "wrk" -> {
                if (wrk == null) {
                    throw new IllegalArgumentException("--generator wrk, but wrk is not on the PATH");
                }
                yield wrk;
            }
            case "java" -> new JavaGenerator();
            case "auto" -> wrk != null ? wrk : new JavaGenerator();
            default -> throw new IllegalArgumentException("--generator must be auto, wrk or java, not " + choice);
        };
    }

    private static List<String> concat(List<String> list, String element) {
        List<String> all = new ArrayList<>(list);
        all.add(element);
        return all;
    }

    private static App start(String jar, String name, String label, List<String> extra) throws Exception {
        int port = freePort();
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m",
                "-jar",
                jar,
                "app",
                "--server.port=" + port));
        command.addAll(extra);
        Path log = Files.createTempFile("http-benchmark-" + name, ".log");
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("the " + name + " application exited:\n" + Files.readString(log));
            }
            try {
                HttpURLConnection connection = (HttpURLConnection)
                        URI.create("http://127.0.0.1:" + port + "/bare").toURL().openConnection();
                connection.setConnectTimeout(500);
                connection.setReadTimeout(2_000);
                if (connection.getResponseCode() == 200) {
                    System.err.println("started " + name + " on port " + port + " (log " + log + ")");
                    return new App(name, label, process, port);
                }
            } catch (IOException notYet) {
                // still starting
            }
            Thread.sleep(250);
        }
        process.destroyForcibly();
        throw new IllegalStateException(
                "the " + name + " application did not answer within 90 s:\n" + Files.readString(log));
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    static double median(List<Load> loads, ToDoubleFunction<Load> value) {
        double[] v = loads.stream().mapToDouble(value).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static String report(
            List<App> apps,
            Map<Key, List<Load>> results,
            int[] connections,
            int goalConnections,
            int seconds,
            int warmup,
            int rounds,
            Load.Generator generator,
            Path chart,
            String stack) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        out.printf(Locale.ROOT, "### HTTP benchmark run (%s)%n%n", LocalDate.now());
        out.printf(
                Locale.ROOT,
                "Load: %s; %d s measured after %d s of warm-up per phase, %d rounds interleaved "
                        + "(every connection count, store and endpoint once per round); medians over rounds. Machine: %d "
                        + "cores, Java %s. Application: Spring Boot, %s, Actuator (metrics on), limits never reached.%n%n",
                generator.name(),
                seconds,
                warmup,
                rounds,
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"),
                stack.equals("webflux") ? "Spring WebFlux on Reactor Netty" : "Spring MVC on Tomcat");
        out.println("| store | endpoint | connections | requests/s | p50 | p99 | max | failed |");
        out.println("|---|---|---:|---:|---:|---:|---:|---:|");
        long failed = 0;
        for (App app : apps) {
            for (String endpoint : endpoints(app.name)) {
                for (int c : connections) {
                    List<Load> loads = results.get(new Key(app.name, endpoint, c));
                    long f = loads.stream().mapToLong(Load::failed).sum();
                    failed += f;
                    out.printf(
                            Locale.ROOT,
                            "| %s | /%s | %d | %,.0f | %s | %s | %s | %d |%n",
                            app.label,
                            endpoint,
                            c,
                            median(loads, Load::requestsPerSecond),
                            time(median(loads, Load::p50Micros)),
                            time(median(loads, Load::p99Micros)),
                            time(loads.stream()
                                    .mapToDouble(Load::maxMicros)
                                    .max()
                                    .orElse(Double.NaN)),
                            f);
                }
            }
        }
        out.println();
        out.printf(Locale.ROOT, "Goals, at %d connections (ratios of medians within this run):%n%n", goalConnections);
        out.println("| goal | ratio | target | met |");
        out.println("|---|---:|---:|---|");
        goal(out, results, "G2 local, annotated ÷ bare", "local", "annotated", "local", "bare", goalConnections, 0.95);
        goal(out, results, "G2 local, URL rule ÷ bare", "local", "url", "local", "bare", goalConnections, 0.95);
        goal(out, results, "G3 Redis, annotated ÷ bare", "redis", "annotated", "redis", "bare", goalConnections, 0.75);
        goal(out, results, "G3 Redis, URL rule ÷ bare", "redis", "url", "redis", "bare", goalConnections, 0.75);
        for (int c : connections) {
            Double target = HAND_GOALS.get(c);
            if (target != null) {
                goal(
                        out,
                        results,
                        "Redis, annotated ÷ hand-written Jedis, " + c + " connections",
                        "redis",
                        "annotated",
                        "redis",
                        "hand",
                        c,
                        target);
                goal(
                        out,
                        results,
                        "Redis, URL rule ÷ hand-written Jedis, " + c + " connections",
                        "redis",
                        "url",
                        "redis",
                        "hand",
                        c,
                        target);
            }
        }
        goal(
                out,
                results,
                "G8 Redis down, annotated ÷ local annotated",
                "redis-down",
                "annotated",
                "local",
                "annotated",
                goalConnections,
                0.9);
        goal(
                out,
                results,
                "G8 Redis down, URL rule ÷ local URL rule",
                "redis-down",
                "url",
                "local",
                "url",
                goalConnections,
                0.9);
        double slowest = 0;
        for (String endpoint : List.of("annotated", "url")) {
            for (int c : connections) {
                slowest = Math.max(
                        slowest,
                        results.get(new Key("redis-down", endpoint, c)).stream()
                                .mapToDouble(Load::maxMicros)
                                .max()
                                .orElse(0));
            }
        }
        out.printf(
                Locale.ROOT,
                "%nG8, slowest request with Redis down (any phase): %s (the command timeout is 50 ms).%n",
                time(slowest));
        out.printf(Locale.ROOT, "Failed requests (non-2xx or socket errors) in all measured phases: %d.%n", failed);
        out.printf(Locale.ROOT, "Chart: %s.%n", chart);
        return bytes.toString(StandardCharsets.UTF_8);
    }

    private static void goal(
            PrintStream out,
            Map<Key, List<Load>> results,
            String label,
            String app,
            String endpoint,
            String baseApp,
            String baseEndpoint,
            int c,
            double target) {
        double ratio = median(results.get(new Key(app, endpoint, c)), Load::requestsPerSecond)
                / median(results.get(new Key(baseApp, baseEndpoint, c)), Load::requestsPerSecond);
        out.printf(
                Locale.ROOT, "| %s | %.2f | ≥ %.2f | %s |%n", label, ratio, target, ratio >= target ? "yes" : "**no**");
    }

    private static String time(double micros) {
        if (Double.isNaN(micros)) {
            return "–";
        }
        return micros >= 1_000
                ? String.format(Locale.ROOT, "%.1f ms", micros / 1_000)
                : String.format(Locale.ROOT, "%.0f µs", micros);
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected --option value pairs, got " + String.join(" ", args));
            }
            options.put(args[i].substring(2), args[++i]);
        }
        return options;
    }
}
