package io.github.ratelimit.adversarial.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.adversarial.boot.login.LoginApplication;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.spring.boot.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.testing.ManualClock;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * Attacks Spring Security's form login in a Spring Boot application on real Tomcat with password guessing, limited by
 * URL rules on {@code POST /login} that decide before Spring Security ({@code phase=before-authentication}) and count
 * only failed attempts ({@code count=failures}: Spring Security's failure event marks them): 10 an hour per address
 * ({@code ip}, behind the trusted proxy 127.0.0.1) and 5 per user name ({@code form-user}, the
 * {@code username} parameter, case-folded). Guesses beyond the
 * limits never reach Spring Security (failure events are counted), whatever the guesser rotates, and right passwords
 * (302 to the success URL) do not count. One application for the class: buckets must not leak between tests, so
 * before each test the limiter's clock ({@link ManualClock}, still otherwise) moves a day on, past the rules' hour,
 * and every bucket is full again; and the failed logins counted so far are forgotten.
 */
@SpringBootTest(
        classes = LoginApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.main.banner-mode=off",
            "logging.level.root=warn",
            "server.address=127.0.0.1",
            "ratelimit.trusted-proxies=127.0.0.1",
            "ratelimit.rules[0].name=login-failures-by-address",
            "ratelimit.rules[0].paths=/login",
            "ratelimit.rules[0].methods=POST",
            "ratelimit.rules[0].key=ip",
            "ratelimit.rules[0].limits=10/1h",
            "ratelimit.rules[0].phase=before-authentication",
            "ratelimit.rules[0].count=failures",
            "ratelimit.rules[1].name=login-failures-by-user",
            "ratelimit.rules[1].paths=/login",
            "ratelimit.rules[1].methods=POST",
            "ratelimit.rules[1].key=form-user",
            "ratelimit.rules[1].limits=5/1h",
            "ratelimit.rules[1].phase=before-authentication",
            "ratelimit.rules[1].count=failures",
            "ratelimit.rules[1].on-missing-key=skip"
        })
@Import(FormLoginAttemptsBootTest.Clock.class)
class FormLoginAttemptsBootTest {

    private static final ManualClock CLOCK = new ManualClock();

    /** The limiter's time source (the starter's {@value RateLimitAutoConfiguration#TIME_METER_BEAN} bean). */
    static class Clock {
        @Bean(RateLimitAutoConfiguration.TIME_METER_BEAN)
        ManualClock rateLimitTimeMeter() {
            return CLOCK;
        }
    }

    private static final int PER_ADDRESS = 10;
    private static final int PER_USER = 5;

    @LocalServerPort
    int port;

    @Autowired
    LoginApplication.FailedLogins failedLogins;

    @BeforeEach
    void startAfresh() {
        CLOCK.advance(Duration.ofDays(1));
        failedLogins.clear();
    }

