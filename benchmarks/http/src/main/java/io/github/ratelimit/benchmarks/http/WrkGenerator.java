package io.github.ratelimit.benchmarks.http;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Load from {@code wrk} (Debian's package), parsed from its {@code --latency} output. */
final class WrkGenerator implements Load.Generator {

    private static final Pattern RPS = Pattern.compile("Requests/sec:\\s+([0-9.]+)");
    private static final Pattern LATENCY =
            Pattern.compile("^\\s+Latency\\s+(\\S+)\\s+(\\S+)\\s+(\\S+)", Pattern.MULTILINE);
    private static final Pattern PERCENTILE = Pattern.compile("^\\s+(50|99)%\\s+(\\S+)", Pattern.MULTILINE);
    private static final Pattern NON_2XX = Pattern.compile("Non-2xx or 3xx responses:\\s+(\\d+)");
    private static final Pattern SOCKET_ERRORS =
            Pattern.compile("Socket errors: connect (\\d+), read (\\d+), write (\\d+), timeout (\\d+)");

    private final String executable;

    WrkGenerator(String executable) {
        this.executable = executable;
    }

    /** @return wrk on the PATH, or {@code null} */
    static WrkGenerator find() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path wrk = Path.of(dir, "wrk");
            if (Files.isExecutable(wrk)) {
                return new WrkGenerator(wrk.toString());
            }
        }
        return null;
    }

    @Override
    public String name() {
        return "wrk (" + executable + ")";
    }

    @Override
    public Load run(String host, int port, String path, int connections, int seconds)
            throws IOException, InterruptedException {
        int threads = Math.min(connections, 2);
        Process process = new ProcessBuilder(List.of(
                        executable,
                        "-t" + threads,
                        "-c" + connections,
                        "-d" + seconds + "s",
                        "--latency",
                        "http://" + host + ":" + port + path))
                .redirectErrorStream(true)
                .start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(seconds + 30L, TimeUnit.SECONDS) || process.exitValue() != 0) {
            process.destroyForcibly();
            throw new IOException("wrk failed:\n" + out);
        }
        return parse(out);
    }

    /**
     * @param out wrk's output with {@code --latency}
     * @return what it measured
     * @throws IOException when the output has no throughput or latency line
     */
    static Load parse(String out) throws IOException {
        Matcher rps = RPS.matcher(out);
        Matcher latency = LATENCY.matcher(out);
        if (!rps.find() || !latency.find()) {
            throw new IOException("cannot read wrk's output:\n" + out);
        }
        double p50 = Double.NaN;
        double p99 = Double.NaN;
        Matcher pct = PERCENTILE.matcher(out);
        while (pct.find()) {
            if (pct.group(1).equals("50")) {
                p50 = micros(pct.group(2));
            } else {
                p99 = micros(pct.group(2));
            }
        }
        long failed = 0;
        Matcher non2xx = NON_2XX.matcher(out);
        if (non2xx.find()) {
            failed += Long.parseLong(non2xx.group(1));
        }
        Matcher errors = SOCKET_ERRORS.matcher(out);
        if (errors.find()) {
            for (int g = 1; g <= 4; g++) {
                failed += Long.parseLong(errors.group(g));
            }
        }
        return new Load(Double.parseDouble(rps.group(1)), p50, p99, micros(latency.group(3)), failed);
    }

    /** wrk prints 621.43us, 1.23ms, 2.00s. */
    static double micros(String text) {
        if (text.endsWith("us")) {
            return Double.parseDouble(text.substring(0, text.length() - 2));
        }
        if (text.endsWith("ms")) {
            return Double.parseDouble(text.substring(0, text.length() - 2)) * 1_000;
        }
        if (text.endsWith("m")) {
            return Double.parseDouble(text.substring(0, text.length() - 1)) * 60_000_000;
        }
        if (text.endsWith("s")) {
            return Double.parseDouble(text.substring(0, text.length() - 1)) * 1_000_000;
        }
        throw new IllegalArgumentException("not a wrk duration: " + text);
    }
}
