package io.github.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimit;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.Rule.Counted;
import io.github.ratelimit.internal.config.RateLimitSettings;
import io.github.ratelimit.spring.boot.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.testing.RateLimitFields;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * Under Spring MVC the filter's URL rules and the handler's {@code @RateLimit} decide a request together, over real
 * HTTP: one decision (one listener event), and a call the handler's rule rejects costs the URL rules nothing.
 * Every test counts by an address of its own (the test's client is a trusted proxy).
 */
@SpringBootTest(
        classes = OneDecisionPerRequestTest.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "ratelimit.trusted-proxies=127.0.0.1,::1",
            "ratelimit.rules[0].name=api",
            "ratelimit.rules[0].paths=/api/**",
            "ratelimit.rules[0].key=ip",
            "ratelimit.rules[0].limits=10/1m",
            "ratelimit.rules[1].name=tenants",
            "ratelimit.rules[1].paths=/tenant/**",
            "ratelimit.rules[1].key=#request.getHeader('X-Tenant')",
            "ratelimit.rules[1].limits=2/1m",
            "ratelimit.rules[2].name=soft-verify",
            "ratelimit.rules[2].paths=/soft/verify",
            "ratelimit.rules[2].key=ip",
            "ratelimit.rules[2].limits=1/1s",
            "ratelimit.rules[2].mode=soft",
            "ratelimit.rules[2].max-delay=5s"
        })
class OneDecisionPerRequestTest {

    @SpringBootApplication
    static class App {

        @Bean
        RateLimiter.Listener recordingListener() {
            return DECISIONS::add;
        }

        /** Time stands still: a rule's tokens refill only when a test says so, however slow the machine. */
        @Bean(RateLimitAutoConfiguration.TIME_METER_BEAN)
        io.github.ratelimit.testing.ManualClock rateLimitTimeMeter() {
            return new io.github.ratelimit.testing.ManualClock();
        }

        @Service
        static class Upstream {
            @RateLimit(name = "upstream", perSecond = 1000)
            String fetch() {
                return "quote";
            }

            @RateLimit(perMinute = 1)
            String scarce() {
                return "scarce";
            }
        }

        @RestController
        static class Api {
            private final Upstream upstream;

            Api(Upstream upstream) {
                this.upstream = upstream;
            }

            @GetMapping("/api/limited")
            @RateLimit(name = "limited", key = "ip", perMinute = 5)
            String limited() {
                return "limited";
            }

            /** Spring MVC subscribes to the Mono at once: decided once, by the filter, like any handler. */
            @GetMapping("/api/limited-mono")
            @RateLimit(name = "limited-mono", key = "ip", perMinute = 3)
            reactor.core.publisher.Mono<String> limitedMono() {
                return reactor.core.publisher.Mono.just("limited");
            }

            @GetMapping("/api/open")
            String open() {
                return "open";
            }

            @GetMapping("/api/items/{id}")
            @RateLimit(name = "item", key = "#id", perMinute = 2)
            String item(@PathVariable String id) {
                return "item " + id;
            }

            @PostMapping("/api/verify")
            @RateLimit(name = "verify", key = "ip", perMinute = 2, count = Counted.FAILURES)
            String verify(@RequestParam String code) {
                if (!"right".equals(code)) {
                    throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "wrong code");
                }
                return "verified";
            }

            @GetMapping("/api/quote")
            String quote() {
                return upstream.fetch();
            }

            @GetMapping("/tenant/data")
            String tenant() {
                return "data";
            }

            @GetMapping("/api/scarce")
            String scarce() {
                return upstream.scarce();
            }

            @GetMapping("/api/t/{tenant}/data")
            @RateLimit(
                    name = "by-path-variable",
                    key =
                            "#request.getAttribute('org.springframework.web.servlet.HandlerMapping.uriTemplateVariables')['tenant']",
                    perMinute = 2)
            String byPathVariable(@PathVariable String tenant) {
                return tenant;
            }

            @PostMapping("/soft/verify")
            @RateLimit(name = "soft-verify-failures", key = "ip", perMinute = 2, count = Counted.FAILURES)
            String softVerify() {
                return "verified";
            }

