package io.github.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.spring.boot.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.testing.ManualClock;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code block-for} over real HTTP (Spring MVC, the local store): a key a rule refused gets 429 with
 * {@code Retry-After} the block's remaining time after its bucket has refilled, for an annotated handler and for a URL
 * rule counting failed logins; the metrics tell the block from the limit; the Actuator's reset lifts it.
 */
@SpringBootTest(
        classes = BlockOverHttpTest.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "ratelimit.rules[0].name=logins",
            "ratelimit.rules[0].paths=/login",
            "ratelimit.rules[0].key=header:X-User",
            "ratelimit.rules[0].limits=5/15m",
            "ratelimit.rules[0].count=failures",
            "ratelimit.rules[0].block-for=15m",
            "management.endpoints.web.exposure.include=ratelimitkeys",
            "management.endpoint.ratelimitkeys.access=unrestricted"
        })
class BlockOverHttpTest {

    @SpringBootApplication
    static class App {

        /** The limiter's clock: time stands still unless the test moves it. */
        @Bean(RateLimitAutoConfiguration.TIME_METER_BEAN)
        ManualClock rateLimitTimeMeter() {
            return new ManualClock();
        }

        @RestController
        static class Api {

            @GetMapping("/hello")
            @RateLimit(name = "hello", key = "header:X-User", perMinute = 2, blockFor = "10m")
            String hello() {
                return "hello";
            }

            @PostMapping("/login")
            ResponseEntity<String> login(@RequestHeader("X-Password") String password) {
                return password.equals("secret")
                        ? ResponseEntity.ok("welcome")
                        : ResponseEntity.status(HttpStatus.UNAUTHORIZED).body("no");
            }
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    ManualClock clock;

    @Autowired
    MeterRegistry registry;

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> send(String method, String path, String user, String password, String body)
            throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10))
                .header("X-User", user);
        if (password != null) {
            b.header("X-Password", password);
        }
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        b.method(
                method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private double blocked(String rule) {
        var counter = registry.find("ratelimit.requests")
                .tag("rule", rule)
                .tag("outcome", "rejected")
                .tag("basis", "blocked")
                .counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void anAnnotatedHandlerAnswers429WithTheRemainingBlockAfterTheBucketRefilled() throws Exception {
        assertThat(send("GET", "/hello", "carol", null, null).statusCode()).isEqualTo(200);
        assertThat(send("GET", "/hello", "carol", null, null).statusCode()).isEqualTo(200);
        HttpResponse<String> refused = send("GET", "/hello", "carol", null, null);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("600");

        clock.advance(Duration.ofMinutes(2));
        HttpResponse<String> blocked = send("GET", "/hello", "carol", null, null);
        assertThat(blocked.statusCode()).as("the bucket is full again").isEqualTo(429);
        assertThat(blocked.headers().firstValue("Retry-After")).hasValue("480");
        assertThat(blocked.headers().firstValue("X-RateLimit-Reset")).hasValue("480");
        assertThat(blocked.headers().firstValue("RateLimit")).hasValue("\"hello-1m\";r=0;t=480");
        assertThat(blocked.body()).contains("blocks this client").contains("\"retryAfter\":480");
        assertThat(blocked("hello")).isEqualTo(1);
        assertThat(send("GET", "/hello", "dave", null, null).statusCode())
                .as("another key")
                .isEqualTo(200);

        HttpResponse<String> reset =
                send("POST", "/actuator/ratelimitkeys/hello/carol", "ops", null, "{\"reset\":true}");
        assertThat(reset.statusCode()).as(reset.body()).isEqualTo(200);
        assertThat(send("GET", "/hello", "carol", null, null).statusCode())
                .as("the reset lifted the block")
                .isEqualTo(200);
    }

    @Test
    void aUrlRuleLocksAUserOutForFifteenMinutesAfterFiveWrongPasswords() throws Exception {
        for (int i = 0; i < 10; i++) {
            assertThat(send("POST", "/login", "alice", "secret", null).statusCode())
                    .as("right password %d", i)
                    .isEqualTo(200);
        }
        for (int i = 0; i < 5; i++) {
            assertThat(send("POST", "/login", "alice", "guess" + i, null).statusCode())
                    .as("wrong password %d", i)
                    .isEqualTo(401);
        }
        HttpResponse<String> locked = send("POST", "/login", "alice", "secret", null);
        assertThat(locked.statusCode()).as("the right password, sixth attempt").isEqualTo(429);
        assertThat(locked.headers().firstValue("Retry-After")).hasValue("900");

        clock.advance(Duration.ofMinutes(14));
        HttpResponse<String> still = send("POST", "/login", "alice", "secret", null);
        assertThat(still.statusCode())
                .as("locked out, though failures have refilled")
                .isEqualTo(429);
        assertThat(still.headers().firstValue("Retry-After")).hasValue("60");
        assertThat(blocked("logins")).isEqualTo(1);
        assertThat(send("POST", "/login", "bob", "secret", null).statusCode()).isEqualTo(200);

        clock.advance(Duration.ofMinutes(1));
        assertThat(send("POST", "/login", "alice", "secret", null).statusCode())
                .as("the lock-out is over")
                .isEqualTo(200);
    }
}
