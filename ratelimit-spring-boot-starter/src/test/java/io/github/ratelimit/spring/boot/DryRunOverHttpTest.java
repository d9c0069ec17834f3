package io.github.ratelimit.spring.boot;

import io.github.ratelimit.RateLimit;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit.shadow=true}, a dry run, over real HTTP: a URL rule and a handler's {@code @RateLimit} that would
 * reject let every request through, write no header that claims a limit, and count what they would have rejected
 * as {@code shadow_rejected} in the metrics.
 */
@SpringBootTest(classes = DryRunOverHttpTest.App.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"ratelimit.shadow=true", "ratelimit.rules[0].name=site", "ratelimit.rules[0].paths=/api/**",
                "ratelimit.rules[0].key=ip", "ratelimit.rules[0].limits=2/1h"})
class DryRunOverHttpTest {

    @SpringBootApplication
    static class App {
        @RestController
        static class Api {
            @GetMapping("/api/hello")
            @RateLimit(name = "hello", key = "ip", perHour = 1)
            String hello() {
                return "hello";
            }
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    MeterRegistry registry;

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void rulesThatWouldRejectOnlyCountIt() throws Exception {
        for (int i = 0; i < 4; i++) {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(
                    URI.create("http://localhost:" + port + "/api/hello")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as("request %d", i).isEqualTo(200);
            assertThat(response.headers().map().keySet()).as("request %d", i)
                    .noneMatch(name -> name.toLowerCase().startsWith("ratelimit")
                            || name.toLowerCase().startsWith("x-ratelimit") || name.equalsIgnoreCase("retry-after"));
        }
        assertThat(registry.get("ratelimit.requests").tag("rule", "hello").tag("outcome", "shadow_rejected")
                .counter().count()).as("hello allows one an hour").isEqualTo(3);
        assertThat(registry.get("ratelimit.requests").tag("rule", "site").tag("outcome", "shadow_rejected")
                .counter().count()).as("site allows two an hour").isEqualTo(2);
    }
}
