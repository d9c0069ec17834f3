package io.github.ratelimit.benchmarks.http;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * The share of an application's sampled CPU spent in the limiter itself, from a Java Flight Recorder file: a sample
 * counts when, walking from its leaf, a frame of the library comes before the filter chain it passes the request on
 * to (the application's own code, the dispatcher servlet, or Tomcat's valve above the filters). So the limiter's own
 * work, not what runs downstream of it. Record with a deep enough stack ({@code
 * -XX:FlightRecorderOptions:stackdepth=256}); docs/BENCHMARKS.md has the commands.
 */
final class LimiterShare {

    private LimiterShare() {}

    /**
     * @param args the recording
     * @throws IOException when it cannot be read
     */
    public static void main(String[] args) throws IOException {
        long total = 0;
        long limiter = 0;
        Map<String, Long> frames = new HashMap<>();
        for (RecordedEvent event : RecordingFile.readAllEvents(Path.of(args[0]))) {
            if (!event.getEventType().getName().equals("jdk.ExecutionSample") || event.getStackTrace() == null) {
                continue;
            }
            total++;
            for (RecordedFrame frame : event.getStackTrace().getFrames()) {
                String type = frame.getMethod().getType().getName();
                String method = type + "." + frame.getMethod().getName();
                if (type.startsWith("io.github.ratelimit.benchmarks")
                        || method.endsWith("FilterChain.doFilter")
                        || type.contains("DispatcherServlet")
                        || type.endsWith("TomcatClientConnections")) {
                    break; // downstream of the limiter, or the valve that runs the whole chain
                }
                if (type.startsWith("io.github.ratelimit.")) {
                    limiter++;
                    frames.merge(method, 1L, Long::sum);
                    break;
                }
            }
        }
        System.out.printf(
                Locale.ROOT,
                "%d CPU samples, %d in the limiter's own code: %.1f %%%n",
                total,
                limiter,
                total == 0 ? 0 : 100.0 * limiter / total);
        long all = total;
        frames.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .limit(10)
                .forEach(e -> System.out.printf(Locale.ROOT, "%6.1f %%  %s%n", 100.0 * e.getValue() / all, e.getKey()));
    }
}
