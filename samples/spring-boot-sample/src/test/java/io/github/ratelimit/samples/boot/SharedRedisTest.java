package io.github.ratelimit.samples.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/** Two instances of the application share one limit through one real Redis, set by one property. */
class SharedRedisTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static ConfigurableApplicationContext start() {
        return SpringApplication.run(
                SampleApplication.class, "--server.port=0", "--ratelimit.redis.url=" + redis.uri());
    }

    private static int port(ConfigurableApplicationContext context) {
        return ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    @Test
    void holdsOneLimitAcrossTwoInstances() throws Exception {
        try (ConfigurableApplicationContext a = start();
                ConfigurableApplicationContext b = start()) {
            HttpClient http = HttpClient.newHttpClient();
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                for (ConfigurableApplicationContext instance : List.of(a, b)) {
                    statuses.add(http.send(
                                    HttpRequest.newBuilder(
                                                    URI.create("http://localhost:" + port(instance) + "/api/login"))
                                            .POST(HttpRequest.BodyPublishers.noBody())
                                            .build(),
                                    HttpResponse.BodyHandlers.ofString())
                            .statusCode());
                }
            }
            // login allows 5 per minute per address, whichever instance answers.
            assertThat(statuses).containsExactly(200, 200, 200, 200, 200, 429, 429, 429);
        }
    }

    /**
     * The completions scenario across two instances: the debt one instance charged is owed on the other, so the third
     * call of 600 is refused wherever it lands.
     */
    @Test
    void chargesCompletionsIntoDebtAcrossTwoInstances() throws Exception {
        try (ConfigurableApplicationContext a = start();
                ConfigurableApplicationContext b = start()) {
            HttpClient http = HttpClient.newHttpClient();
            List<HttpResponse<String>> responses = new ArrayList<>();
            for (ConfigurableApplicationContext instance : List.of(a, b, a)) {
                responses.add(http.send(
                        HttpRequest.newBuilder(
                                        URI.create("http://localhost:" + port(instance) + "/api/complete?tokens=600"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString()));
            }
            assertThat(responses).extracting(HttpResponse::statusCode).containsExactly(200, 200, 429);
            // 200 tokens of debt and the next call's 1, at 1000 a minute: about 12 s.
            assertThat(responses.get(2).headers().firstValue("Retry-After").map(Long::parseLong))
                    .hasValueSatisfying(s -> assertThat(s).isBetween(10L, 13L));
        }
    }
}
