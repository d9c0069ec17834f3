package io.github.ratelimit.samples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * The sample on WebFlux, with its buckets and per-key limits in a real Redis and the {@code ratelimitkeys} endpoint
 * behind Spring Security, over real HTTP: an order id of 200 characters (rule {@code order}, keyed by {@code #id},
 * 2 a minute) is listed by the {@code ratelimits} endpoint as {@code ~sha256:<hex>}; a reset through that address
 * unblocks it, and limits set through it are the ones its next requests get. An address in the hash's form that is no
 * hash is refused with a 400, not answered 200 as if done.
 */
class WebFluxHashedKeyAdminTest {

    @RegisterExtension
    static final RedisServerExtension REDIS = new RedisServerExtension();

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private static ConfigurableApplicationContext app;
    private static int port;

    @BeforeAll
    static void start() {
        app = SpringApplication.run(
                WebFluxSampleApplication.class,
                "--server.port=0",
                "--ratelimit.redis.url=" + REDIS.uri(),
                "--ratelimit.limit-store.enabled=true",
                "--management.endpoints.web.exposure.include=health,ratelimits,ratelimitkeys",
                "--management.endpoint.ratelimitkeys.access=unrestricted");
        port = ((WebServerApplicationContext) app).getWebServer().getPort();
    }

    @AfterAll
    static void stop() {
        if (app != null) {
            app.close();
        }
    }

    private static HttpResponse<String> send(String method, String path, String admin, String json) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .timeout(Duration.ofSeconds(10));
        if (admin != null) {
            b.header(
                    "Authorization",
                    "Basic "
                            + Base64.getEncoder()
                                    .encodeToString((admin + ":" + admin).getBytes(StandardCharsets.UTF_8)));
        }
        if (json != null) {
            b.header("Content-Type", "application/json");
        }
        b.method(
                method, json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json));
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static List<Integer> orders(String id, int n) throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            statuses.add(send("GET", "/api/orders/" + id, null, null).statusCode());
        }
        return statuses;
    }

    private static String orderId(String tag) {
        return (tag + "-" + "0123456789abcdef".repeat(13)).substring(0, 200);
    }

    /** @return the key the {@code ratelimits} endpoint lists for the order id: its hash */
    private static String listed(String id) throws Exception {
        String hash = "~sha256:"
                + HexFormat.of()
                        .formatHex(MessageDigest.getInstance("SHA-256").digest(id.getBytes(StandardCharsets.UTF_8)));
        JsonNode body =
                JSON.readTree(send("GET", "/actuator/ratelimits", "admin", null).body());
        for (JsonNode e : body.path("topRejectedKeys")) {
            if (e.path("rule").asString().equals("order")
                    && e.path("key").asString().equals(hash)) {
                return hash;
            }
        }
        throw new AssertionError(hash + " is not among the most-rejected keys: " + body.path("topRejectedKeys"));
    }

    @Test
    void theListedHashResetsTheClientAndTheLimitsSetThroughItAreTheOnesItGets() throws Exception {
        String id = orderId("flux");
        assertThat(orders(id, 3)).containsExactly(200, 200, 429);
        String address = listed(id);

        HttpResponse<String> reset =
                send("POST", "/actuator/ratelimitkeys/order/" + address, "admin", "{\"reset\":true}");
        assertThat(reset.statusCode()).as(reset.body()).isEqualTo(200);
        assertThat(orders(id, 1))
                .as("unblocked by the reset through the listed address")
                .containsExactly(200);

        assertThat(send(
                                "POST",
                                "/actuator/ratelimitkeys/order",
                                "admin",
                                "{\"key\":\"" + address + "\",\"reset\":true}")
                        .statusCode())
                .isEqualTo(200);
        HttpResponse<String> set =
                send("POST", "/actuator/ratelimitkeys/order/" + address, "admin", "{\"limits\":\"4/1h\"}");
        assertThat(set.statusCode()).as(set.body()).isEqualTo(200);
        assertThat(orders(id, 6))
                .as("4/1h set through the listed address, not the rule's 2/1m")
                .containsExactly(200, 200, 200, 200, 429, 429);
    }

    @Test
    void anAddressInTheHashsFormThatIsNoHashIsRefusedWith400() throws Exception {
        String id = orderId("bad");
        assertThat(orders(id, 3)).containsExactly(200, 200, 429);
        String hash = listed(id);
        String upper = "~sha256:" + hash.substring("~sha256:".length()).toUpperCase(Locale.ROOT);

        for (String change : new String[] {"{\"reset\":true}", "{\"limits\":\"5/1s\"}"}) {
            HttpResponse<String> answer = send("POST", "/actuator/ratelimitkeys/order/" + upper, "admin", change);
            assertThat(answer.statusCode()).as("%s: %s", change, answer.body()).isEqualTo(400);
            assertThat(answer.body()).contains("is no key of rule 'order'").contains("the address a listing gives");
        }
        assertThat(send("GET", "/actuator/ratelimitkeys/order/" + upper, "admin", null)
                        .statusCode())
                .as("nothing was written")
                .isEqualTo(404);
        assertThat(orders(id, 1)).as("still blocked: nothing was reset").containsExactly(429);
    }
}
