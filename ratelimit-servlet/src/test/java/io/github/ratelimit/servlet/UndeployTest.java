package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.servlet.testing.TomcatServer;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Undeploying a web application whose filter delayed requests leaves nothing of it running: the delay thread
 * ends, and no live thread keeps the application's class loader as its context loader (which would pin every
 * class it loaded until the JVM exits).
 */
class UndeployTest {

    public static final class Ok extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.getWriter().write("ok");
        }
    }

    private static Set<Thread> delayThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("ratelimit-delays-"))
                .collect(Collectors.toSet());
    }

    /** The filter, with its waiting requests' connections checked (as the Spring Boot starter does on Tomcat). */
    public static final class WatchingFilter extends RateLimitFilter {
        public WatchingFilter() {
            clientConnections(request -> () -> false);
        }
    }

    @Test
    void stoppingTheApplicationStopsItsDelayThreadAndReleasesItsClassLoader(@TempDir Path dir) throws Exception {
        stopsEveryThreadOfTheFilter(dir, RateLimitFilter.class);
    }

    @Test
    void aFilterThatChecksWaitingConnectionsLeavesNoThreadEither(@TempDir Path dir) throws Exception {
        stopsEveryThreadOfTheFilter(dir, WatchingFilter.class);
    }

    private void stopsEveryThreadOfTheFilter(Path dir, Class<? extends RateLimitFilter> filter) throws Exception {
        Path rules = Files.writeString(
                dir.resolve("ratelimit.properties"),
                String.join(
                        "\n",
                        "ratelimit.rules[0].name=soft",
                        "ratelimit.rules[0].paths=/**",
                        "ratelimit.rules[0].limits=1/100ms",
                        "ratelimit.rules[0].mode=soft",
                        "ratelimit.rules[0].max-delay=2s"));
        Set<Thread> before = delayThreads();
        try (TomcatServer server = TomcatServer.builder()
                .filterClass(filter.getName())
                .filterParam("config", "file:" + rules)
                .servletClass("ok", Ok.class.getName(), true, "/*")
                .start()) {
            List<CompletableFuture<Integer>> requests = java.util.stream.IntStream.range(0, 4)
                    .mapToObj(i -> CompletableFuture.supplyAsync(() -> {
                        try {
                            return RawHttp.send(server.port(), "GET", "/x").status();
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    }))
                    .toList();
            for (CompletableFuture<Integer> r : requests) {
                assertThat(r.get()).isEqualTo(200);
            }
            Set<Thread> started = delayThreads();
            started.removeAll(before);
            assertThat(started).as("the filter's delay thread").hasSize(1);
            ClassLoader webapp = server.context().getLoader().getClassLoader();

            server.stopContext();

            for (Thread t : started) {
                t.join(5_000);
                assertThat(t.isAlive()).as(t.getName()).isFalse();
            }
            // Stopped threads end by themselves, shortly: wait for that, not for a time.
            org.awaitility.Awaitility.await()
                    .atMost(java.time.Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThat(Thread.getAllStackTraces().keySet().stream()
                                    .filter(t -> t.isAlive() && t.getContextClassLoader() == webapp)
                                    .map(Thread::getName)
                                    .toList())
                            .as("live threads holding the stopped application's class loader")
                            .isEmpty());
        }
    }
}
