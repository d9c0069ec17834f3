package io.github.ratelimit.spring.boot.charging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.CallTooLargeException;
import io.github.ratelimit.RateLimit;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * Charging by size and by outcome in a Spring MVC application, over real HTTP, run against each store by a subclass:
 * {@code @RateLimit(permits = "#items.size()")} on a handler and on a service bean, a URL rule's {@code permits} from a
 * header, a URL rule with {@code count=statuses:404,5xx}, and exemptions ({@code ratelimit.exempt}, a rule's
 * {@code exempt}), which charge nothing. Each test has its own client address.
 */
@SpringBootTest(
        classes = ChargingOverHttpContract.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "ratelimit.trusted-proxies=127.0.0.1,::1",
            "ratelimit.rules[0].name=site",
            "ratelimit.rules[0].paths=/c/**",
            "ratelimit.rules[0].key=ip",
            "ratelimit.rules[0].limits=100/1m",
            "ratelimit.rules[1].name=upload",
            "ratelimit.rules[1].paths=/c/upload",
            "ratelimit.rules[1].key=ip",
            "ratelimit.rules[1].limits=5/1m",
            "ratelimit.rules[1].permits=header:X-Items",
            "ratelimit.rules[2].name=errors",
            "ratelimit.rules[2].paths=/c/status/**",
            "ratelimit.rules[2].key=ip",
            "ratelimit.rules[2].limits=3/1m",
            "ratelimit.rules[2].count=statuses:404,5xx",
            "ratelimit.exempt=203.0.113.0/24",
            "ratelimit.rules[0].exempt=192.0.2.99",
            "ratelimit.rules[3].name=pre",
            "ratelimit.rules[3].paths=/c/upload",
            "ratelimit.rules[3].key=ip",
            "ratelimit.rules[3].limits=100/1m",
            "ratelimit.rules[3].phase=before-authentication"
        })
abstract class ChargingOverHttpContract {

    @SpringBootApplication
    static class App {
        @RestController
        static class Api {
            private final Items items;

            Api(Items items) {
                this.items = items;
            }

            @PostMapping("/c/batch")
            @RateLimit(name = "batch", key = "ip", perMinute = 10, permits = "#items.size()")
            String batch(@RequestBody List<String> items) {
                return "accepted " + items.size();
            }

            @PostMapping("/c/upload")
            String upload() {
                return "uploaded";
            }

            @GetMapping("/c/status/{code}")
            String status(@PathVariable int code) {
                if (code == 200) {
                    return "fine";
                }
                throw new ResponseStatusException(HttpStatus.valueOf(code));
            }

            @GetMapping("/c/boom")
            String boom() {
                throw new IllegalStateException("the handler failed");
            }
        }

        @Service
        static class Items {
            @RateLimit(name = "items-service", key = "#tenant", perHour = 6, permits = "#count")
            String take(String tenant, int count) {
                return tenant + " took " + count;
            }
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    App.Items items;

    @Autowired
    io.micrometer.core.instrument.MeterRegistry registry;

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> send(String method, String path, String ip, String body, String... headers)
            throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .timeout(Duration.ofSeconds(10))
                .header("X-Forwarded-For", ip)
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> batch(String ip, int n) throws Exception {
        StringBuilder json = new StringBuilder("[");
        for (int i = 0; i < n; i++) {
            json.append(i == 0 ? "" : ",").append("\"i").append(i).append('"');
        }
        return send("POST", "/c/batch", ip, json.append(']').toString());
    }

    /** @return the remaining of the site rule's window, as the RateLimit header reports it */
    private static String siteRemaining(HttpResponse<String> r) {
        String header = r.headers().firstValue("RateLimit").orElse("");
        int at = header.indexOf("\"site-1m\";r=");
        return at < 0 ? null : header.substring(at + 12).split(";")[0];
    }

    @Test
    void anAnnotatedHandlerChargesTheArraysSize() throws Exception {
        String ip = "192.0.2.1";
        HttpResponse<String> seven = batch(ip, 7);
        assertThat(seven.statusCode()).isEqualTo(200);
        assertThat(seven.headers().firstValue("RateLimit"))
                .hasValueSatisfying(v -> assertThat(v).contains("\"batch-1m\";r=3;"));
        HttpResponse<String> four = batch(ip, 4);
        assertThat(four.statusCode()).isEqualTo(429);
        assertThat(four.headers().firstValue("Retry-After")).contains("6");
        assertThat(batch(ip, 3).statusCode()).isEqualTo(200);
        HttpResponse<String> eleven = batch("192.0.2.2", 11);
        assertThat(eleven.statusCode()).isEqualTo(413);
        assertThat(eleven.body()).contains("\"status\":413").contains("'batch'").contains("at most 10");
        HttpResponse<String> after = batch("192.0.2.2", 1);
        assertThat(siteRemaining(after))
                .as("the refused call's site token came back")
                .isEqualTo("99");
    }

