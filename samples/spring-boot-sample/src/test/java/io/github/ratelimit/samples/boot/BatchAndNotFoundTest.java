package io.github.ratelimit.samples.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The sample's charging by size and by outcome, over real HTTP: {@code POST /api/batch} counts each item of its JSON
 * array against rule {@code batch} (10 a minute per address), and rule {@code not-found} lets 20 answers of 404 a
 * minute through per address, while other answers cost it nothing. Each test has its own client address.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "ratelimit.trusted-proxies=127.0.0.1,::1")
class BatchAndNotFoundTest {

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> batch(String ip, int items) throws Exception {
        List<String> quoted = new ArrayList<>();
        for (int i = 0; i < items; i++) {
            quoted.add("\"item-" + i + "\"");
        }
        return http.send(
                HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/api/batch"))
                        .timeout(Duration.ofSeconds(10))
                        .header("X-Forwarded-For", ip)
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("[" + String.join(",", quoted) + "]"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String ip, String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                        .timeout(Duration.ofSeconds(10))
                        .header("X-Forwarded-For", ip)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void chargesABatchByItsSize() throws Exception {
        HttpResponse<String> seven = batch("198.51.100.1", 7);
        assertThat(seven.statusCode()).isEqualTo(200);
        assertThat(seven.body()).isEqualTo("accepted 7");
        assertThat(seven.headers().firstValue("RateLimit"))
                .hasValueSatisfying(v -> assertThat(v).contains("\"batch-1m\";r=3;"));

        HttpResponse<String> four = batch("198.51.100.1", 4);
        assertThat(four.statusCode()).isEqualTo(429);
        assertThat(four.headers().firstValue("Retry-After"))
                .as("one missing token of 10/1m")
                .contains("6");
        assertThat(four.body()).contains("rule 'batch'");

        HttpResponse<String> three = batch("198.51.100.1", 3);
        assertThat(three.statusCode()).as("the refused four took nothing").isEqualTo(200);
        assertThat(batch("198.51.100.1", 1).statusCode()).isEqualTo(429);
        assertThat(batch("198.51.100.2", 10).statusCode()).as("another address").isEqualTo(200);
    }

    @Test
    void refusesABatchNoMinuteCouldHoldWith413AndTakesNothing() throws Exception {
        HttpResponse<String> eleven = batch("198.51.100.3", 11);
        assertThat(eleven.statusCode()).isEqualTo(413);
        assertThat(eleven.headers().firstValue("Retry-After"))
                .as("waiting cannot help")
                .isEmpty();
        assertThat(eleven.headers().firstValue("Content-Type"))
                .hasValueSatisfying(v -> assertThat(v).startsWith("application/problem+json"));
        assertThat(eleven.body())
                .contains("\"status\":413")
                .contains("'batch'")
                .contains("at most 10")
                .doesNotContain("198.51.100.3");
        assertThat(batch("198.51.100.3", 10).statusCode())
                .as("nothing was taken")
                .isEqualTo(200);
    }

    @Test
    void letsTwenty404sAMinuteThroughAndThenAnswers429() throws Exception {
        String ip = "198.51.100.4";
        // More 200s than the rule allows 404s, on a path of no rate (rule slow: 2 in flight; these go one by one).
        // They were exports, a SOFT rule of 2 a second: 25 of them waited their turn for 12 s.
        for (int i = 0; i < 25; i++) {
            assertThat(get(ip, "/api/slow?ms=0").statusCode())
                    .as("200s cost nothing (%d)", i)
                    .isEqualTo(200);
        }
        for (int i = 0; i < 20; i++) {
            assertThat(get(ip, "/api/guess-" + i).statusCode())
                    .as("404 number %d", i)
                    .isEqualTo(404);
        }
        HttpResponse<String> over = get(ip, "/api/guess-20");
        assertThat(over.statusCode()).isEqualTo(429);
        assertThat(over.headers().firstValue("Retry-After"))
                .as("one token of 20/1m")
                .contains("3");
        assertThat(over.body()).contains("rule 'not-found'");
        assertThat(get(ip, "/api/export").statusCode())
                .as("the address is held up everywhere under /api")
                .isEqualTo(429);
        assertThat(get("198.51.100.5", "/api/guess-0").statusCode())
                .as("another address")
                .isEqualTo(404);
    }
}
