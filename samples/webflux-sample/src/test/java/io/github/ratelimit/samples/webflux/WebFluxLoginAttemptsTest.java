package io.github.ratelimit.samples.webflux;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's limits on password guessing over real HTTP, with Spring Security's reactive HTTP Basic: the rules
 * decide before Spring Security's chain, and only failed logins (401) keep their token. A fresh application per
 * test (a user name locked by one must not lock it for the next).
 */
class WebFluxLoginAttemptsTest {

    private ConfigurableApplicationContext app;
    private WebTestClient client;

    @BeforeEach
    void start() {
        app = SpringApplication.run(WebFluxSampleApplication.class, "--server.port=0",
                "--ratelimit.trusted-proxies=127.0.0.1,::1");
        client = WebFluxSampleTest.clientOf(app);
    }

    @AfterEach
    void stop() {
        app.close();
    }

    private int me(String ip, String user, String password) {
        return client.get().uri("/api/me").header("X-Forwarded-For", ip)
                .headers(h -> h.setBasicAuth(user, password)).exchange().expectBody(String.class).returnResult().getStatus().value();
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
