package io.github.ratelimit.spring.boot.internal.web.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.spring.boot.autoconfigure.RateLimitAutoConfiguration;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The filter remembers what Spring MVC's handler lookup found by the request's shape: two handlers of one path that
 * differ by what they produce keep their own rules, request after request, over real HTTP, because the shape holds
 * every {@code Accept} header line; one client's request cannot make another's count against a rule its handler
 * does not have.
 */
@SpringBootTest(
        classes = HandlerLookupByShapeTest.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class HandlerLookupByShapeTest {

    @SpringBootApplication
    static class App {

        /** Time stands still: the rules' tokens never refill during the test. */
        @Bean(RateLimitAutoConfiguration.TIME_METER_BEAN)
        io.github.ratelimit.testing.ManualClock rateLimitTimeMeter() {
            return new io.github.ratelimit.testing.ManualClock();
        }

        @RestController
        static class Negotiated {
            @GetMapping(path = "/report", produces = "application/json")
            @RateLimit(name = "json", key = "global", perMinute = 2)
            String json() {
                return "{}";
            }

            @GetMapping(path = "/report", produces = "text/csv")
            @RateLimit(name = "csv", key = "global", perMinute = 1)
            String csv() {
                return "a,b";
            }

            @GetMapping(path = "/negotiated", produces = "application/json")
            @RateLimit(name = "negotiated-json", key = "header:X-Client", perMinute = 3)
            String negotiatedJson() {
                return "{}";
            }

            @GetMapping(path = "/negotiated", produces = "text/plain")
            String negotiatedText() {
                return "text";
            }
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    ListableBeanFactory beanFactory;

    private final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private HttpResponse<String> get(String accept) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/report"))
                        .header("Accept", accept)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
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
                .as("Spring MVC reads both lines: JSON is preferred")
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

    @Test
    void handlersThatDifferByWhatTheyProduceKeepTheirOwnRules() throws Exception {
        assertThat(MvcHandlerRules.answersByShape(MvcHandlerRules.handlerMappings(beanFactory)))
                .as("this application's lookups are remembered by shape")
                .isTrue();
        assertThat(get("text/csv").statusCode()).isEqualTo(200);
        assertThat(get("text/csv").statusCode()).as("csv allows one a minute").isEqualTo(429);
        for (int i = 0; i < 2; i++) {
            HttpResponse<String> json = get("application/json");
            assertThat(json.statusCode())
                    .as("json request %d: its own rule, not csv's", i)
                    .isEqualTo(200);
            assertThat(json.headers().firstValue("RateLimit-Policy").orElse("")).contains("json");
        }
        HttpResponse<String> third = get("application/json");
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(third.body()).contains("rule 'json'");
        assertThat(get("text/csv").body()).contains("rule 'csv'");
    }
}
