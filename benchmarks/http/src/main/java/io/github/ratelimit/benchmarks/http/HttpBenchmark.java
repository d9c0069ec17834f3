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
 * annotated one and one under a URL rule with closed-loop load at several connection counts, and prints a Markdown
 * report and writes an SVG chart. Each application runs as users run it, with Actuator and the Prometheus registry;
 * before measuring, the benchmark checks that {@code /actuator/prometheus} shows the limiter's meters and the
 * {@code ratelimit.decision} observation's timer, and stops if not.
 *
 * <p>Each phase (store, endpoint, connection count) first runs a checked warm-up ({@link Warmup}: rounds until one is
 * within 10 % of the one before, at most 6, else the phase is reported unsteady); then every phase is measured once
 * per round, rounds interleaved, so a subject and its baseline share each round. The report gives each phase's median
 * requests/s and spread over the rounds, and each ratio as the ratio of medians with the range of its per-round
 * ratios.
 *
 * <pre>
 * ./mvnw -q -B -pl benchmarks/http -am package -DskipTests &amp;&amp; java -jar benchmarks/http/target/http-benchmark.jar
 * </pre>
 *
 * Options: {@code --seconds N} (5: each measured run), {@code --warmup N} (2: each warm-up round, and the settling
 * run before each measured one), {@code --rounds N} (3, at least 3), {@code --connections LIST} (1,4,16),
 * {@code --goal-connections N} (the largest), {@code --generator auto|wrk|java} (auto: wrk when on the PATH),
 * {@code --chart FILE} (http-benchmark.svg), {@code --out FILE}, {@code --stack servlet|webflux} (servlet: Spring MVC
 * on Tomcat; webflux: the same application as Spring WebFlux on Reactor Netty), {@code --observations on|off} (on;
 * off also starts the local-store application with {@code management.observations.enable.ratelimit=false}, measured
 * in the same rounds, so the report gives the decision observation's cost).
 */
public final class HttpBenchmark {

    /** The endpoints, in report order: {@code hand} is the hand-written Jedis call ({@link HandWrittenEndpoint}). */
    static final List<String> ENDPOINTS = List.of("bare", "hand", "annotated", "url");

    /** The connection counts the Redis goals are stated at, and the ratio each asks of the hand-written. */
    private static final Map<Integer, Double> HAND_GOALS = Map.of(2, 0.95, 8, 0.95, 64, 1.2);

    /** The local-store application with decision observations off ({@code --observations off}). */
    private static final String UNOBSERVED = "local-unobserved";

    /** Turns the decision observation off, leaving the limiter's meters on. */
    private static final String OBSERVATIONS_OFF = "--management.observations.enable.ratelimit=false";

    /**
     * @return the endpoints measured on an application: with Redis down, a hand-written call has nothing to say, nor
     *     with observations off (it makes no decision to observe)
     */
    static List<String> endpoints(String app) {
        return app.equals("redis-down") || app.equals(UNOBSERVED) ? List.of("bare", "annotated", "url") : ENDPOINTS;
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
        if (rounds < 3) {
            throw new IllegalArgumentException("--rounds must be at least 3 for a median and a spread, not " + rounds);
        }
        if (warmup < 1) {
            throw new IllegalArgumentException("--warmup must be at least 1 s per warm-up round, not " + warmup);
        }
        String observations = options.getOrDefault("observations", "on");
        if (!observations.equals("on") && !observations.equals("off")) {
            throw new IllegalArgumentException("--observations must be on or off, not " + observations);
        }
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
        Map<Key, Warmup> warmups = new LinkedHashMap<>();
        try (RedisServer redis = RedisServer.start()) {
            int deadPort = freePort(); // nothing listens there: connections are refused at once
            apps.add(start(jar, "local", "local store" + on, web));
            if (observations.equals("off")) {
                apps.add(start(jar, UNOBSERVED, "local store, observation off" + on, concat(web, OBSERVATIONS_OFF)));
            }
            apps.add(start(jar, "redis", "Redis (loopback)" + on, concat(web, "--ratelimit.redis.url=" + redis.uri())));
            apps.add(start(
                    jar,
                    "redis-down",
                    "Redis down, breaker open" + on,
                    concat(web, "--ratelimit.redis.url=redis://127.0.0.1:" + deadPort)));
            // Every phase steady before any is measured: JIT, connections, scripts; the breaker opens on redis-down.
            for (int c : connections) {
                for (App app : apps) {
                    for (String endpoint : endpoints(app.name)) {
                        Warmup w = Warmup.run(
                                () -> generator
                                        .run("127.0.0.1", app.port, "/" + endpoint, c, warmup)
                                        .requestsPerSecond(),
                                Warmup.CAP,
                                Warmup.TOLERANCE);
                        warmups.put(new Key(app.name, endpoint, c), w);
                        System.err.printf(
                                Locale.ROOT,
                                "warm-up, %d connections, %s %s: %s/s%s%n",
                                c,
                                app.name,
                                endpoint,
                                w.requestsPerSecond().stream()
                                        .map(r -> String.format(Locale.ROOT, "%.0f", r))
                                        .toList(),
                                w.steady() ? "" : ", UNSTEADY after " + Warmup.CAP + " rounds");
                    }
                }
            }
            for (int round = 1; round <= rounds; round++) {
                for (int c : connections) {
                    for (App app : apps) {
                        for (String endpoint : endpoints(app.name)) {
                            // Settles the connections at this count after the phase before.
                            generator.run("127.0.0.1", app.port, "/" + endpoint, c, warmup);
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

        String report = report(
                apps, results, warmups, connections, goalConnections, seconds, warmup, rounds, generator, chart, stack);
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
                    checkObservedPath(name, port, !extra.contains(OBSERVATIONS_OFF), process, log);
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

    /**
     * Sends a few limited requests, then reads {@code /actuator/prometheus}; stops the application and throws unless
     * it answers 200 with the meters {@link ObservedPath} expects.
     */
    private static void checkObservedPath(String name, int port, boolean observed, Process process, Path log)
            throws IOException {
        for (int i = 0; i < 5; i++) {
            get(port, "/annotated");
            get(port, "/url");
        }
        HttpURLConnection connection = open(port, "/actuator/prometheus");
        int status = connection.getResponseCode();
        List<String> problems;
        if (status == 200) {
            try (var in = connection.getInputStream()) {
                problems = ObservedPath.problems(
                        new String(in.readAllBytes(), StandardCharsets.UTF_8), observed, name.startsWith("local"));
            }
        } else {
            problems = List.of("GET /actuator/prometheus answered " + status + ", not 200");
        }
        if (!problems.isEmpty()) {
            process.destroyForcibly();
            throw new IllegalStateException("the " + name + " application does not run the "
                    + (observed ? "observed" : "unobserved") + " path users run: " + String.join("; ", problems)
                    + " (log " + log + ")");
        }
        System.err.println("checked " + name + ": /actuator/prometheus answers 200 with " + ObservedPath.REQUESTS + ", "
                + ObservedPath.HTTP_REQUESTS + (observed ? "" : " and without " + ObservedPath.DECISIONS));
    }

    private static void get(int port, String path) throws IOException {
        HttpURLConnection connection = open(port, path);
        try (var in = connection.getResponseCode() < 400 ? connection.getInputStream() : connection.getErrorStream()) {
            if (in != null) {
                in.readAllBytes();
            }
        }
    }

    private static HttpURLConnection open(int port, String path) throws IOException {
        HttpURLConnection connection = (HttpURLConnection)
                URI.create("http://127.0.0.1:" + port + path).toURL().openConnection();
        connection.setConnectTimeout(2_000);
        connection.setReadTimeout(10_000);
        return connection;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    static double median(List<Load> loads, ToDoubleFunction<Load> value) {
        return Stats.median(values(loads, value));
    }

    private static double[] values(List<Load> loads, ToDoubleFunction<Load> value) {
        return loads.stream().mapToDouble(value).toArray();
    }

    private static String report(
            List<App> apps,
            Map<Key, List<Load>> results,
            Map<Key, Warmup> warmups,
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
                "Load: %s. Per phase (store, endpoint, connections) a checked warm-up: rounds of %d s until one is "
                        + "within %.0f %% of the one before (at most %d, else **unsteady**); then %d measured rounds "
                        + "interleaved (every connection count, store and endpoint once per round), each %d s after "
                        + "%d s of settling. Figures: the median over rounds and its spread, (max − min) ÷ median. "
                        + "Machine: %d cores, Java %s. Application: Spring Boot, %s, Actuator with the Prometheus "
                        + "registry (checked before measuring: /actuator/prometheus answers 200 with %s and, "
                        + "observations on, %s), limits never reached.%n%n",
                generator.name(),
                warmup,
                Warmup.TOLERANCE * 100,
                Warmup.CAP,
                rounds,
                seconds,
                warmup,
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"),
                stack.equals("webflux") ? "Spring WebFlux on Reactor Netty" : "Spring MVC on Tomcat",
                ObservedPath.REQUESTS,
                ObservedPath.DECISIONS);
        out.println(
                "| store | endpoint | connections | requests/s (median) | spread | warm-up rounds | p50 | p99 | max "
                        + "| failed |");
        out.println("|---|---|---:|---:|---:|---|---:|---:|---:|---:|");
        long failed = 0;
        List<String> unsteady = new ArrayList<>();
        double widest = 0;
        String widestPhase = "";
        for (App app : apps) {
            for (String endpoint : endpoints(app.name)) {
                for (int c : connections) {
                    Key key = new Key(app.name, endpoint, c);
                    List<Load> loads = results.get(key);
                    Warmup w = warmups.get(key);
                    long f = loads.stream().mapToLong(Load::failed).sum();
                    failed += f;
                    double spread = Stats.spread(values(loads, Load::requestsPerSecond));
                    String phase = String.format(Locale.ROOT, "%s /%s at %d connections", app.label, endpoint, c);
                    if (!w.steady()) {
                        unsteady.add(phase);
                    }
                    if (spread > widest) {
                        widest = spread;
                        widestPhase = phase;
                    }
                    out.printf(
                            Locale.ROOT,
                            "| %s | /%s | %d | %,.0f | %.1f %% | %s | %s | %s | %s | %d |%n",
                            app.label,
                            endpoint,
                            c,
                            median(loads, Load::requestsPerSecond),
                            spread * 100,
                            w.describe(),
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
        out.printf(
                Locale.ROOT,
                "Widest spread: %.1f %% (%s). Unsteady phases (warm-up cap reached): %s.%n%n",
                widest * 100,
                widestPhase,
                unsteady.isEmpty() ? "none" : String.join("; ", unsteady));
        out.printf(
                Locale.ROOT,
                "Goals, at %d connections: each ratio is the ratio of the medians; the range is that of the per-round "
                        + "ratios (subject and baseline measured in the same round):%n%n",
                goalConnections);
        out.println("| goal | ratio | per-round range | target | met |");
        out.println("|---|---:|---:|---:|---|");
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
        if (apps.stream().anyMatch(app -> app.name.equals(UNOBSERVED))) {
            out.printf(
                    Locale.ROOT,
                    "%nThe decision observation's cost, local store: the observed application ÷ the one started with "
                            + "%s (ratio of medians; range of per-round ratios):%n%n",
                    OBSERVATIONS_OFF.substring(2));
            out.println("| endpoint | connections | observed | observation off | observed ÷ off | per-round range |");
            out.println("|---|---:|---:|---:|---:|---:|");
            for (String endpoint : List.of("annotated", "url")) {
                for (int c : connections) {
                    Ratio r = ratio(results, "local", endpoint, UNOBSERVED, endpoint, c);
                    out.printf(
                            Locale.ROOT,
                            "| /%s | %d | %,.0f | %,.0f | %.2f | %.2f–%.2f |%n",
                            endpoint,
                            c,
                            r.subject,
                            r.base,
                            r.ofMedians(),
                            r.min,
                            r.max);
                }
            }
        }
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

    /**
     * A subject's requests/s against a baseline's at one connection count.
     *
     * @param subject the subject's median
     * @param base the baseline's median
     * @param min the smallest per-round ratio
     * @param max the largest per-round ratio
     */
    private record Ratio(double subject, double base, double min, double max) {

        double ofMedians() {
            return subject / base;
        }
    }

    private static Ratio ratio(
            Map<Key, List<Load>> results, String app, String endpoint, String baseApp, String baseEndpoint, int c) {
        double[] subject = values(results.get(new Key(app, endpoint, c)), Load::requestsPerSecond);
        double[] base = values(results.get(new Key(baseApp, baseEndpoint, c)), Load::requestsPerSecond);
        double[] perRound = Stats.ratios(subject, base);
        return new Ratio(Stats.median(subject), Stats.median(base), Stats.min(perRound), Stats.max(perRound));
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
        Ratio r = ratio(results, app, endpoint, baseApp, baseEndpoint, c);
        double ratio = r.ofMedians();
        out.printf(
                Locale.ROOT,
                "| %s | %.2f | %.2f–%.2f | ≥ %.2f | %s |%n",
                label,
                ratio,
                r.min,
                r.max,
                target,
                ratio >= target ? "yes" : "**no**");
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
