package io.github.ratelimit.samples.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.testing.redis.DelayingProxy;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The Boot sample's {@code /api/hello} meets the URL rule {@code site} and the handler's {@code hello}. On Redis behind
 * a link that adds a delay to every round trip, a request takes one added delay, not two: the rules' scripts travel
 * in one pipelined round trip. The sample's rule {@code not-found} (on {@code /api/**}, counting only 404s) joins that
 * pipeline, and gives a 200's token back after the response: one more round trip, measured here too.
 */
class OneRoundTripTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final Duration DELAY = Duration.ofMillis(250);

    /** What a request cost: chunks sent to Redis and milliseconds, five requests each. */
    private record Cost(List<Long> chunks, List<Long> millis) {}

    @Test
    void aRequestThatMeetsTwoRulesWaitsForOneRoundTrip() throws Exception {
        // The sample without its rule not-found: the request meets site and hello only.
        Cost cost = measure(rulesWithout("not-found"));
        // The median, so that the store's clock calibration (a script of its own, now and then) cannot decide.
        assertThat(median(cost.chunks()))
                .as("chunks sent to Redis per request, %s", cost.chunks())
                .isEqualTo(1);
        assertThat(median(cost.millis()))
                .as("milliseconds per request, %s", cost.millis())
                .isBetween(DELAY.toMillis(), DELAY.toMillis() * 3 / 2);
    }

    @Test
    void aRuleThatCountsOnly404sGivesA200sTokenBackInOneMoreRoundTrip() throws Exception {
        Cost cost = measure();
        assertThat(median(cost.chunks()))
                .as("chunks sent to Redis per request, %s", cost.chunks())
                .isEqualTo(2);
        assertThat(median(cost.millis()))
                .as("milliseconds per request, %s", cost.millis())
                .isBetween(DELAY.toMillis() * 2, DELAY.toMillis() * 5 / 2);
    }

    /**
     * @param name a URL rule of the sample's application.properties
     * @return the sample's URL rules without it, as command-line arguments (a list given there replaces the file's)
     */
    private static String[] rulesWithout(String name) throws Exception {
        java.util.Properties file = new java.util.Properties();
        try (var in = OneRoundTripTest.class.getResourceAsStream("/application.properties")) {
            file.load(in);
        }
        String index = file.stringPropertyNames().stream()
                .filter(k -> k.matches("ratelimit\\.rules\\[\\d+]\\.name") && name.equals(file.getProperty(k)))
                .findFirst()
                .orElseThrow()
                .replace(".name", ".");
        List<String> args = new ArrayList<>();
        int next = 0;
        java.util.Map<String, Integer> renumbered = new java.util.HashMap<>();
        for (String key : new java.util.TreeSet<>(file.stringPropertyNames())) {
            if (key.startsWith("ratelimit.rules[") && !key.startsWith(index)) {
                String old = key.substring(0, key.indexOf(']') + 1);
                if (!renumbered.containsKey(old)) {
                    renumbered.put(old, next++);
                }
                args.add("--ratelimit.rules[" + renumbered.get(old) + "]" + key.substring(old.length()) + "="
                        + file.getProperty(key));
            }
        }
        return args.toArray(String[]::new);
    }

    private static Cost measure(String... extra) throws Exception {
        try (DelayingProxy proxy =
                DelayingProxy.start("127.0.0.1", redis.server().port(), DELAY)) {
            List<String> args = new ArrayList<>(List.of(
                    "--server.port=0",
                    "--ratelimit.redis.url=redis://127.0.0.1:" + proxy.port(),
                    // A distant Redis: the default timeout is for a near one.
                    "--ratelimit.redis.command-timeout=5s"));
            args.addAll(List.of(extra));
            try (ConfigurableApplicationContext app =
                    SpringApplication.run(SampleApplication.class, args.toArray(String[]::new))) {
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
                return new Cost(chunks, millis);
            }
        }
    }

    private static int get(HttpClient http, URI uri) throws Exception {
        return http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }

    private static long median(List<Long> values) {
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }
}
