package io.github.ratelimit.samples.servlet;

import static io.github.ratelimit.samples.servlet.AdminClient.fields;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.testing.redis.RedisServer;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;

/**
 * The sample's admin servlet with the buckets and the per-key limits in a real Redis (its own redis-server), over
 * real HTTP: a per-key limit set through the admin is enforced, then removed; the limits it refuses; Redis's health.
 */
class ServletSampleAdminRedisTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private SampleServer server;
    private AdminClient client;

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
                        "servlet-admin-" + UUID.randomUUID(),
                        "ratelimit.limit-store.enabled",
                        "true"));
        client = new AdminClient(server.port());
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    @Test
    void aPerKeyLimitSetThroughTheAdminIsEnforcedAndRemoved() throws Exception {
        assertThat(client.get("/hello").status()).isEqualTo(200);
        String key = client.clientIp; // the rule counts by the client address: the key as decisions show it
        AdminClient.Answer set = client.admin("POST", "/keys/site/" + key, fields("limits", "2/1h"));
        assertThat(set.status()).as(set.body()).isEqualTo(200);
        JsonNode entry = set.json();
        assertThat(entry.get("key").asString()).isEqualTo(key);
        assertThat(entry.get("limits").toString()).isEqualTo("[\"2/1h\"]");
        assertThat(entry.get("changedBy").asString()).isEqualTo("admin");
        // Every instance applies it within the refresh interval; slower than /hello's own 5/1s.
        Awaitility.await("the per-key limit applies")
                .atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(300))
                .until(() -> client.get("/hello").status() == 429);
        assertThat(client.get("/hello").body()).contains("rule 'site'");
        assertThat(client.admin("GET", "/keys/site/" + key, null)
                        .json()
                        .get("limits")
                        .toString())
                .isEqualTo("[\"2/1h\"]");
        JsonNode page = client.admin("GET", "/keys/site?count=10", null).json();
        assertThat(page.get("entries").toString()).contains(key);

        AdminClient.Answer removed = client.admin("DELETE", "/keys/site/" + key, null);
        assertThat(removed.json().get("removed").asBoolean()).isTrue();
        assertThat(client.admin("GET", "/keys/site/" + key, null).status()).isEqualTo(404);
        // The rule's own limits again; the bucket keeps what it spent, so reset it too.
        assertThat(client.admin("POST", "/keys/site", fields("key", key, "reset", "true"))
                        .status())
                .isEqualTo(200);
        Awaitility.await("the rule's limits apply again")
                .atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(300))
                .until(() -> client.get("/hello").status() == 200);
    }

    @Test
    void aPlanAssignedThroughTheAdminShowsInTheEntry() throws Exception {
        AdminClient.Answer set = client.admin("POST", "/keys/me/alice", fields("plan", "pro"));
        assertThat(set.status()).as(set.body()).isEqualTo(200);
        assertThat(set.json().get("plan").asString()).isEqualTo("pro");
        assertThat(set.json().get("limits").toString()).isEqualTo("[\"10/1m\"]");
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "limits | abc                                      | 400",
                "limits | 5/1s,10/1s                               | 400",
                "limits | 1/1s,2/2s,3/3s,4/4s,5/5s,6/6s,7/7s,8/8s,9/9s | 400",
                "limits | -1/1s                                    | 400",
                "limits | 99999999999999999999999/1s               | 400",
                "plan   | no-such-plan                             | 400",
                "plan   | 'pro\"}, {'                              | 400"
            })
    void refusesLimitsAndPlansTheRuleCannotUse(String field, String value, int status) throws Exception {
        AdminClient.Answer a = client.admin("POST", "/keys/site/198.51.100.9", fields(field, value));
        assertThat(a.status()).as(a.body()).isEqualTo(status);
        assertThat(a.problem()).isNotBlank();
        assertThat(client.admin("GET", "/keys/site/198.51.100.9", null).status())
                .as("nothing stored")
                .isEqualTo(404);
    }

    @Test
    void refusesBadPagesAndUnknownRules() throws Exception {
        assertThat(client.admin("GET", "/keys/site?count=abc", null).problem()).contains("\"count\" is 'abc'");
        assertThat(client.admin("GET", "/keys/site?cursor=not-a-cursor", null).status())
                .isEqualTo(400);
        AdminClient.Answer unknown = client.admin("GET", "/keys/no-such-rule", null);
        assertThat(unknown.status()).isEqualTo(404);
        assertThat(unknown.problem()).contains("rule 'no-such-rule' is not known here; known rules: [");
        AdminClient.Answer none = client.admin("GET", "/keys/site/198.51.100.10", null);
        assertThat(none.status()).isEqualTo(404);
        assertThat(none.problem()).isEqualTo("no limits of its own: the rule's apply");
        assertThat(none.json().get("address").asString()).isEqualTo("198.51.100.10");
    }

    @Test
    void healthShowsEachRedisStoresBreaker() throws Exception {
        JsonNode health = client.admin("GET", "/health", null).json();
        assertThat(health.get("status").asString()).isEqualTo("UP");
        assertThat(health.get("stores")).hasSize(2).allSatisfy(s -> {
            assertThat(s.get("type").asString()).isEqualTo("JedisBucketStore");
            assertThat(s.get("status").asString()).isEqualTo("UP");
            assertThat(s.get("breaker").asString()).isEqualTo("CLOSED");
            assertThat(s.has("failures")).isTrue();
            assertThat(s.has("shortCircuited")).isTrue();
        });
        JsonNode stores = client.admin("GET", "/", null).json().get("stores");
        assertThat(stores.get(0).get("breaker").asString()).isEqualTo("CLOSED");
        assertThat(stores.get(0).has("roundTrips")).isTrue();
    }

    /**
     * Its own Redis, killed under the sample: requests fail open while the breaker counts failures, and once it opens
     * the admin's health says DEGRADED with 503 and the open breaker, an orchestrator's probe can act on; with Redis
     * back, UP again.
     */
    @Test
    void healthIsDegradedWhileRedisIsGoneAndUpWhenItIsBack() throws Exception {
        try (RedisServer own = RedisServer.start();
                SampleServer sample = SampleServer.start(
                        0,
                        Map.of(
                                "ratelimit.store",
                                "redis",
                                "ratelimit.redis.url",
                                own.uri().toString()))) {
            AdminClient c = new AdminClient(sample.port());
            assertThat(c.get("/hello").status()).isEqualTo(200);
            assertThat(c.admin("GET", "/health", null).status()).isEqualTo(200);
            own.kill();
            AdminClient.Answer health = Awaitility.await("the breaker opens")
                    .atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(10))
                    .until(
                            () -> {
                                assertThat(c.get("/hello").status())
                                        .as("fail-open serves")
                                        .isEqualTo(200);
                                return c.admin("GET", "/health", null);
                            },
                            answer -> answer.status() == 503);
            JsonNode degraded = health.json();
            assertThat(degraded.get("status").asString()).isEqualTo("DEGRADED");
            assertThat(degraded.get("stores")).anySatisfy(store -> {
                assertThat(store.get("status").asString()).isEqualTo("DEGRADED");
                assertThat(store.get("breaker").asString()).isIn("OPEN", "HALF_OPEN");
                assertThat(store.get("failures").asLong()).isPositive();
            });
            own.restart();
            Awaitility.await("the store recovers with Redis")
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(50))
                    .until(
                            () -> {
                                c.get("/hello");
                                return c.admin("GET", "/health", null).status();
                            },
                            status -> status == 200);
            assertThat(c.admin("GET", "/health", null).json().get("status").asString())
                    .isEqualTo("UP");
        }
    }
}
