package io.github.ratelimit.samples.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.testing.redis.RedisCluster;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.RedisClusterClient;

/**
 * The Boot sample on a 3-master Redis Cluster, over real HTTP: {@code /api/hello} meets {@code site}, {@code not-found}
 * and the handler's {@code hello}, all three by client address, so their keys share the address's hash slot and the
 * request reaches Redis in one round trip, then one more for {@code not-found}'s refund of a 200, as on a standalone
 * Redis ({@link OneRoundTripTest}). Counted by the nodes themselves: the reads of every master ({@code INFO stats}'s
 * {@code total_reads_processed}, one per read of what a connection sent, however many commands it held).
 */
class ClusterRoundTripTest {

    @Test
    void aRequestWhoseRulesCountByTheAddressReachesItsNodeOnce() throws Exception {
        try (RedisCluster cluster = RedisCluster.start(3, 0)) {
            String nodes = cluster.nodes().stream().map(Object::toString).collect(Collectors.joining(","));
            try (ConfigurableApplicationContext app = SpringApplication.run(
                            SampleApplication.class, "--server.port=0", "--ratelimit.redis.cluster.nodes=" + nodes);
                    RedisClusterClient client = RedisClusterClient.create(new HashSet<>(cluster.nodes()))) {
                // What the store does once at start-up (its look for keys of an earlier layout) is over.
                Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> client.exists("ratelimit:{layout}"));
                HttpClient http = HttpClient.newHttpClient();
                URI hello = URI.create("http://localhost:"
                        + ((WebServerApplicationContext) app).getWebServer().getPort() + "/api/hello");
                assertThat(get(http, hello)).isEqualTo(200); // opens the connections the next requests reuse

                List<Jedis> masters = new ArrayList<>();
                try {
                    for (HostAndPort master : cluster.masters()) {
                        masters.add(new Jedis(master));
                    }
                    List<Long> reads = new ArrayList<>();
                    // Four, after the first: five fit the handler's 5 a second however fast they go.
                    for (int i = 0; i < 4; i++) {
                        long before = reads(masters);
                        assertThat(get(http, hello)).isEqualTo(200);
                        // Less the reads of the second INFO on each master.
                        reads.add(reads(masters) - before - masters.size());
                    }
                    // The median, so that the store's clock calibration (a script of its own, now and then) cannot
                    // decide. The earlier layout, one slot per rule, took four.
                    assertThat(median(reads))
                            .as("reads of Redis's masters per request, %s", reads)
                            .isEqualTo(2);
                } finally {
                    masters.forEach(Jedis::close);
                }
            }
        }
    }

    private static long reads(List<Jedis> masters) {
        long reads = 0;
        for (Jedis master : masters) {
            String stats = master.info("stats");
            for (String line : stats.split("\r?\n")) {
                if (line.startsWith("total_reads_processed:")) {
                    reads +=
                            Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                }
            }
        }
        return reads;
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