    @Test
    void aUrlRuleReadsItsPermitsFromAHeader() throws Exception {
        String ip = "192.0.2.3";
        assertThat(send("POST", "/c/upload", ip, null, "X-Items", "3").statusCode())
                .isEqualTo(200);
        assertThat(send("POST", "/c/upload", ip, null, "X-Items", "3").statusCode())
                .isEqualTo(429);
        assertThat(send("POST", "/c/upload", ip, null, "X-Items", "2").statusCode())
                .isEqualTo(200);
        HttpResponse<String> six = send("POST", "/c/upload", "192.0.2.4", null, "X-Items", "6");
        assertThat(six.statusCode()).isEqualTo(413);
        assertThat(six.body()).contains("'upload'");
        HttpResponse<String> one = send("POST", "/c/upload", "192.0.2.6", null, "X-Items", "1");
        assertThat(one.headers().firstValue("RateLimit").orElse(""))
                .as("the first request of its address")
                .contains("\"pre-1m\";r=99");
        assertThat(send("POST", "/c/upload", "192.0.2.6", null, "X-Items", "6").statusCode())
                .isEqualTo(413);
        assertThat(send("POST", "/c/upload", "192.0.2.6", null, "X-Items", "1")
                        .headers()
                        .firstValue("RateLimit")
                        .orElse(""))
                .as("the 413 gave back what the filter before authentication took")
                .contains("\"pre-1m\";r=98");
        for (String garbage : List.of("-1", "2.5", "lots", "-99999999999999999999")) {
            assertThat(send("POST", "/c/upload", "192.0.2.4", null, "X-Items", garbage)
                            .statusCode())
                    .as("'%s': no whole number: refused, never a 500", garbage)
                    .isEqualTo(429);
        }
        assertThat(send("POST", "/c/upload", "192.0.2.4", null, "X-Items", "5").statusCode())
                .as("nothing was taken")
                .isEqualTo(200);
    }

    /** 19 digits and more are a count too large for any window (413), not a missing one; leading zeros are no digits. */
    @Test
    void aCountTooLargeForALongIsACallTooLarge() throws Exception {
        String ip = "192.0.2.7";
        for (String huge : List.of("9223372036854775808", "99999999999999999999", "1" + "0".repeat(100))) {
            HttpResponse<String> r = send("POST", "/c/upload", ip, null, "X-Items", huge);
            assertThat(r.statusCode()).as("'%s'", huge).isEqualTo(413);
            assertThat(r.body()).contains("'upload'").contains("at most 5");
        }
        assertThat(send("POST", "/c/upload", ip, null, "X-Items", "0000000000000000000005")
                        .statusCode())
                .as("22 characters, the whole number 5, and nothing taken before")
                .isEqualTo(200);
        assertThat(send("POST", "/c/upload", ip, null, "X-Items", "1").statusCode())
                .isEqualTo(429);
    }

    @Test
    void onlyTheCountedStatusesKeepTheirTokens() throws Exception {
        String ip = "192.0.2.5";
        for (int i = 0; i < 8; i++) {
            assertThat(send("GET", "/c/status/200", ip, null).statusCode()).isEqualTo(200);
            assertThat(send("GET", "/c/status/403", ip, null).statusCode()).isEqualTo(403);
        }
        assertThat(send("GET", "/c/status/404", ip, null).statusCode()).isEqualTo(404);
        assertThat(send("GET", "/c/status/503", ip, null).statusCode()).isEqualTo(503);
        assertThat(send("GET", "/c/status/404", ip, null).statusCode()).isEqualTo(404);
        HttpResponse<String> over = send("GET", "/c/status/200", ip, null);
        assertThat(over.statusCode()).isEqualTo(429);
        assertThat(over.headers().firstValue("Retry-After")).contains("20");
    }

    @Test
    void aServiceBeanChargesItsArgument() {
        String tenant = "t-" + UUID.randomUUID();
        assertThat(items.take(tenant, 4)).isEqualTo(tenant + " took 4");
        assertThatThrownBy(() -> items.take(tenant, 3))
                .isInstanceOf(io.github.ratelimit.RateLimitExceededException.class);
        assertThat(items.take(tenant, 2)).isEqualTo(tenant + " took 2");
        assertThatThrownBy(() -> items.take("other", 7))
                .isInstanceOf(CallTooLargeException.class)
                .hasMessageContaining("items-service");
    }

    @Test
    void anExemptClientIsChargedNothing() throws Exception {
        for (int i = 0; i < 12; i++) {
            HttpResponse<String> upload = send("POST", "/c/upload", "203.0.113.9", null, "X-Items", "5");
            assertThat(upload.statusCode())
                    .as("upload %d: 5 a minute for others", i)
                    .isEqualTo(200);
            assertThat(upload.headers().firstValue("RateLimit"))
                    .as("no window is claimed")
                    .isEmpty();
            assertThat(batch("203.0.113.9", 10).statusCode()).as("batch %d", i).isEqualTo(200);
        }
        assertThat(registry.get("ratelimit.requests")
                        .tag("rule", "upload")
                        .tag("basis", "exempt")
                        .counter()
                        .count())
                .isGreaterThanOrEqualTo(12);
        assertThat(send("POST", "/c/upload", "203.0.114.9", null, "X-Items", "5")
                        .statusCode())
                .isEqualTo(200);
        assertThat(send("POST", "/c/upload", "203.0.114.9", null, "X-Items", "5")
                        .statusCode())
                .as("an address outside the range")
                .isEqualTo(429);
    }

    @Test
    void aRuleExemptionFreesThatRuleOnly() throws Exception {
        HttpResponse<String> r = send("GET", "/c/status/200", "192.0.2.99", null);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("RateLimit-Policy").orElse(""))
                .as("site does not count this client")
                .doesNotContain("site");
        HttpResponse<String> upload = send("POST", "/c/upload", "192.0.2.99", null, "X-Items", "5");
        assertThat(upload.headers().firstValue("RateLimit").orElse(""))
                .contains("\"upload-1m\";r=0")
                .doesNotContain("site");
        assertThat(send("POST", "/c/upload", "192.0.2.99", null, "X-Items", "1").statusCode())
                .as("upload still limits it")
                .isEqualTo(429);
    }
}
