package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimitHeaders.HeaderStyle;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.servlet.testing.TomcatServer;
import io.github.ratelimit.testing.ManualClock;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The {@code ip} key in a real Tomcat, against a client that tries to pick its own identity: behind a trusted proxy
 * (127.0.0.1 here) only the hops the proxy appended count, however many header lines the client sends, and a
 * request wrapper that rewrites the address from a forwarding header (as Spring's {@code ForwardedHeaderFilter}
 * does for any peer) does not decide the key.
 */
class ClientAddressInContainerTest {

    private final ManualClock clock = new ManualClock();
    private TomcatServer server;

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    private static final class Ok extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.getWriter().write("ok");
        }
    }

    private void start(Filter... before) throws Exception {
        RateLimiter limiter = RateLimiter.builder()
                .timeMeter(clock)
                .clientIpResolver(
                        ClientIpResolver.builder().trustedProxies("127.0.0.1").build())
                .build();
        Rule rule = Rule.builder("api").key("ip").limits("5/1s").build();
        TomcatServer.Builder b = TomcatServer.builder()
                .filter(RateLimitFilter.builder(limiter)
                        .urlRule(rule, "/**")
                        .headers(Set.of(HeaderStyle.X_RATELIMIT))
                        .build())
                .servlet("ok", new Ok(), "/*");
        for (int i = 0; i < before.length; i++) {
            b.filterBefore("wrapper" + i, before[i]);
        }
        server = b.start();
    }

    @Test
    void manyClientHeaderLinesCannotPushTheProxysHopOutOfView() throws Exception {
        start();
        int admitted = 0;
        for (int request = 0; request < 100; request++) {
            List<String> lines = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                lines.add("X-Forwarded-For: 198.51." + request + "." + i);
            }
            lines.add("X-Forwarded-For: 203.0.113.9"); // what the trusted proxy appended: the real client
            if (RawHttp.send(server.port(), "GET", "/x", lines).status() == 200) {
                admitted++;
            }
        }
        assertThat(admitted).isEqualTo(5);
    }

    @Test
    void hopsInOneLongLineCountFromTheRightToo() throws Exception {
        start();
        int admitted = 0;
        for (int request = 0; request < 20; request++) {
            StringBuilder line = new StringBuilder("X-Forwarded-For: ");
            for (int i = 0; i < 200; i++) {
                line.append("198.51.").append(request).append('.').append(i).append(", ");
            }
            line.append("203.0.113.9");
            if (RawHttp.send(server.port(), "GET", "/x", List.of(line.toString()))
                            .status()
                    == 200) {
                admitted++;
            }
        }
        assertThat(admitted).isEqualTo(5);
    }

    /** Rewrites the address from X-Forwarded-For for any peer and hides the header, as Spring's filter does. */
    private static final class ForwardedHeaderRewriter implements Filter {
        @Override
        public void doFilter(
                jakarta.servlet.ServletRequest req,
                jakarta.servlet.ServletResponse res,
                jakarta.servlet.FilterChain chain)
                throws IOException, jakarta.servlet.ServletException {
            HttpServletRequest http = (HttpServletRequest) req;
            String forwarded = http.getHeader("X-Forwarded-For");
            chain.doFilter(
                    new HttpServletRequestWrapper(http) {
                        @Override
                        public String getRemoteAddr() {
                            return forwarded == null ? super.getRemoteAddr() : forwarded.split(",")[0].trim();
                        }

                        @Override
                        public String getHeader(String name) {
                            return name.equalsIgnoreCase("X-Forwarded-For") ? null : super.getHeader(name);
                        }

                        @Override
                        public Enumeration<String> getHeaders(String name) {
                            return name.equalsIgnoreCase("X-Forwarded-For")
                                    ? Collections.emptyEnumeration()
                                    : super.getHeaders(name);
                        }
                    },
                    res);
        }
    }

    @Test
    void aWrapperThatRewritesTheAddressDoesNotChooseTheKey() throws Exception {
        start(new ForwardedHeaderRewriter());
        int admitted = 0;
        for (int request = 0; request < 50; request++) {
            // A rotating value of the client's own in front of what the trusted proxy appended.
            String header = "X-Forwarded-For: 198.51.100." + request + ", 203.0.113.9";
            if (RawHttp.send(server.port(), "GET", "/x", List.of(header)).status() == 200) {
                admitted++;
            }
        }
        assertThat(admitted).isEqualTo(5);
    }

    @Test
    void behindAWrapperEachRealClientStillHasItsOwnBucket() throws Exception {
        start(new ForwardedHeaderRewriter());
        for (int client = 1; client <= 3; client++) {
            for (int i = 0; i < 5; i++) {
                assertThat(RawHttp.send(server.port(), "GET", "/x", "X-Forwarded-For: 203.0.113." + client)
                                .status())
                        .as("client %d request %d", client, i)
                        .isEqualTo(200);
            }
            assertThat(RawHttp.send(server.port(), "GET", "/x", "X-Forwarded-For: 203.0.113." + client)
                            .status())
                    .isEqualTo(429);
        }
    }
}
