package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.servlet.jetty.JettyClientConnections;
import io.github.ratelimit.servlet.testing.ContainerLog;
import io.github.ratelimit.servlet.testing.JettyServer;
import io.github.ratelimit.servlet.testing.TomcatServer;
import io.github.ratelimit.servlet.tomcat.TomcatClientConnections;
import io.github.ratelimit.testing.ManualClock;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
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
 * the wait. Over HTTP/1.1 neither container reports the close: a probe of the connection finds it (Tomcat's valve,
 * Jetty's {@link JettyClientConnections}), raw sockets. The client that stays is served when its delay has passed.
 * Time on a manual clock where the test can; it waits for events (decisions, the delay a next call would get) and
 * never for time.
 */
class ClientLeavesSoftWaitInContainersTest {

    /** Answers {@code ok <X-User>}, with its length, so a kept-alive connection's responses can be told apart. */
    public static final class Ok extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            byte[] body = ("ok " + req.getHeader("X-User")).getBytes(StandardCharsets.ISO_8859_1);
            resp.setContentType("text/plain");
            resp.setContentLength(body.length);
            resp.getOutputStream().write(body);
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
        try (RateLimiter limiter = limiterOnTheManualClock();
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

    /**
     * HTTP/1.1 on Jetty 12: Jetty reports nothing when a waiting client closes its connection (it does not read the
     * connection while a request is handled), so {@link JettyClientConnections}, added to the context as an
     * initializer, publishes its probes in the servlet context, and the filter's watcher finds the close. A client
     * that only shuts down its output counts as gone too. The client that stays is served when its delay has passed.
     */
    @ParameterizedTest
    @ValueSource(strings = {"close", "shutdownOutput"})
    void onJettyOverHttp1TheInitializerTellsTheFilterThatAClientLeft(String how) throws Exception {
        try (RateLimiter limiter = limiterOnTheManualClock();
                JettyServer server = JettyServer.start(
                        RateLimitFilter.builder(limiter).urlRule(rule, "/soft").build(),
                        new Ok(),
                        "/soft",
                        context -> context.addServletContainerInitializer(new JettyClientConnections()));
                Socket first = get(server.port(), "k")) {
            assertThat(responseOn(first)).isEqualTo("ok k");
            try (Socket stays = get(server.port(), "k")) {
                awaitDelayed(2, Duration.ofMinutes(1));
                try (Socket leaves = get(server.port(), "k")) {
                    awaitDelayed(3, Duration.ofMinutes(2));
                    Guard guard = limiter.guard(rule);
                    RequestContext next =
                            RequestContext.builder().header("X-User", "k").build();
                    assertThat(guard.peek(next).delayNanos())
                            .isEqualTo(Duration.ofMinutes(3).toNanos());
                    if (how.equals("close")) {
                        leaves.close();
                    } else {
                        leaves.shutdownOutput();
                    }
                    await().atMost(Duration.ofSeconds(10))
                            .until(() -> guard.peek(next).delayNanos()
                                    == Duration.ofMinutes(2).toNanos());
                }
                clock.advance(Duration.ofMinutes(1));
                assertThat(responseOn(stays)).as("the client that stayed").isEqualTo("ok k");
            }
        }
    }

    /**
     * The probe reads nothing: a request pipelined behind a waiting one on the same connection, sent while it waits,
     * stays on the socket for Jetty (the probe, asked meanwhile, finds the client there), and is served after it; the
     * connection is then kept alive for a next request.
     */
    @Test
    void onJettyOverHttp1APipelinedRequestAndTheKeptAliveConnectionSurviveTheChecks() throws Exception {
        List<Boolean> watched = new CopyOnWriteArrayList<>();
        List<Boolean> answers = new CopyOnWriteArrayList<>();
        JettyClientConnections jetty = new JettyClientConnections();
        ClientConnections recorded = request -> {
            ClientConnections.Probe probe = jetty.watch(request);
            watched.add(probe != null);
            return probe == null
                    ? null
                    : () -> {
                        boolean gone = probe.clientGone();
                        answers.add(gone);
                        return gone;
                    };
        };
        try (RateLimiter limiter = limiterOnTheManualClock();
                JettyServer server = JettyServer.start(
                        RateLimitFilter.builder(limiter)
                                .urlRule(rule, "/soft")
                                .build()
                                .clientConnections(recorded),
                        new Ok(),
                        "/soft");
                Socket connection = get(server.port(), "k")) {
            assertThat(responseOn(connection)).isEqualTo("ok k");
            send(connection, "k");
            awaitDelayed(2, Duration.ofMinutes(1));
            send(connection, "p"); // pipelined behind the waiting request
            int asked = answers.size();
            await().atMost(Duration.ofSeconds(10)).until(() -> answers.size() >= asked + 2);
            assertThat(answers).as("the probe's answers").containsOnly(false);
            Guard guard = limiter.guard(rule);
            RequestContext next = RequestContext.builder().header("X-User", "k").build();
            assertThat(guard.peek(next).delayNanos())
                    .as("the waiting request keeps its tokens")
                    .isEqualTo(Duration.ofMinutes(2).toNanos());

            clock.advance(Duration.ofMinutes(1));
            assertThat(responseOn(connection)).as("the request that waited").isEqualTo("ok k");
            assertThat(responseOn(connection)).as("the pipelined request").isEqualTo("ok p");
            send(connection, "q");
            assertThat(responseOn(connection)).as("a next request, kept alive").isEqualTo("ok q");
            assertThat(answers).containsOnly(false);
            assertThat(watched).as("GETs over HTTP/1.1 that waited").containsExactly(true);
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
        return get(port, "k");
    }

    /** Opens a connection and sends a GET of {@code /soft} for the key; the connection stays open. */
    private static Socket get(int port, String user) throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
        socket.setSoTimeout(10_000);
        send(socket, user);
        return socket;
    }

    /** Sends a GET of {@code /soft} for the key on an open connection, kept alive. */
    private static void send(Socket socket, String user) throws IOException {
        socket.getOutputStream()
                .write(("GET /soft HTTP/1.1\r\nHost: localhost\r\nX-User: " + user + "\r\n\r\n")
                        .getBytes(StandardCharsets.ISO_8859_1));
    }

    /**
     * Reads the next response on a kept-alive connection, which must be a 200 with a {@code Content-Length}.
     *
     * @return its body
     */
    private static String responseOn(Socket socket) throws IOException {
        InputStream in = socket.getInputStream();
        StringBuilder head = new StringBuilder();
        while (head.indexOf("\r\n\r\n") < 0) {
            int b = in.read();
            assertThat(b).as("the response's head so far: %s", head).isNotNegative();
            head.append((char) b);
        }
        String[] lines = head.toString().split("\r\n");
        assertThat(lines[0]).startsWith("HTTP/1.1 200 ");
        int length = -1;
        for (String line : lines) {
            if (line.regionMatches(true, 0, "Content-Length:", 0, 15)) {
                length = Integer.parseInt(line.substring(15).trim());
            }
        }
        assertThat(length).as("Content-Length of %s", head).isNotNegative();
        return new String(in.readNBytes(length), StandardCharsets.ISO_8859_1);
    }

    private static int statusOf(Socket socket) throws IOException {
        byte[] line = new byte[12];
        int n = socket.getInputStream().readNBytes(line, 0, 12);
        assertThat(n).isEqualTo(12);
        return Integer.parseInt(new String(line, 9, 3, StandardCharsets.ISO_8859_1));
    }

    /** @return a limiter on the test's manual clock that records its decisions */
    private RateLimiter limiterOnTheManualClock() {
        return RateLimiter.builder()
                .timeMeter(clock)
                .waiter(clock)
                .listener(decisions::add)
                .build();
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
