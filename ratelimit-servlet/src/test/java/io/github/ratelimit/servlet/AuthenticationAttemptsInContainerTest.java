package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.MissingKeyPolicy;
import io.github.ratelimit.RateLimitHeaders.HeaderStyle;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule;
import io.github.ratelimit.Rule.Counted;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.servlet.testing.TomcatServer;
import io.github.ratelimit.testing.ManualClock;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.Base64;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Password guessing limited in a real Tomcat: the filter decides once before an authentication filter (rules on
 * the address and on the claimed user name, counting only failed attempts) and once after it (rules on the
 * authenticated user). Wrong passwords beyond the limit never reach the authentication; right ones do not count.
 */
class AuthenticationAttemptsInContainerTest {

    private final ManualClock clock = new ManualClock();
    private final AtomicInteger checked = new AtomicInteger();
    private TomcatServer server;

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    /** Basic authentication where each user's password is the user name; counts the passwords it checks. */
    private final class BasicAuthentication implements Filter {
        @Override
        public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
                throws IOException, ServletException {
            HttpServletRequest request = (HttpServletRequest) req;
            HttpServletResponse response = (HttpServletResponse) res;
            String header = request.getHeader("Authorization");
            String user = null;
            if (header != null && header.startsWith("Basic ")) {
                checked.incrementAndGet();
                String[] credentials = new String(
                                Base64.getDecoder().decode(header.substring(6)), StandardCharsets.UTF_8)
                        .split(":", 2);
                if (credentials.length == 2 && credentials[0].equals(credentials[1])) {
                    user = credentials[0];
                }
            }
            if (user == null) {
                response.setHeader("WWW-Authenticate", "Basic realm=\"test\"");
                response.sendError(401);
                return;
            }
            String name = user;
            chain.doFilter(
                    new HttpServletRequestWrapper(request) {
                        @Override
                        public Principal getUserPrincipal() {
                            return () -> name;
                        }
                    },
                    response);
        }
    }

    private static final class Me extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.getWriter().write("you are " + req.getUserPrincipal().getName());
        }
    }

    /** A page with a bug: every request fails with a server error. */
    private static final class Broken extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws ServletException {
            throw new ServletException("a bug");
        }
    }

    /** A code check whose own rule counts the calls that throw. */
    public static final class Verify extends HttpServlet {
        @Override
        @io.github.ratelimit.RateLimit(name = "verify", key = "ip", perHour = 2, count = Counted.FAILURES)
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws ServletException, IOException {
            if (!"right".equals(req.getParameter("code"))) {
                throw new ServletException("wrong code");
            }
            resp.getWriter().write("verified");
        }
    }

    private void start() throws Exception {
        RateLimiter limiter =
                RateLimiter.builder().timeMeter(clock).waiter(clock).build();
        Rule perAddress = Rule.builder("attempts-by-address")
                .key("ip")
                .limits("20/1h")
                .count(Counted.FAILURES)
                .build();
        Rule perUser = Rule.builder("attempts-by-user")
                .key("basic-user")
                .limits("5/1h")
                .count(Counted.FAILURES)
                .onMissingKey(MissingKeyPolicy.SKIP)
                .build();
        Rule calls = Rule.builder("calls-by-user").key("user").limits("1000/1h").build();
        server = TomcatServer.builder()
                .filterBefore(
                        "rateLimitBeforeAuthentication",
                        RateLimitFilter.builder(limiter)
                                .beforeAuthentication()
                                .urlRule(perAddress, "/**")
                                .urlRule(perUser, "/**")
                                .headers(Set.of(HeaderStyle.X_RATELIMIT))
                                .build())
                .filterBefore("authentication", new BasicAuthentication())
                .filter(RateLimitFilter.builder(limiter)
                        .urlRule(calls, "/**")
                        .headers(Set.of(HeaderStyle.X_RATELIMIT))
                        .annotations(true)
                        .build())
                .servlet("me", new Me(), "/*")
                .servlet("broken", new Broken(), "/broken")
                .servlet("verify", new Verify(), "/verify")
                .start();
    }

    private int get(String user, String password) throws IOException {
        return get("/me", user, password);
    }

    private int get(String path, String user, String password) throws IOException {
        String token = Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
        return RawHttp.send(server.port(), "GET", path, "Authorization: Basic " + token)
                .status();
    }

    @Test
    void serverErrorsAfterTheRightPasswordAreNoFailedAttempts() throws Exception {
        start();
        // The rules on attempts count every path; a bug that fails a user's requests must not lock the user out.
        for (int i = 0; i < 10; i++) {
            assertThat(get("/broken", "carol", "carol")).as("request %d", i).isEqualTo(500);
        }
        assertThat(get("/me", "carol", "carol")).isEqualTo(200);
        assertThat(checked.get()).isEqualTo(11);
    }

    @Test
    void aHandlerWhoseOwnRuleCountsFailuresStillCountsTheCallsThatThrow() throws Exception {
        start();
        assertThat(get("/verify?code=right", "dave", "dave")).isEqualTo(200);
        assertThat(get("/verify?code=wrong", "dave", "dave")).isEqualTo(500);
        assertThat(get("/verify?code=wrong", "dave", "dave")).isEqualTo(500);
        assertThat(get("/verify?code=right", "dave", "dave")).isEqualTo(429);
    }

    @Test
    void wrongPasswordsForOneUserStopReachingTheAuthenticationAfterTheLimit() throws Exception {
        start();
        int rejected = 0;
        for (int i = 0; i < 300; i++) {
            int status = get("alice", "guess-" + i);
            assertThat(status).isIn(401, 429);
            if (status == 429) {
                rejected++;
            }
        }
        assertThat(checked.get()).as("passwords checked").isEqualTo(5);
        assertThat(rejected).isEqualTo(295);
        assertThat(get("alice", "alice"))
                .as("the guessed name stays locked for the window")
                .isEqualTo(429);
    }

    @Test
    void rightPasswordsDoNotCount() throws Exception {
        start();
        for (int i = 0; i < 50; i++) {
            assertThat(get("bob", "bob")).as("login %d", i).isEqualTo(200);
        }
        assertThat(get("bob", "wrong")).isEqualTo(401);
    }

    @Test
    void wrongPasswordsForManyUsersFromOneAddressStopAtTheAddressLimit() throws Exception {
        start();
        int reached = 0;
        for (int i = 0; i < 300; i++) {
            if (get("user-" + i, "guess") == 401) {
                reached++;
            }
        }
        assertThat(reached).isEqualTo(20);
        assertThat(checked.get()).isEqualTo(20);
    }

    @Test
    void aRuleBeforeAuthenticationCannotBeKeyedByTheUser() {
        Rule byUser = Rule.builder("r")
                .source("ratelimit.rules[0]")
                .key("user|ip")
                .limits("5/1m")
                .build();
        try (RateLimiter anyLimiter = RateLimiter.builder().build()) {
            RateLimitFilter.Builder before =
                    RateLimitFilter.builder(anyLimiter).beforeAuthentication().urlRule(byUser, "/**");
            assertThatThrownBy(before::build)
                    .hasMessage("ratelimit.rules[0]: key 'user|ip' uses 'user', but the rule "
                            + "decides before authentication, when no user is known. Key it by 'ip', 'basic-user' or "
                            + "'form-user' (the user name a login claims), 'param:<name>' or a header, or decide after "
                            + "authentication.");
        }
    }
}
