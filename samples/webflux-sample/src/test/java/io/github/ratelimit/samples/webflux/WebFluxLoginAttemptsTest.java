package io.github.ratelimit.samples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.spring.boot.autoconfigure.RateLimitAutoConfiguration;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * The sample's limits on password guessing over real HTTP, with Spring Security's reactive HTTP Basic: the rules
 * decide before Spring Security's chain, and only failed logins (401) keep their token. One application for the
 * class; before each test its limiter's clock moves a day on, past every window of the sample's rules, so each test
 * starts with every bucket full (a user name locked by one must not lock it for the next).
 *
 * <p>Between those moves the limiter's clock stands still ({@link StoppedClock}): the login rules put a token back
 * every 6 s (10/1m) and every 12 s (5/1m), and hundreds of requests take longer than that on a loaded machine, so on
 * the wall clock the exact counts below would depend on the machine's speed.
 */
class WebFluxLoginAttemptsTest {

    /**
     * The limiter's time source (the starter's {@value RateLimitAutoConfiguration#TIME_METER_BEAN} bean), stopped;
     * only {@link #moveOn} moves it. A source of the application, and on purpose not annotated: the sample's component
     * scan covers this package, and must not find it for the tests that start the sample without it.
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

    private static ConfigurableApplicationContext app;
    private static String base;

    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        app = SpringApplication.run(
                new Class<?>[] {WebFluxSampleApplication.class, StoppedClock.class},
                new String[] {"--server.port=0", "--ratelimit.trusted-proxies=127.0.0.1,::1"});
        base = "http://localhost:"
                + ((WebServerApplicationContext) app).getWebServer().getPort();
    }

    @AfterAll
    static void stop() {
        if (app != null) {
            app.close();
        }
    }

    /** Longer than the longest window of the sample's rules (1 h): every bucket is full again. */
    @BeforeEach
    void fillEveryBucket() {
        StoppedClock.moveOn(Duration.ofDays(1));
    }

    private int me(String ip, String user, String password) {
        return send("/api/me", ip, user, password);
    }

    /**
     * GET with Basic credentials ({@code user} null: none), with the JDK's client, as the Boot sample's test does.
     * (With WebTestClient, a few of these tests' thousands of requests timed out after 20 s on the loaded build
     * machine, cause not found; the JDK's client got every answer.)
     */
    private int send(String path, String ip, String user, String password) {
        return send(path, ip, user, password, 0);
    }

    /** As {@link #send(String, String, String, String)}, with {@code extra} more {@code Authorization} lines after. */
    private int send(String path, String ip, String user, String password, int extra) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(Duration.ofSeconds(10))
                .header("X-Forwarded-For", ip);
        if (user != null) {
            String token = Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
            request.header("Authorization", "Basic " + token);
        }
        for (int i = 0; i < extra; i++) {
            request.header("Authorization", "x");
        }
        try {
            return http.send(request.build(), HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Spring Security reads the first {@code Authorization} line; the keys read the same one however many lines
     * follow (with 64 more, the keys once read another line, found no Basic credentials, and both login rules were
     * skipped: 100 wrong passwords, 100 checked).
     */
    @Test
    void linesAfterTheCredentialsDoNotHideThemFromTheLimits() {
        int checked = 0;
        for (int i = 0; i < 30; i++) {
            int status = send("/api/me", "198.51.100.44", "alice", "guess-" + i, 64);
            assertThat(status).as("guess %d", i).isIn(401, 429);
            checked += status == 401 ? 1 : 0;
        }
        assertThat(checked).as("passwords checked for alice").isEqualTo(5);
    }

    /**
     * Spring Security's reactive HTTP Basic checks a password sent to any path, open ones and missing ones included:
     * the limits hold on each. The last column is what the right password gets there.
     */
    @ParameterizedTest
    @CsvSource({
        "/api/me, 200",
        "/api/status, 200",
        "/api/hello, 200",
        "/actuator/health, 200",
        "/, 404",
        "/no-such-page, 404"
    })
    void wrongPasswordsOnAnyPathStopAtTheLimits(String path, int rightPasswordStatus) {
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
    void requestsWithoutAPasswordMissingPagesAndRightPasswordsCostTheLimitsNothing() {
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
    void manyWrongPasswordsForOneUserReachSpringSecurityFiveTimes() {
        int checked = 0;
        int limited = 0;
        for (int i = 0; i < 60; i++) {
            int status = me("198.51.100." + (i % 5 + 1), "alice", "guess-" + i);
            assertThat(status).isIn(401, 429);
            checked += status == 401 ? 1 : 0;
            limited += status == 429 ? 1 : 0;
        }
        assertThat(checked).isEqualTo(5);
        assertThat(limited).isEqualTo(55);
        // The name stays locked for the rest of the minute, even from another address and with the right password.
        assertThat(me("198.51.100.9", "alice", "alice")).isEqualTo(429);
    }

    @Test
    void rightPasswordsDoNotCount() {
        // 'me' allows 3 per minute per user: use bob, then alice; twelve successful logins from one address.
        for (int i = 0; i < 3; i++) {
            assertThat(me("198.51.100.20", "bob", "bob")).isEqualTo(200);
            assertThat(me("198.51.100.20", "alice", "alice")).isEqualTo(200);
        }
        // Four wrong passwords from that address and one more for alice: none limited, the address has room left.
        for (int i = 0; i < 4; i++) {
            assertThat(me("198.51.100.20", "carol", "guess")).isEqualTo(401);
        }
        assertThat(me("198.51.100.20", "dave", "guess")).isEqualTo(401);
    }

    @Test
    void wrongPasswordsForManyUsersFromOneAddressStopAtTenPerMinute() {
        int checked = 0;
        for (int i = 0; i < 40; i++) {
            checked += me("198.51.100.30", "user" + i, "guess") == 401 ? 1 : 0;
        }
        assertThat(checked).isEqualTo(10);
    }
}
