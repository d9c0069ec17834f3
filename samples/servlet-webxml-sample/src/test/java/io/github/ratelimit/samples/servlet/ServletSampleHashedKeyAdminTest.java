package io.github.ratelimit.samples.servlet;

import static io.github.ratelimit.samples.servlet.AdminClient.fields;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

/**
 * The sample's admin servlet with its buckets and per-key limits in a real Redis, over real HTTP, and one more rule
 * ({@code api}: {@code /search}, keyed by the {@code api_key} parameter, 3 an hour): a client whose API key is 200
 * characters long is listed at {@code /rejected} as {@code ~sha256:<hex>}; a reset through that address unblocks it,
 * and limits set through it are the ones its requests then get. An address in the hash's form that is no hash is
 * refused with a 400, not answered 200 as if done.
 */
class ServletSampleHashedKeyAdminTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private SampleServer server;
    private AdminClient client;
    private final String apiKey = ("k-" + UUID.randomUUID() + "-" + "0123456789abcdef".repeat(13)).substring(0, 200);

    @BeforeEach
    void start() throws Exception {
        server = SampleServer.start(
                0,
                Map.of(
                        "ratelimit.store",
                        "redis",
                        "ratelimit.redis.url",
                        redis.uri(),
                        "ratelimit.redis.key-prefix",
                        "servlet-hashed-" + UUID.randomUUID(),
                        "ratelimit.limit-store.enabled",
                        "true",
                        "ratelimit.rules[5].name",
                        "api",
                        "ratelimit.rules[5].paths",
                        "/search",
                        "ratelimit.rules[5].key",
                        "param:api_key",
                        "ratelimit.rules[5].limits",
                        "3/1h"));
        client = new AdminClient(server.port());
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    private List<Integer> searches(int n) throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            statuses.add(client.get("/search?q=x&api_key=" + apiKey).status());
        }
        return statuses;
    }

    /** @return the client's key as {@code /rejected} lists it: the hash of its API key */
    private String listed() throws Exception {
        String hash = "~sha256:"
                + HexFormat.of()
                        .formatHex(
                                MessageDigest.getInstance("SHA-256").digest(apiKey.getBytes(StandardCharsets.UTF_8)));
        JsonNode rejected = client.admin("GET", "/rejected", null).json().get("topRejectedKeys");
        for (JsonNode e : rejected) {
            if (e.get("rule").asString().equals("api")
                    && e.get("key").asString().equals(hash)) {
                return hash;
            }
        }
        throw new AssertionError(hash + " is not listed at /rejected: " + rejected);
    }

    @Test
    void theListedHashResetsTheClientAndTheLimitsSetThroughItAreTheOnesItGets() throws Exception {
        assertThat(searches(4)).containsExactly(200, 200, 200, 429);
        String address = listed();

        AdminClient.Answer reset = client.admin("POST", "/keys/api/" + address, fields("reset", "true"));
        assertThat(reset.status()).as(reset.body()).isEqualTo(200);
        assertThat(searches(1))
                .as("unblocked by the reset through the listed address")
                .containsExactly(200);

        AdminClient.Answer set = client.admin("POST", "/keys/api/" + address, fields("limits", "2/1h"));
        assertThat(set.status()).as(set.body()).isEqualTo(200);
        // The filter that counts the rule may be another than the one whose admin made the change: it applies the
        // change within its refresh interval. Until then a reset and three calls give 3, then 2.
        Awaitility.await("2/1h applies")
                .atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(300))
                .until(() -> {
                    client.admin("POST", "/keys/api", fields("key", address, "reset", "true"));
                    return searches(3).stream().filter(s -> s == 200).count() == 2;
                });
        assertThat(client.admin("POST", "/keys/api", fields("key", address, "reset", "true"))
                        .status())
                .isEqualTo(200);
        assertThat(searches(6).stream().filter(s -> s == 200).count())
                .as("2/1h set through the listed address, not " + "the rule's 3/1h")
                .isEqualTo(2);
    }

    @Test
    void anAddressInTheHashsFormThatIsNoHashIsRefusedWith400() throws Exception {
        assertThat(searches(4)).containsExactly(200, 200, 200, 429);
        String hash = listed();
        String upper = "~sha256:" + hash.substring("~sha256:".length()).toUpperCase(Locale.ROOT);

        for (Map<String, String> change : List.of(fields("reset", "true"), fields("limits", "5/1s"))) {
            AdminClient.Answer answer = client.admin("POST", "/keys/api/" + upper, change);
            assertThat(answer.status()).as("%s: %s", change, answer.body()).isEqualTo(400);
            assertThat(answer.problem()).contains("is no key of rule 'api'").contains("the address a listing gives");
        }
        assertThat(client.admin("GET", "/keys/api/" + upper, null).status())
                .as("nothing was written")
                .isEqualTo(404);
        assertThat(searches(1)).as("still blocked: nothing was reset").containsExactly(429);
    }
}
