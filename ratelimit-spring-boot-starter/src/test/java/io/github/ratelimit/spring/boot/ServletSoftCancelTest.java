package io.github.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule.LocalFirst;
import io.github.ratelimit.spring.boot.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.BucketStore.KeyState;
import io.github.ratelimit.store.LocalBucketStore;
import io.github.ratelimit.testing.ManualClock;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * On Boot's embedded Tomcat, a client that closes its connection while its request waits out a SOFT delay returns
 * its tokens: the next client waits what the clients still waiting justify, not what every client that ever waited
 * did. Over real HTTP on a real Tomcat, time on a manual clock; the test waits for events (decisions, refunds), and
 * asserts the delay computed.
 */
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_EACH_TEST_METHOD)
@SpringBootTest(
        classes = ServletSoftCancelTest.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "ratelimit.rules[0].name=soft",
            "ratelimit.rules[0].paths=/soft",
            "ratelimit.rules[0].limits=1/1m",
            "ratelimit.rules[0].mode=soft",
            "ratelimit.rules[0].max-delay=1h",
            "ratelimit.rules[1].name=soft-blocking",
            "ratelimit.rules[1].paths=/blocking",
            "ratelimit.rules[1].limits=1/1m",
            "ratelimit.rules[1].mode=soft",
            "ratelimit.rules[1].max-delay=1h"
        })
class ServletSoftCancelTest {

    static final List<Decision> DECISIONS = new CopyOnWriteArrayList<>();
    static final AtomicLong REFUNDED = new AtomicLong();

    @SpringBootApplication
    static class App {

        @Bean(RateLimitAutoConfiguration.TIME_METER_BEAN)
        ManualClock rateLimitTimeMeter() {
            return new ManualClock();
        }

        @Bean
        RateLimiter.Listener recordingListener() {
            return DECISIONS::add;
        }

        /** The local store, counting the tokens given back. */
        @Bean
        BucketStore countingStore(ManualClock clock) {
            return new CountingStore(LocalBucketStore.builder().timeMeter(clock).build());
        }

        /** A servlet without async support: a SOFT delay waits on the request's thread. */
        @Bean
        ServletRegistrationBean<HttpServlet> blockingServlet() {
            ServletRegistrationBean<HttpServlet> registration = new ServletRegistrationBean<>(
                    new HttpServlet() {
                        @Override
                        protected void doGet(HttpServletRequest request, HttpServletResponse response)
                                throws IOException {
                            response.getWriter().write("blocking");
                        }
                    },
                    "/blocking");
            registration.setAsyncSupported(false);
            return registration;
        }

        @RestController
        static class Soft {
            @GetMapping("/soft")
            String soft() {
                return "soft";
            }
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    ManualClock clock;

    private final List<Socket> sockets = new ArrayList<>();

    @BeforeEach
    void reset() {
        DECISIONS.clear();
        REFUNDED.set(0);
    }

    @AfterEach
    void closeSockets() throws IOException {
        for (Socket s : sockets) {
            s.close();
        }
    }

    @Test
    void clientsThatCloseWhileWaitingAsynchronouslyReturnTheirTokens() throws Exception {
        assertThat(statusOf(send("/soft", false))).isEqualTo(200);
        // Twenty clients wait a minute more each; the first pipelines a second request behind its first.
        List<Socket> waiting = new ArrayList<>();
        for (int i = 1; i <= 20; i++) {
            waiting.add(send("/soft", i == 1));
            awaitDelayed(1 + i, Duration.ofMinutes(i));
        }
        // The ten that would wait longest close their connections; the server sees them go and returns their tokens.
        for (Socket s : waiting.subList(10, 20)) {
            s.close();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> REFUNDED.get() == 10);
        // A fresh client waits what the ten still waiting justify: 11 minutes, not 21.
        Socket fresh = send("/soft", false);
        awaitDelayed(22, Duration.ofMinutes(11));

        clock.advance(Duration.ofMinutes(11));
        for (Socket s : waiting.subList(0, 10)) {
            assertThat(statusOf(s)).as("a client that stayed").isEqualTo(200);
        }
        assertThat(statusOf(fresh)).isEqualTo(200);
        // The pipelined request was not taken for a close: it is decided once the first is answered.
        await().atMost(Duration.ofSeconds(10)).until(() -> DECISIONS.size() == 23);
        clock.advance(Duration.ofHours(1));
        assertThat(statusOf(waiting.get(0))).isEqualTo(200);
        assertThat(REFUNDED.get()).isEqualTo(10);
    }

