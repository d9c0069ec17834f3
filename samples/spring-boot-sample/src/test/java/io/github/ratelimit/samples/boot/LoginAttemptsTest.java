package io.github.ratelimit.samples.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.spring.boot.autoconfigure.RateLimitAutoConfiguration;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * The sample's limits on password guessing, over real HTTP with Spring Security's HTTP Basic: the rules decide
 * before Spring Security, and only failed logins count. One application for the class; before each test its
 * limiter's clock moves a day on, past every window of the sample's rules and plans, so each test starts with every
 * bucket full (a user name locked by one must not lock it for the next).
 *
 * <p>Between those moves the limiter's clock stands still ({@link StoppedClock}): the login rules put a token back
 * every 6 s (10/1m) and every 12 s (5/1m), and hundreds of requests take longer than that on a loaded machine, so on
 * the wall clock the exact counts below would depend on the machine's speed.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"ratelimit.trusted-proxies=127.0.0.1,::1", "spring.application.name=login-attempts-test"})
@Import(LoginAttemptsTest.StoppedClock.class)
class LoginAttemptsTest {

    /**
     * The limiter's time source (the starter's {@value RateLimitAutoConfiguration#TIME_METER_BEAN} bean), stopped;
     * only {@link #moveOn} moves it. Imported, and on purpose not annotated: the sample's component scan covers this
     * package, and must not find it for the tests that start the sample without it.
     */
    static class StoppedClock {
        private static final AtomicLong NOW = new AtomicLong(System.currentTimeMillis() * 1_000_000L);

        static void moveOn(Duration duration) {
            NOW.addAndGet(duration.toNanos());
        }

        @Bean(RateLimitAutoConfiguration.TIME_METER_BEAN)
        TimeMeter rateLimitTimeMeter() {
            return new TimeMeter() {
                @Override
                public long currentTimeNanos() {
                    return NOW.get();
                }

                @Override
                public boolean isWallClockBased() {
                    return true;
                }
            };
        }
    }

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newHttpClient();

    /** Longer than the longest window of the sample's rules and plans (1 h): every bucket is full again. */
    @BeforeEach
    void fillEveryBucket() {
        StoppedClock.moveOn(Duration.ofDays(1));
    }

    private int me(String ip, String user, String password) throws Exception {
        return send("/api/me", ip, user, password);
    }

    /** GET with Basic credentials ({@code user} null: none). */
    private int send(String path, String ip, String user, String password) throws Exception {
        return send(path, ip, "Basic ", user, password);
    }

    /** GET with credentials after the scheme as spelt ({@code user} null: none). */
    private int send(String path, String ip, String scheme, String user, String password) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .timeout(Duration.ofSeconds(10))
                .header("X-Forwarded-For", ip);
        if (user != null) {
            String token = Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
            request.header("Authorization", scheme + token);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }

    @Test
    void aSignedInRequestsHeadersReportItsRequestLimitsNotTheLoginRules() throws Exception {
        String token = Base64.getEncoder().encodeToString("bob:bob".getBytes(StandardCharsets.UTF_8));
        HttpResponse<Void> response = http.send(
                HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/api/hello"))
                        .header("X-Forwarded-For", "198.51.100.43")
                        .header("Authorization", "Basic " + token)
                        .build(),
                HttpResponse.BodyHandlers.discarding());
        assertThat(response.statusCode()).isEqualTo(200);
        // The login rules hold a token while the request runs, and give it back: not a rate the client is held to.
        assertThat(response.headers().allValues("RateLimit-Policy"))
                .isNotEmpty()
                .noneMatch(policy -> policy.contains("login-failures"));
        assertThat(response.headers().firstValue("X-RateLimit-Reset"))
                .hasValueSatisfying(reset -> assertThat(Long.parseLong(reset))
                        .as("seconds until hello's 5/1s is full again")
                        .isLessThanOrEqualTo(1));
    }

