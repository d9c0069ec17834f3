package io.github.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimit;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code ratelimit.shadow=true}, a dry run, over real HTTP: a URL rule and a handler's {@code @RateLimit} that would
 * reject let every request through, write no header that claims a limit, and count what they would have rejected
 * as {@code shadow_rejected} in the metrics.
 */
@SpringBootTest(
        classes = DryRunOverHttpTest.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "ratelimit.shadow=true",
            "ratelimit.rules[0].name=site",
            "ratelimit.rules[0].paths=/api/**",
            "ratelimit.rules[0].key=ip",
            "ratelimit.rules[0].limits=2/1h",
            "ratelimit.rules[1].name=items",
            "ratelimit.rules[1].paths=/items",
            "ratelimit.rules[1].key=ip",
            "ratelimit.rules[1].limits=10/1m",
            "ratelimit.rules[1].permits=header:X-Items"
        })
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

            @GetMapping("/items")
            String items() {
                return "items";
            }

            @PostMapping("/batch")
            @RateLimit(name = "batch", key = "ip", perMinute = 10, permits = "#items.size()")
            String batch(@RequestBody List<String> items) {
                return "took " + items.size();
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
            HttpResponse<String> response = http.send(
                    HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/api/hello"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as("request %d", i).isEqualTo(200);
            assertThat(response.headers().map().keySet())
                    .as("request %d", i)
                    .noneMatch(name -> name.toLowerCase().startsWith("ratelimit")
                            || name.toLowerCase().startsWith("x-ratelimit")
                            || name.equalsIgnoreCase("retry-after"));
        }
        assertThat(registry.get("ratelimit.requests")
                        .tag("rule", "hello")
                        .tag("outcome", "shadow_rejected")
                        .counter()
                        .count())
                .as("hello allows one an hour")
                .isEqualTo(3);
        assertThat(registry.get("ratelimit.requests")
                        .tag("rule", "site")
                        .tag("outcome", "shadow_rejected")
                        .counter()
                        .count())
                .as("site allows two an hour")
                .isEqualTo(2);
    }

    /**
     * A call no window could hold is answered 413 without the dry run; with it, the handler answers and the rule counts
     * what it would have rejected. (Issue 33, item 3: 413, and no metric counted it.)
     */
    @Test
    void aCallNoWindowCouldHoldReachesTheHandlerAndIsCounted() throws Exception {
        HttpResponse<String> header = http.send(
                HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/items"))
                        .header("X-Items", "11")
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(header.statusCode()).isEqualTo(200);
        assertThat(header.body()).isEqualTo("items");
        String eleven = "[" + "\"x\",".repeat(10) + "\"x\"]";
        HttpResponse<String> batch = http.send(
                HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/batch"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(eleven))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(batch.statusCode()).isEqualTo(200);
        assertThat(batch.body()).isEqualTo("took 11");
        assertThat(registry.get("ratelimit.requests")
                        .tag("rule", "items")
                        .tag("outcome", "shadow_rejected")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("ratelimit.requests")
                        .tag("rule", "batch")
                        .tag("outcome", "shadow_rejected")
                        .counter()
                        .count())
                .isEqualTo(1);
    }
}
