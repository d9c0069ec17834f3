package io.github.ratelimit.samples.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The README's {@code java -jar}: the packaged sample starts on its own (a Spring Boot executable jar) and limits
 * over real HTTP. Runs after {@code package}, in the failsafe phase.
 */
class ExecutableJarIT {

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private int status(int port, String path, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .timeout(Duration.ofSeconds(10));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }

    @Test
    void theJarStartsWithJavaDashJarAndLimits() throws Exception {
        Path jar = Path.of(System.getProperty("sample.jar"));
        assertThat(jar).exists();
        int port = freePort();
        Path log = Files.createTempFile("sample-jar", ".log");
        String javaBinary =
                Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process process = new ProcessBuilder(javaBinary, "-jar", jar.toString(), "--server.port=" + port)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        try {
            boolean up;
            try {
                org.awaitility.Awaitility.await("the application in the jar")
                        .atMost(Duration.ofSeconds(90))
                        .pollInterval(Duration.ofMillis(200))
                        .ignoreExceptionsInstanceOf(IOException.class)
                        .until(() -> !process.isAlive() || status(port, "/actuator/health") == 200);
                up = process.isAlive();
            } catch (org.awaitility.core.ConditionTimeoutException notUp) {
                up = false;
            }
            assertThat(up).as("started; its log:%n%s", Files.readString(log)).isTrue();
            assertThat(status(port, "/api/hello")).isEqualTo(200);
            // /api/me: 3 a minute per user (a window the machine's speed cannot refill during the test).
            String alice = "Basic " + java.util.Base64.getEncoder().encodeToString("alice:alice".getBytes());
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                statuses.add(status(port, "/api/me", "Authorization", alice));
            }
            assertThat(statuses).containsExactly(200, 200, 200, 429);
            assertThat(status(port, "/actuator/ratelimits")).as("anonymous").isEqualTo(401);
            assertThat(Files.readString(log)).doesNotContain("No SLF4J providers");
        } finally {
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            Files.deleteIfExists(log);
        }
    }
}