    /**
     * Spring Security's servlet HTTP Basic takes any header that starts with {@code Basic} and decodes from its
     * seventh character on, so {@code BasicX<credentials>} is checked as well: every spelling it accepts is a guess
     * at the user it names (it once passed both limits: 100 wrong passwords, 100 checked).
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"Basic ", "BasicX", "basic\t", "BASIC:"})
    void everySpellingOfTheSchemeSpringSecurityAcceptsIsAGuess(String scheme) throws Exception {
        int checked = 0;
        for (int i = 0; i < 30; i++) {
            int status = send("/api/me", "198.51.100.42", scheme, "alice", "guess-" + i);
            assertThat(status).as("guess %d", i).isIn(401, 429);
            checked += status == 401 ? 1 : 0;
        }
        assertThat(checked)
                .as("passwords checked for alice with the scheme spelt '%s'", scheme)
                .isEqualTo(5);
    }

    /**
     * Spring Security's HTTP Basic checks a password sent to any path, open ones and missing ones included: the
     * limits hold on each. The last column is what the right password gets there.
     */
    @ParameterizedTest
    @CsvSource({"/api/me, 200", "/api/hello, 200", "/actuator/health, 200", "/, 404", "/no-such-page, 404"})
    void wrongPasswordsOnAnyPathStopAtTheLimits(String path, int rightPasswordStatus) throws Exception {
        int checked = 0;
        int limited = 0;
        for (int i = 0; i < 300; i++) {
            int status = send(path, "198.51.100.40", "user-" + i, "guess");
            assertThat(status).as("guess %d", i).isIn(401, 429);
            checked += status == 401 ? 1 : 0;
            limited += status == 429 ? 1 : 0;
        }
        assertThat(checked)
                .as("passwords checked, rotating user names from one address")
                .isEqualTo(10);
        assertThat(limited).isEqualTo(290);
        checked = 0;
        for (int i = 0; i < 300; i++) {
            checked += send(path, "198.18." + (i / 200) + "." + (i % 200 + 1), "alice", "guess-" + i) == 401 ? 1 : 0;
        }
        assertThat(checked)
                .as("passwords checked for one user name, from many addresses")
                .isEqualTo(5);
        assertThat(send(path, "198.51.100.41", "bob", "bob"))
                .as("the right password from another address")
                .isEqualTo(rightPasswordStatus);
    }

    @Test
    void requestsWithoutAPasswordMissingPagesAndRightPasswordsCostTheLimitsNothing() throws Exception {
        // A scanner's 404s, challenges (401 without a password), and a user's own requests, from one address.
        for (int i = 0; i < 30; i++) {
            assertThat(send("/no-such-page-" + i, "198.51.100.50", null, null)).isEqualTo(404);
            assertThat(send("/api/me", "198.51.100.50", null, null)).isEqualTo(401);
            assertThat(send("/no-such-page-" + i, "198.51.100.50", "bob", "bob"))
                    .isEqualTo(404);
        }
        assertThat(me("198.51.100.50", "bob", "bob")).isEqualTo(200);
        // The address still has all ten of its failed logins.
        int checked = 0;
        for (int i = 0; i < 11; i++) {
            checked += me("198.51.100.50", "user-" + i, "guess") == 401 ? 1 : 0;
        }
        assertThat(checked).isEqualTo(10);
    }

    @Test
    void threeHundredWrongPasswordsForOneUserReachSpringSecurityFiveTimes() throws Exception {
        int checked = 0;
        int limited = 0;
        for (int i = 0; i < 300; i++) {
            int status = me("198.51.100.1", "alice", "guess-" + i);
            assertThat(status).isIn(401, 429);
            checked += status == 401 ? 1 : 0;
            limited += status == 429 ? 1 : 0;
        }
        assertThat(checked).isEqualTo(5);
        assertThat(limited).isEqualTo(295);
        // The name stays locked for the rest of the minute, even from another address and with the right password.
        assertThat(me("198.51.100.2", "alice", "alice")).isEqualTo(429);
    }

    @Test
    void spellingTheNameInOtherCasesIsStillGuessingAtTheSameUser() throws Exception {
        // Spring Security's in-memory store finds ALICE as alice: every spelling is a guess at alice's password.
        assertThat(me("198.51.100.6", "ALICE", "alice")).isEqualTo(200);
        int checked = 0;
        String[] spellings = {"alice", "Alice", "ALICE", "aLiCe", "alicE", "ALIce", "aliCE", "AlIcE"};
        for (int i = 0; i < 40; i++) {
            checked += me("198.51.100." + (10 + i), spellings[i % spellings.length], "guess") == 401 ? 1 : 0;
        }
        assertThat(checked).isEqualTo(5);
    }

    @Test
    void wrongPasswordsForManyUsersFromOneAddressStopAtTenPerMinute() throws Exception {
        int checked = 0;
        for (int i = 0; i < 300; i++) {
            checked += me("198.51.100.3", "user-" + i, "guess") == 401 ? 1 : 0;
        }
        assertThat(checked).isEqualTo(10);
        assertThat(me("198.51.100.4", "bob", "bob")).as("another address").isEqualTo(200);
    }

    @Test
    void rightPasswordsDoNotCountAsAttempts() throws Exception {
        // bob's plan allows 10 calls a minute on /api/me; all ten log in, and none is a failed attempt.
        for (int i = 0; i < 10; i++) {
            assertThat(me("198.51.100.5", "bob", "bob")).as("login %d", i).isEqualTo(200);
        }
        for (int i = 0; i < 5; i++) {
            assertThat(me("198.51.100.5", "bob", "wrong")).as("failure %d", i).isEqualTo(401);
        }
        assertThat(me("198.51.100.5", "bob", "wrong")).isEqualTo(429);
    }
}