    /** POSTs a login form (the body as given, already encoded) from a client behind the trusted proxy. */
    private RawHttp.Response post(String address, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.ISO_8859_1);
        String request = "POST /login HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nX-Forwarded-For: " + address
                + "\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: " + bytes.length
                + "\r\nConnection: close\r\n\r\n" + body;
        RawHttp.Response response = RawHttp.sendBytes(port, request.getBytes(StandardCharsets.ISO_8859_1));
        assertThat(response.status())
                .as("POST /login from %s: %s", address, body)
                .isIn(302, 400, 429);
        return response;
    }

    private RawHttp.Response login(String address, String user, String password) throws IOException {
        return post(
                address,
                "username=" + URLEncoder.encode(user, StandardCharsets.UTF_8) + "&password="
                        + URLEncoder.encode(password, StandardCharsets.UTF_8));
    }

    private static boolean succeeded(RawHttp.Response response) {
        return response.status() == 302 && response.header("Location").endsWith("/welcome");
    }

    private static boolean failed(RawHttp.Response response) {
        return response.status() == 302 && response.header("Location").endsWith("/login?error");
    }

    @Test
    void threeHundredWrongPasswordsForOneUserReachSpringSecurityOnlyThePerUserLimit() throws Exception {
        int failed = 0;
        int limited = 0;
        for (int i = 0; i < 300; i++) {
            // From many addresses: only the per-user limit can stop them.
            RawHttp.Response response = login("198.51.100." + (i % 200), "alice", "guess-" + i);
            failed += failed(response) ? 1 : 0;
            limited += response.status() == 429 ? 1 : 0;
        }
        assertThat(failedLogins.count())
                .as("failed logins Spring Security checked")
                .isEqualTo(PER_USER);
        assertThat(failed).isEqualTo(PER_USER);
        assertThat(limited).isEqualTo(300 - PER_USER);
        // The guessed name stays locked for the window, even with the right password (documented).
        assertThat(login("203.0.113.1", "alice", "alice-secret").status()).isEqualTo(429);
        // Another user logs in.
        assertThat(succeeded(login("203.0.113.1", "bob", "bob-secret"))).isTrue();
    }

    @Test
    void wrongPasswordsForRotatingUserNamesFromOneAddressStopAtThePerAddressLimit() throws Exception {
        int limited = 0;
        for (int i = 0; i < 300; i++) {
            if (login("198.51.100.7", "user-" + i, "guess").status() == 429) {
                limited++;
            }
        }
        assertThat(failedLogins.count()).isEqualTo(PER_ADDRESS);
        assertThat(limited).isEqualTo(300 - PER_ADDRESS);
        // Forms without a user name (the per-user rule skips them) still count per address.
        for (int i = 0; i < 20; i++) {
            assertThat(post("198.51.100.8", "password=guess-" + i).status()).isIn(302, 429);
        }
        assertThat(failedLogins.count()).isEqualTo(2 * PER_ADDRESS);
        // Another address is unaffected.
        assertThat(succeeded(login("198.51.100.9", "bob", "bob-secret"))).isTrue();
    }

    @Test
    void rightPasswordsDoNotCountAsAttempts() throws Exception {
        for (int i = 0; i < 30; i++) {
            RawHttp.Response response = login("198.51.100.20", "bob", "bob-secret");
            assertThat(succeeded(response))
                    .as("login %d: %s %s", i, response.status(), response.header("Location"))
                    .isTrue();
        }
        assertThat(failedLogins.count()).isZero();
        int failed = 0;
        for (int i = 0; i < 20; i++) {
            if (failed(login("198.51.100.20", "bob", "wrong-" + i))) {
                failed++;
            }
        }
        assertThat(failed).isEqualTo(PER_USER);
        assertThat(failedLogins.count()).isEqualTo(PER_USER);
    }

    @Test
    void paddedUserNamesThatSpringSecurityTrimsCountAgainstTheSameUser() throws Exception {
        // Spring Security trims the user name of a form login; so does the key: the paddings are one user.
        String[] spellings = {
            "alice", " alice", "alice ", "\talice", "alice\t", "alice\r\n", "\u0000alice", "alice\u0001", "  alice  "
        };
        int limited = 0;
        for (int i = 0; i < 90; i++) {
            if (login("198.51.101." + i, spellings[i % spellings.length], "guess-" + i)
                            .status()
                    == 429) {
                limited++;
            }
        }
        assertThat(failedLogins.count())
                .as("failed logins for %s", failedLogins.names())
                .isEqualTo(PER_USER);
        assertThat(limited).isEqualTo(90 - PER_USER);
    }

    @Test
    void userNamesThatDifferOnlyInCaseAreOneUserToSpringSecurityAndToTheLimit() throws Exception {
        // InMemoryUserDetailsManager (like many user stores) finds users regardless of case: ALICE logs in as alice.
        RawHttp.Response upperCase = login("203.0.113.50", "ALICE", "alice-secret");
        assertThat(succeeded(upperCase))
                .as("ALICE with alice's password: %s %s", upperCase.status(), upperCase.header("Location"))
                .isTrue();
        // So guesses spelled in other cases are guesses at alice's password, and the per-user limit must hold.
        String[] spellings = {
            "alice", "Alice", "ALICE", "aLice", "alIce", "aliCe", "alicE", "ALice", "AlIce", "aLIce", "aliCE", "AliCe",
            "ALICe", "aLICE", "AlICE", "ALiCE"
        };
        int reached = 0;
        for (int i = 0; i < 160; i++) {
            if (failed(login("198.51.104." + i, spellings[i % spellings.length], "guess-" + i))) {
                reached++;
            }
        }
        assertThat(reached)
                .as(
                        "guesses at alice's password, spelled in %d cases from rotating addresses, that reached "
                                + "Spring Security",
                        spellings.length)
                .isEqualTo(PER_USER);
    }

    @Test
    void aUserNameInBothQueryAndBodyIsKeyedAsSpringSecurityReadsIt() throws Exception {
        // getParameter returns the query string's value first, for Spring Security and for the key alike.
        int limited = 0;
        for (int i = 0; i < 40; i++) {
            String body = "username=decoy-" + i + "&password=guess";
            byte[] bytes = body.getBytes(StandardCharsets.ISO_8859_1);
            String request =
                    "POST /login?username=alice HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: 198.51.102." + i
                            + "\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: " + bytes.length
                            + "\r\nConnection: close\r\n\r\n" + body;
            int status = RawHttp.sendBytes(port, request.getBytes(StandardCharsets.ISO_8859_1))
                    .status();
            assertThat(status).isIn(302, 429);
            limited += status == 429 ? 1 : 0;
        }
        assertThat(failedLogins.names())
                .as("names Spring Security checked")
                .containsOnly("alice")
                .hasSize(PER_USER);
        assertThat(limited).isEqualTo(40 - PER_USER);
    }

    @Test
    void malformedFormsNeverFailAndCountPerAddress() throws Exception {
        String[] bodies = {
            "username=%zz&password=x",
            "username=%&password=x",
            "username=%E9&password=x",
            "username=" + "a".repeat(5_000) + "&password=x",
            "username=%7B%7D&password=%00",
            "username=alice&username=bob&password=x",
            "&&&&",
            "=",
            "username",
            "password=",
            "username=%C0%AE&password=x",
            "username=alice%00&password=x",
            "username=" + "%7B".repeat(2_000)
        };
        for (int round = 0; round < 3; round++) {
            for (String body : bodies) {
                RawHttp.Response response = post("198.51.103.1", body);
                assertThat(response.status())
                        .as("POST /login %s", body.length() > 60 ? body.substring(0, 60) : body)
                        .isIn(302, 400, 429);
            }
        }
        assertThat(failedLogins.count()).isLessThanOrEqualTo(PER_ADDRESS);
        assertThat(login("198.51.103.1", "bob", "wrong").status())
                .as("the address is spent")
                .isEqualTo(429);
    }
}