    @Test
    void clientsThatCloseWhileWaitingOnTheRequestThreadReturnTheirTokens() throws Exception {
        assertThat(statusOf(send("/blocking", false))).isEqualTo(200);
        List<Socket> waiting = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            waiting.add(send("/blocking", false));
            awaitDelayed(1 + i, Duration.ofMinutes(i));
        }
        waiting.get(1).close();
        waiting.get(2).close();
        await().atMost(Duration.ofSeconds(10)).until(() -> REFUNDED.get() == 2);
        Socket fresh = send("/blocking", false);
        awaitDelayed(5, Duration.ofMinutes(2));
        clock.advance(Duration.ofMinutes(2));
        assertThat(statusOf(waiting.get(0))).isEqualTo(200);
        assertThat(statusOf(fresh)).isEqualTo(200);
    }

    /** Waits for the n-th decision of the test, and checks it delayed its request that long. */
    private static void awaitDelayed(int n, Duration delay) {
        await().atMost(Duration.ofSeconds(10)).until(() -> DECISIONS.size() >= n);
        Decision decision = DECISIONS.get(n - 1);
        assertThat(decision.outcome()).as("decision %d", n).isEqualTo(Outcome.DELAYED);
        assertThat(Duration.ofNanos(decision.delayNanos()))
                .as("delay of decision %d", n)
                .isEqualTo(delay);
    }

    /** Opens a connection and sends a GET (twice, pipelined, when asked); the connection stays open. */
    private Socket send(String path, boolean pipelineASecond) throws IOException {
        Socket socket = new Socket();
        sockets.add(socket);
        socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
        socket.setSoTimeout(10_000);
        String request = "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
        OutputStream out = socket.getOutputStream();
        out.write((pipelineASecond ? request + request : request).getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        return socket;
    }

    /** Reads the status line of the next response on the connection, and that response's body. */
    private static int statusOf(Socket socket) throws IOException {
        InputStream in = socket.getInputStream();
        String head = readHead(in);
        int status = Integer.parseInt(head.substring(9, 12));
        for (String line : head.split("\r\n")) {
            if (line.regionMatches(true, 0, "Content-Length:", 0, 15)) {
                in.readNBytes(Integer.parseInt(line.substring(15).trim()));
            } else if (line.equalsIgnoreCase("Transfer-Encoding: chunked")) {
                readChunks(in);
            }
        }
        return status;
    }

    private static String readHead(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("connection closed after: " + head);
            }
            head.append((char) b);
        }
        return head.toString();
    }

    private static void readChunks(InputStream in) throws IOException {
        while (true) {
            StringBuilder size = new StringBuilder();
            for (int b = in.read(); b != '\n'; b = in.read()) {
                size.append((char) b);
            }
            int n = Integer.parseInt(size.toString().trim(), 16);
            in.readNBytes(n + 2);
            if (n == 0) {
                return;
            }
        }
    }

    /** A store that counts the permits given back to it. */
    private record CountingStore(BucketStore store) implements BucketStore {

        @Override
        public KeyState state(BucketStore.Key key, BucketStore.Limits limits, LocalFirst localFirst) {
            KeyState state = store.state(key, limits, localFirst);
            return new KeyState() {
                @Override
                public Probe consume(long cost) {
                    return state.consume(cost);
                }

                @Override
                public Probe reserve(long cost, long maxWaitNanos) {
                    return state.reserve(cost, maxWaitNanos);
                }

                @Override
                public Probe reserve(long cost, long minWaitNanos, long maxWaitNanos) {
                    return state.reserve(cost, minWaitNanos, maxWaitNanos);
                }

                @Override
                public void refund(long cost, long receipt) {
                    state.refund(cost, receipt);
                    REFUNDED.addAndGet(cost);
                }
            };
        }

        @Override
        public void reset(BucketStore.Key key) {
            store.reset(key);
        }

        @Override
        public void limitsChanged(BucketStore.Key key) {
            store.limitsChanged(key);
        }

        @Override
        public void close() {
            store.close();
        }
    }
}