            @GetMapping("/api/forwarding")
            void forwarding(
                    jakarta.servlet.http.HttpServletRequest request, jakarta.servlet.http.HttpServletResponse response)
                    throws Exception {
                request.getRequestDispatcher("/api/items/99").forward(request, response);
            }
        }
    }

    static final List<Decision> DECISIONS = new CopyOnWriteArrayList<>();

    @LocalServerPort
    int port;

    @Autowired
    RateLimitSettings settings;

    @Autowired
    io.github.ratelimit.testing.ManualClock clock;

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> send(String method, String path, String client, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .timeout(Duration.ofSeconds(10))
                .header("X-Forwarded-For", client)
                .method(method, HttpRequest.BodyPublishers.noBody());
        if (headers.length > 0) {
            request.headers(headers);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String path, String client, String... headers) throws Exception {
        return send("GET", path, client, headers);
    }

    @Test
    void callsTheHandlersRuleRejectsCostTheUrlRuleNothing() throws Exception {
        String client = "198.51.100.1";
        int decisionsBefore = DECISIONS.size();
        int admitted = 0;
        for (int i = 0; i < 8; i++) {
            HttpResponse<String> response = get("/api/limited", client);
            assertThat(response.statusCode()).isIn(200, 429);
            if (response.statusCode() == 200) {
                admitted++;
            } else {
                assertThat(response.body()).contains("rule 'limited'");
                // The binding item says when to come back, as Retry-After does.
                long retryAfter = Long.parseLong(
                        response.headers().firstValue("Retry-After").orElseThrow());
                assertThat(RateLimitFields.parse(
                                        response.headers()
                                                .firstValue("RateLimit")
                                                .orElseThrow(),
                                        "r",
                                        "t")
                                .get("limited-1m"))
                        .isEqualTo(Map.of("r", 0L, "t", retryAfter));
                assertThat(retryAfter).as("5 per minute, time standing still").isEqualTo(12L);
            }
        }
        assertThat(admitted).isEqualTo(5);
        assertThat(DECISIONS.size() - decisionsBefore)
                .as("one decision per request")
                .isEqualTo(8);
        // The URL rule (10/min) paid for the 5 admitted calls only: 5 more pass it.
        for (int i = 0; i < 5; i++) {
            assertThat(get("/api/open", client).statusCode()).as("call %d", i).isEqualTo(200);
        }
        HttpResponse<String> eleventh = get("/api/open", client);
        assertThat(eleventh.statusCode()).isEqualTo(429);
        assertThat(eleventh.body()).contains("rule 'api'");
    }

    @Test
    void oneResponseReportsTheUrlRuleAndTheHandlersRule() throws Exception {
        HttpResponse<String> response = get("/api/limited", "198.51.100.2");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("RateLimit-Policy"))
                .hasValue("\"api-1m\";q=10;w=60, \"limited-1m\";q=5;w=60");
    }

    @Test
    void aHandlerReturningAMonoIsDecidedOnceWithTheUrlRules() throws Exception {
        String client = "198.51.100.31";
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> response = get("/api/limited-mono", client);
            assertThat(response.statusCode()).as("request %d", i).isEqualTo(200);
            assertThat(response.headers().firstValue("X-RateLimit-Remaining")).hasValue(String.valueOf(2 - i));
        }
        assertThat(get("/api/limited-mono", client).statusCode()).isEqualTo(429);
    }

    @Test
    void headRequestsAreDecidedWithTheGetHandlersRule() throws Exception {
        String client = "198.51.100.3";
        for (int i = 0; i < 5; i++) {
            assertThat(send("HEAD", "/api/limited", client).statusCode()).isEqualTo(200);
        }
        assertThat(send("HEAD", "/api/limited", client).statusCode()).isEqualTo(429);
        assertThat(get("/api/limited", client).statusCode()).isEqualTo(429);
    }

    @Test
    void aHandlerWhoseKeyReadsItsArgumentsIsDecidedAtTheCallAndRefundsTheFilter() throws Exception {
        String client = "198.51.100.4";
        assertThat(get("/api/items/7", client).statusCode()).isEqualTo(200);
        assertThat(get("/api/items/7", client).statusCode()).isEqualTo(200);
        for (int i = 0; i < 6; i++) {
            HttpResponse<String> rejected = get("/api/items/7", client);
            assertThat(rejected.statusCode()).isEqualTo(429);
            assertThat(rejected.body()).contains("rule 'item'");
            assertThat(rejected.headers().firstValue("RateLimit-Policy"))
                    .hasValue("\"api-1m\";q=10;w=60, \"item-1m\";q=2;w=60");
        }
        assertThat(get("/api/items/8", client).statusCode()).as("another item").isEqualTo(200);
        // The URL rule paid for 3 calls, not 9: 7 more pass it.
        for (int i = 0; i < 7; i++) {
            assertThat(get("/api/open", client).statusCode()).as("call %d", i).isEqualTo(200);
        }
        assertThat(get("/api/open", client).statusCode()).isEqualTo(429);
    }

    @Test
    void aRejectionAtTheCallReportsTheUrlRuleWithItsTokenBack() throws Exception {
        assertThat(get("/api/items/41", "198.51.100.40").statusCode()).isEqualTo(200);
        assertThat(get("/api/items/41", "198.51.100.40").statusCode()).isEqualTo(200);
        // Another client's first call: the URL rule took its token, the handler's rule refused the call, and the
        // token came back, so its window is full again.
        HttpResponse<String> rejected = get("/api/items/41", "198.51.100.41");
        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(RateLimitFields.parse(
                        rejected.headers().firstValue("RateLimit").orElseThrow(), "r", "t"))
                .containsEntry("api-1m", Map.of("r", 10L, "t", 0L));
    }

    @Test
    void aHandlerCountingFailuresDecidedInTheFilterKeepsTheTokensOfCallsThatThrow() throws Exception {
        String client = "198.51.100.5";
        for (int i = 0; i < 5; i++) {
            assertThat(send("POST", "/api/verify?code=right", client).statusCode())
                    .as("right %d", i)
                    .isEqualTo(200);
        }
        assertThat(send("POST", "/api/verify?code=wrong", client).statusCode()).isEqualTo(400);
        assertThat(send("POST", "/api/verify?code=wrong", client).statusCode()).isEqualTo(400);
        HttpResponse<String> third = send("POST", "/api/verify?code=right", client);
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(third.body()).contains("rule 'verify'");
    }

    @Test
    void aServiceMethodsRuleStaysOutOfTheResponseHeaders() throws Exception {
        int decisionsBefore = DECISIONS.size();
        HttpResponse<String> response = get("/api/quote", "198.51.100.6");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("quote");
        assertThat(DECISIONS.size() - decisionsBefore)
                .as("the URL rule's, and the service's own")
                .isEqualTo(2);
        assertThat(response.headers().firstValue("RateLimit-Policy")).hasValue("\"api-1m\";q=10;w=60");
        assertThat(response.headers().allValues("RateLimit").toString()).doesNotContain("upstream");
        assertThat(settings.methodHeaders()).isFalse();
    }

    @Test
    void aUrlRuleKeyReadsTheRequestWithSpel() throws Exception {
        assertThat(get("/tenant/data", "198.51.100.7", "X-Tenant", "acme").statusCode())
                .isEqualTo(200);
        assertThat(get("/tenant/data", "198.51.100.8", "X-Tenant", "acme").statusCode())
                .isEqualTo(200);
        assertThat(get("/tenant/data", "198.51.100.9", "X-Tenant", "acme").statusCode())
                .isEqualTo(429);
        assertThat(get("/tenant/data", "198.51.100.9", "X-Tenant", "globex").statusCode())
                .isEqualTo(200);
    }

    @Test
    void aHandlerKeyReadsThePathVariablesTheLookupFound() throws Exception {
        int decisionsBefore = DECISIONS.size();
        assertThat(get("/api/t/acme/data", "198.51.100.30").statusCode()).isEqualTo(200);
        assertThat(get("/api/t/acme/data", "198.51.100.31").statusCode()).isEqualTo(200);
        HttpResponse<String> third = get("/api/t/acme/data", "198.51.100.32");
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(third.body()).contains("rule 'by-path-variable'");
        assertThat(get("/api/t/globex/data", "198.51.100.32").statusCode()).isEqualTo(200);
        assertThat(DECISIONS.size() - decisionsBefore)
                .as("decided by the filter, once each")
                .isEqualTo(4);
    }

    @Test
    void aServiceMethodsRejectionSaysWhenToComeBackButNotWhichMethod() throws Exception {
        assertThat(get("/api/scarce", "198.51.100.33").statusCode()).isEqualTo(200);
        HttpResponse<String> rejected = get("/api/scarce", "198.51.100.33");
        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(rejected.headers().firstValue("Retry-After")).hasValue("60");
        assertThat(rejected.body())
                .contains("rule 'internal'")
                .doesNotContain("Upstream")
                .doesNotContain("#scarce");
        assertThat(rejected.headers().allValues("RateLimit").toString()).doesNotContain("Upstream");
        assertThat(rejected.headers().firstValue("RateLimit-Policy")).hasValue("\"api-1m\";q=10;w=60");
    }

    @Test
    void aSoftDelayThenAHandlerCountingFailuresGivesBackTheTokensOfSuccesses() throws Exception {
        String client = "198.51.100.34";
        for (int i = 0; i < 4; i++) {
            var pending = http.sendAsync(
                    HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/soft/verify"))
                            .timeout(Duration.ofSeconds(20))
                            .header("X-Forwarded-For", client)
                            .POST(HttpRequest.BodyPublishers.noBody())
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            org.awaitility.Awaitility.await("success %d, after its delay".formatted(i))
                    .atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(5))
                    .until(() -> {
                        if (clock.pendingTimers() > 0) {
                            clock.advance(Duration.ofSeconds(1)); // the SOFT rule's delay passes
                        }
                        return pending.isDone();
                    });
            assertThat(pending.get().statusCode())
                    .as("success %d, after its delay", i)
                    .isEqualTo(200);
        }
    }

    @Test
    void aRejectionAfterAForwardDoesNotRefundTheRequestThatForwarded() throws Exception {
        String client = "198.51.100.35";
        assertThat(get("/api/items/99", client).statusCode()).isEqualTo(200);
        assertThat(get("/api/items/99", client).statusCode()).isEqualTo(200);
        assertThat(get("/api/forwarding", client).statusCode())
                .as("the forward target's rule rejects")
                .isEqualTo(429);
        // The URL rule paid for the three requests that reached a handler: 7 of its 10 are left.
        for (int i = 0; i < 7; i++) {
            assertThat(get("/api/open", client).statusCode()).as("call %d", i).isEqualTo(200);
        }
        assertThat(get("/api/open", client).statusCode()).isEqualTo(429);
    }
}
