package io.github.ratelimit.samples.boot;

import io.github.ratelimit.testing.redis.DelayingProxy;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Boot sample's {@code /api/hello} meets two rules, the URL rule {@code site} and the handler's {@code hello}.
 * On Redis behind a link that adds a delay to every round trip, a request takes one added delay, not two: the two
 * rules' scripts travel in one pipelined round trip.
 */
class OneRoundTripTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final Duration DELAY = Duration.ofMillis(250);

    @Test
    void aRequestThatMeetsTwoRulesWaitsForOneRoundTrip() throws Exception {
        try (DelayingProxy proxy = DelayingProxy.start("127.0.0.1", redis.server().port(), DELAY);
             ConfigurableApplicationContext app = SpringApplication.run(SampleApplication.class, "--server.port=0",
                     "--ratelimit.redis.url=redis://127.0.0.1:" + proxy.port(),
                     // A distant Redis: the default timeout is for a near one.
                     "--ratelimit.redis.command-timeout=5s")) {
            HttpClient http = HttpClient.newHttpClient();
            URI hello = URI.create("http://localhost:"
                    + ((WebServerApplicationContext) app).getWebServer().getPort() + "/api/hello");
            assertThat(get(http, hello)).isEqualTo(200); // opens the connections the next requests reuse
            List<Long> millis = new ArrayList<>();
            List<Long> chunks = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                long sentBefore = proxy.chunks();
                long started = System.nanoTime();
                assertThat(get(http, hello)).isEqualTo(200);
                millis.add((System.nanoTime() - started) / 1_000_000);
                chunks.add(proxy.chunks() - sentBefore);
            }
            // The median, so that the store's clock calibration (a script of its own, now and then) cannot decide.
            assertThat(median(chunks)).as("chunks sent to Redis per request, %s", chunks).isEqualTo(1);
            assertThat(median(millis)).as("milliseconds per request, %s", millis)
                    .isBetween(DELAY.toMillis(), DELAY.toMillis() * 3 / 2);
        }
    }

    private static int get(HttpClient http, URI uri) throws Exception {
        return http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private static long median(List<Long> values) {
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }
}
