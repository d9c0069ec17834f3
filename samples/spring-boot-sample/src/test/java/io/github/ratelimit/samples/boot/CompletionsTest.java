package io.github.ratelimit.samples.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The sample's charging of what a call used, over real HTTP: {@code GET /api/complete?tokens=N} is charged N tokens
 * of rule {@code completions} (1000 a minute per address) once it has returned. Each test has its own address.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "ratelimit.trusted-proxies=127.0.0.1,::1")
class CompletionsTest {

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> complete(String ip, String tokens) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/api/complete?tokens=" + tokens))
                        .timeout(Duration.ofSeconds(10))
                        .header("X-Forwarded-For", ip)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void twoCallsOf600PassAndTheThirdWaitsOutTheDebt() throws Exception {
        for (int i = 0; i < 2; i++) {
            HttpResponse<String> ok = complete("198.51.100.21", "600");
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).isEqualTo("{\"usage\":{\"totalTokens\":600}}");
        }
        HttpResponse<String> third = complete("198.51.100.21", "600");
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(third.body()).contains("rule 'completions'");
        // 200 tokens of debt and the next call's 1, at 1000 a minute: 12.06 s, give or take the test's own time.
        assertThat(third.headers().firstValue("Retry-After").map(Long::parseLong))
                .hasValueSatisfying(s -> assertThat(s).isBetween(11L, 13L));
        assertThat(complete("198.51.100.22", "600").statusCode())
                .as("another address")
                .isEqualTo(200);
    }

    @Test
    void refusesTokensOutOfRangeWith400AndKeepsTheEstimate() throws Exception {
        for (String bad : new String[] {"-1", "100001", "lots", "", "9223372036854775808"}) {
            HttpResponse<String> r = complete("198.51.100.24", bad);
            assertThat(r.statusCode()).as(bad).isEqualTo(400);
            assertThat(r.body()).startsWith("tokens must be a whole number from 0 to 100000");
        }
        HttpResponse<String> next = complete("198.51.100.24", "990");
        assertThat(next.statusCode()).isEqualTo(200);
        // 5 refused calls kept their estimate, 1 each, and no more: at least 994 left once this one took its 1 (the
        // bucket refills a token every 60 ms, so a slow run sees more; the exact count is ChargeContract's, on a
        // clock of its own).
        Matcher left = Pattern.compile("\"completions-1m\";r=(\\d+);")
                .matcher(next.headers().firstValue("RateLimit").orElse(""));
        assertThat(left.find()).isTrue();
        assertThat(Long.parseLong(left.group(1))).isBetween(994L, 999L);
    }
}
