package io.github.ratelimit.spring.boot.web.servlet;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.spring.boot.autoconfigure.RateLimitAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.beans.factory.ListableBeanFactory;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The filter remembers what Spring MVC's handler lookup found by the request's shape: two handlers of one path that
 * differ by what they produce keep their own rules, request after request, over real HTTP, because the shape holds
 * the {@code Accept} header.
 */
@SpringBootTest(classes = HandlerLookupByShapeTest.App.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
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
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    ListableBeanFactory beanFactory;

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> get(String accept) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/report"))
                .header("Accept", accept).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void handlersThatDifferByWhatTheyProduceKeepTheirOwnRules() throws Exception {
        assertThat(MvcHandlerRules.answersByShape(MvcHandlerRules.handlerMappings(beanFactory)))
                .as("this application's lookups are remembered by shape").isTrue();
        assertThat(get("text/csv").statusCode()).isEqualTo(200);
        assertThat(get("text/csv").statusCode()).as("csv allows one a minute").isEqualTo(429);
        for (int i = 0; i < 2; i++) {
            HttpResponse<String> json = get("application/json");
            assertThat(json.statusCode()).as("json request %d: its own rule, not csv's", i).isEqualTo(200);
            assertThat(json.headers().firstValue("RateLimit-Policy").orElse("")).contains("json");
        }
        HttpResponse<String> third = get("application/json");
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(third.body()).contains("rule 'json'");
        assertThat(get("text/csv").body()).contains("rule 'csv'");
    }
}
