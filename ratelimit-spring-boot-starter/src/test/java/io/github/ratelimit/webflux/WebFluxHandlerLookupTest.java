package io.github.ratelimit.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.spring.boot.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.testing.ManualClock;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * Spring WebFlux on a real Reactor Netty port: the handler whose rules the filter decides is the one each request
 * reaches, whatever other clients sent before. One path mapped twice by {@code produces}, a JSON handler with a rule
 * and a text handler without: a request with two {@code Accept} header lines (text at a low weight, then JSON)
 * reaches the JSON handler, and later text-only requests still reach the text handler, with no rule.
 */
class WebFluxHandlerLookupTest {

    private static ConfigurableApplicationContext context;
    private static int port;
    private final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @BeforeAll
    static void start() {
        context = WebFluxApps.start(App.class);
        port = ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    @AfterAll
    static void stop() {
        context.close();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Negotiated.class)
    static class App {

        /** Time stands still: the rule's tokens never refill during the test. */
        @Bean(RateLimitAutoConfiguration.TIME_METER_BEAN)
        ManualClock rateLimitTimeMeter() {
            return new ManualClock();
        }
    }

    @RestController
    static class Negotiated {
        @GetMapping(path = "/negotiated", produces = "application/json")
        @RateLimit(name = "negotiated-json", key = "header:X-Client", perMinute = 3)
        Mono<String> json() {
            return Mono.just("{}");
        }

        @GetMapping(path = "/negotiated", produces = "text/plain")
        Mono<String> text() {
            return Mono.just("text");
        }
    }

    /** A request to {@code /negotiated} from {@code client}, with one {@code Accept} header line per value. */
    private HttpResponse<String> negotiated(String client, String... accept) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/negotiated"))
                .header("X-Client", client);
        for (String line : accept) {
            request.header("Accept", line);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aRequestWithTwoAcceptLinesDoesNotMakeOthersCountAgainstTheHandlerItReached() throws Exception {
        HttpResponse<String> attack = negotiated("attacker", "text/plain;q=0.35", "application/json");
        assertThat(attack.statusCode()).isEqualTo(200);
        assertThat(attack.body())
                .as("WebFlux reads both lines: JSON is preferred")
                .isEqualTo("{}");
        List<Integer> statuses = new ArrayList<>();
        List<String> policies = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            HttpResponse<String> text = negotiated("victim", "text/plain;q=0.35");
            statuses.add(text.statusCode());
            text.headers().firstValue("RateLimit-Policy").ifPresent(policies::add);
            if (text.statusCode() == 200) {
                assertThat(text.body()).isEqualTo("text");
            }
        }
        assertThat(statuses)
                .as("ten text requests: their handler has no rule")
                .containsExactlyElementsOf(Collections.nCopies(10, 200));
        assertThat(policies).as("no rule reported on the text requests").isEmpty();
        for (int i = 0; i < 3; i++) {
            assertThat(negotiated("victim", "application/json").statusCode())
                    .as("json request %d", i)
                    .isEqualTo(200);
        }
        HttpResponse<String> fourth = negotiated("victim", "application/json");
        assertThat(fourth.statusCode())
                .as("the victim's JSON rule is whole, and still applies")
                .isEqualTo(429);
        assertThat(fourth.body()).contains("rule 'negotiated-json'");
    }
}
