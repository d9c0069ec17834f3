package io.github.ratelimit.samples.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The sample's limits on password guessing, over real HTTP on its real web.xml in Tomcat: the container checks the
 * Basic credentials a request sends on any path (when the authentication filter asks it to), after the rate-limit
 * filter that applies the rules on attempts; only failed logins count. A fresh server per test.
 */
class ServletSampleLoginAttemptsTest {

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private SampleServer server;

    @BeforeEach
    void start() throws Exception {
        server = SampleServer.start(0, Map.of());
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    /** GET from a client address (through the trusted proxy), with Basic credentials ({@code user} null: none). */
    private int send(String path, String ip, String user, String password) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + server.port() + path))
                .timeout(Duration.ofSeconds(10))
                .header("X-Forwarded-For", ip);
        if (user != null) {
            String token = Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
            request.header("Authorization", "Basic " + token);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }

    /**
     * Every path a servlet serves: the authentication checks the credentials sent there. The last column is what the
     * right password gets there.
     */
    @ParameterizedTest
    @CsvSource({"/me, 200", "/hello, 200", "/search, 200", "/reports, 200"})
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
        // A scanner's 404s, challenges (401 without a password), and a user's own requests, from one address. No
        // servlet serves a missing page, so the container checks no password there: a guess learns nothing.
        for (int i = 0; i < 30; i++) {
            assertThat(send("/no-such-page-" + i, "198.51.100.50", null, null)).isEqualTo(404);
            assertThat(send("/no-such-page-" + i, "198.51.100.50", "bob", "wrong"))
                    .isEqualTo(404);
            assertThat(send("/me", "198.51.100.50", null, null)).isEqualTo(401);
            assertThat(send("/hello", "198.51.100.50", "bob", "bob")).isIn(200, 429);
        }
        assertThat(send("/me", "198.51.100.50", "bob", "bob")).isEqualTo(200);
        // The address still has all ten of its failed logins.
        int checked = 0;
        for (int i = 0; i < 11; i++) {
            checked += send("/me", "198.51.100.50", "user-" + i, "guess") == 401 ? 1 : 0;
        }
        assertThat(checked).isEqualTo(10);
    }
}
