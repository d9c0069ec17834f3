package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.servlet.testing.ContainerLog;
import io.github.ratelimit.servlet.testing.JettyServer;
import io.github.ratelimit.servlet.testing.TomcatServer;
import io.github.ratelimit.servlet.tomcat.TomcatClientConnections;
import io.github.ratelimit.testing.ManualClock;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.coyote.http2.Http2Protocol;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Over HTTP/2 (h2c, {@code java.net.http.HttpClient}), on a real Tomcat and a real Jetty 12, a client that cancels
 * its request (a {@code RST_STREAM}) while it waits out a SOFT delay asynchronously gets its tokens back with no
 * probe of the connection: each container reports the stream's end on the request's {@code AsyncContext}, which ends
 * the wait. The client that stays is served when its delay has passed. Time on a manual clock; the test waits for
 * events (decisions, the delay a next call would get) and never for time.
 */
class ClientLeavesSoftWaitInContainersTest {

    public static final class Ok extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.getWriter().write("ok");
        }
    }

    private final ManualClock clock = new ManualClock();
    private final List<Decision> decisions = new CopyOnWriteArrayList<>();
    private final Rule rule = Rule.builder("soft")
            .key("header:X-User")
            .limits("1/1m")
            .mode(Mode.SOFT)
            .maxDelay(Duration.ofHours(1))
            .build();

    private static AutoCloseable start(String container, RateLimitFilter filter) throws Exception {
        if (container.equals("jetty")) {
            return JettyServer.start(filter, new Ok(), "/soft");
        }
        return TomcatServer.builder()
                .filter(filter)
                .servlet("ok", new Ok(), "/soft")
                .server(tomcat -> tomcat.getConnector().addUpgradeProtocol(new Http2Protocol()))
                .start();
    }

    private static int port(AutoCloseable server) {
        return server instanceof JettyServer jetty ? jetty.port() : ((TomcatServer) server).port();
    }

    @ParameterizedTest
    @ValueSource(strings = {"tomcat", "jetty"})
    void aClientThatResetsItsStreamWhileWaitingReturnsItsTokens(String container) throws Exception {
        try (RateLimiter limiter = RateLimiter.builder()
                        .timeMeter(clock)
                        .waiter(clock)
                        .listener(decisions::add)
                        .build();
                AutoCloseable server = start(
                        container,
                        RateLimitFilter.builder(limiter).urlRule(rule, "/soft").build())) {
            HttpClient client =
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build();
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port(server) + "/soft"))
                    .header("X-User", "k")
                    .build();
            HttpResponse<String> first = client.send(request, HttpResponse.BodyHandlers.ofString());
            assertThat(first.statusCode()).isEqualTo(200);
            assertThat(first.version()).as("h2c").isEqualTo(HttpClient.Version.HTTP_2);

            CompletableFuture<HttpResponse<String>> stays =
                    client.sendAsync(request, HttpResponse.BodyHandlers.ofString());
            awaitDelayed(2, Duration.ofMinutes(1));
            CompletableFuture<HttpResponse<String>> leaves =
                    client.sendAsync(request, HttpResponse.BodyHandlers.ofString());
            awaitDelayed(3, Duration.ofMinutes(2));

            Guard guard = limiter.guard(rule);
            RequestContext next = RequestContext.builder().header("X-User", "k").build();
            assertThat(guard.peek(next).delayNanos())
                    .isEqualTo(Duration.ofMinutes(3).toNanos());
            leaves.cancel(true); // the JDK's client resets the stream
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> guard.peek(next).delayNanos()
                            == Duration.ofMinutes(2).toNanos());

            clock.advance(Duration.ofMinutes(1));
            assertThat(stays.get(10, TimeUnit.SECONDS).statusCode())
                    .as("the client that stayed")
                    .isEqualTo(200);
        }
    }

    /**
     * HTTP/1.1 in a {@code web.xml}-style application on Tomcat (the filter from its rules file, on the real clock):
     * Tomcat reports nothing when a waiting client closes its connection, so the valve declared in
     * {@code context.xml} publishes its probes in the servlet context, and the filter's watcher finds the close.
     */
    @Test
    void onTomcatOverHttp1TheValveOfContextXmlTellsTheFilterThatAClientLeft(@TempDir Path dir) throws Exception {
        Path rules = Files.writeString(
                dir.resolve("ratelimit.properties"),
                String.join(
                        "\n",
                        "ratelimit.rules[0].name=soft",
                        "ratelimit.rules[0].paths=/soft",
                        "ratelimit.rules[0].key=header:X-User",
                        "ratelimit.rules[0].limits=1/1m",
                        "ratelimit.rules[0].mode=soft",
                        "ratelimit.rules[0].max-delay=1h"));
        try (TomcatServer server = TomcatServer.builder()
                        .servlet("ok", new Ok(), "/soft")
                        .filterClass(RateLimitFilter.class.getName())
                        .filterParam("config", "file:" + rules)
                        .context(context -> context.getPipeline().addValve(new TomcatClientConnections()))
                        .start();
                Socket first = get(server.port())) {
            assertThat(statusOf(first)).isEqualTo(200);
            try (Socket stays = get(server.port());
                    Socket leaves = get(server.port())) {
                RateLimiter limiter = (RateLimiter) server.context()
                        .getServletContext()
                        .getAttribute(RateLimitFilter.LIMITER_ATTRIBUTE + ".rateLimit");
                Guard guard = limiter.guard(limiter.rules().stream()
                        .filter(r -> r.name().equals("soft"))
                        .findFirst()
                        .orElseThrow());
                RequestContext next =
                        RequestContext.builder().header("X-User", "k").build();
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> guard.peek(next).delayNanos()
                                > Duration.ofMinutes(2).toNanos());
                leaves.close();
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> guard.peek(next).delayNanos()
                                <= Duration.ofMinutes(2).toNanos());
                assertThat(Duration.ofNanos(guard.peek(next).delayNanos()))
                        .as("what the one client still waiting justifies")
                        .isGreaterThan(Duration.ofMinutes(1));
                assertThat(stays.isClosed()).isFalse();
            }
        }
    }

    @Test
    void anAttributeThatIsNoProbeStopsDeploymentNamingIt() {
        List<String> logged = ContainerLog.deploymentFailures(() -> TomcatServer.builder()
                .servlet("ok", new Ok(), "/soft")
                .filter(RateLimitFilter.builder(RateLimiter.builder().build())
                        .urlRule(rule, "/soft")
                        .build())
                .context(context -> context.addServletContainerInitializer(
                        (classes, servletContext) ->
                                servletContext.setAttribute(RateLimitFilter.CLIENT_CONNECTIONS_ATTRIBUTE, "tomcat"),
                        null))
                .start());
        assertThat(logged)
                .anySatisfy(m -> assertThat(m)
                        .startsWith("RateLimitFilter 'rateLimit' cannot start: servlet-context attribute "
                                + "io.github.ratelimit.servlet.RateLimitFilter.clientConnections: holds a "
                                + "java.lang.String, but it must be a io.github.ratelimit.servlet.ClientConnections"));
    }

    /** Opens a connection and sends a GET of {@code /soft} for key {@code k}; the connection stays open. */
    private static Socket get(int port) throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
        socket.setSoTimeout(10_000);
        socket.getOutputStream()
                .write("GET /soft HTTP/1.1\r\nHost: localhost\r\nX-User: k\r\n\r\n"
                        .getBytes(StandardCharsets.ISO_8859_1));
        return socket;
    }

    private static int statusOf(Socket socket) throws IOException {
        byte[] line = new byte[12];
        int n = socket.getInputStream().readNBytes(line, 0, 12);
        assertThat(n).isEqualTo(12);
        return Integer.parseInt(new String(line, 9, 3, StandardCharsets.ISO_8859_1));
    }

    /** Waits for the n-th decision, and checks it delayed its request that long. */
    private void awaitDelayed(int n, Duration delay) {
        await().atMost(Duration.ofSeconds(10)).until(() -> decisions.size() >= n);
        Decision decision = decisions.get(n - 1);
        assertThat(decision.outcome()).as("decision %d", n).isEqualTo(Decision.Outcome.DELAYED);
        assertThat(Duration.ofNanos(decision.delayNanos()))
                .as("delay of decision %d", n)
                .isEqualTo(delay);
    }
}
