package io.github.ratelimit.samples.servlet;

import static io.github.ratelimit.samples.servlet.AdminClient.fields;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.RedisClient;
import tools.jackson.databind.JsonNode;

/**
 * The sample's admin servlet attacked over real HTTP in its real Tomcat, with the per-key limits in a real Redis
 * (its own redis-server) into which garbage is written straight under the limit store's keys
 * ({@code <prefix>:{limits}:rule:<rule>}, a hash whose fields are keys and whose values are
 * {@code <limits|plan>\t<limits or plan>\t<who>\t<epoch millis>}). Each test holds what docs/servlet.md and
 * docs/operations.md promise: every entry a listing shows is shown and removed by its address, an address works
 * wherever a key does, answers stay bounded whatever Redis holds, fields come as the query or a POST's form body,
 * a charset the server does not know is refused, and a change answers with the entry as it wrote it.
 */
class AdminServletAttackTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private String prefix;
    private SampleServer server;
    private AdminClient client;
    private RedisClient jedis;

    @BeforeEach
    void start() throws Exception {
        prefix = "servlet-attack-" + UUID.randomUUID();
        server = SampleServer.start(
                0,
                Map.of(
                        "ratelimit.store",
                        "redis",
                        "ratelimit.redis.url",
                        redis.uri(),
                        "ratelimit.redis.key-prefix",
                        prefix,
                        "ratelimit.limit-store.enabled",
                        "true"));
        client = new AdminClient(server.port());
        jedis = RedisClient.builder().hostAndPort(redis.server().hostAndPort()).build();
    }

    @AfterEach
    void stop() throws Exception {
        jedis.close();
        server.close();
    }

    private byte[] ruleKey(String rule) {
        return (prefix + ":{limits}:rule:" + rule).getBytes(StandardCharsets.UTF_8);
    }

    /** Writes an entry straight into the rule's hash, as another tool or an attacker with Redis access would. */
    private void store(String rule, byte[] field, String value) {
        jedis.hset(ruleKey(rule), field, value.getBytes(StandardCharsets.UTF_8));
    }

    private JsonNode listed(String rule) throws Exception {
        AdminClient.Answer page = client.admin("GET", "/keys/" + rule + "?count=1000", null);
        assertThat(page.status()).as(page.body()).isEqualTo(200);
        return page.json().get("entries");
    }

    private static String only(JsonNode entries, String field) {
        assertThat(entries).as("the listing").hasSize(1);
        return entries.get(0).get(field).asString();
    }

    /**
     * An entry under the empty field (HSET with "" is legal in Redis), which no key is, is listed with a
     * {@code ~stored:} address that GET and DELETE reach.
     */
    @Test
    void anEntryListedUnderTheEmptyKeyIsShownAndRemovedByItsAddress() throws Exception {
        store("site", new byte[0], "limits\t5/1s\tmallory\t1");
        String address = only(listed("site"), "address");

        AdminClient.Answer shown = client.admin("GET", "/keys/site/" + address, null);
        AdminClient.Answer removed = client.admin("DELETE", "/keys/site/" + address, null);

        SoftAssertions soft = new SoftAssertions();
        soft.assertThat(shown.status())
                .as("GET of the listed address %s: %s", address, shown.body())
                .isEqualTo(200);
        soft.assertThat(removed.status())
                .as("DELETE of the listed address %s: %s", address, removed.body())
                .isEqualTo(200);
        soft.assertThat(jedis.hexists(ruleKey("site"), new byte[0]))
                .as("the entry is gone from Redis")
                .isFalse();
        soft.assertAll();
    }

    /**
     * An entry under a field that is not UTF-8 is listed under a key with U+FFFD in it for people, and an address
     * that carries the bytes stored, so GET shows it and DELETE removes it from Redis.
     */
    @Test
    void anEntryListedUnderAFieldThatIsNotUtf8IsShownAndRemovedByItsAddress() throws Exception {
        byte[] field = {(byte) 0xff, (byte) 0xfe, 'b', 'a', 'd'};
        store("site", field, "limits\t5/1s\tmallory\t1");
        String address = only(listed("site"), "address");

        AdminClient.Answer shown = client.admin("GET", "/keys/site/" + address, null);
        AdminClient.Answer removed = client.admin("DELETE", "/keys/site/" + address, null);

        SoftAssertions soft = new SoftAssertions();
        soft.assertThat(shown.status())
                .as("GET of the listed address %s: %s", address, shown.body())
                .isEqualTo(200);
        soft.assertThat(removed.status()).as(removed.body()).isEqualTo(200);
        if (removed.status() == 200) {
            soft.assertThat(removed.json().get("removed").asBoolean())
                    .as("DELETE of the listed address %s: %s", address, removed.body())
                    .isTrue();
        }
        soft.assertThat(jedis.hexists(ruleKey("site"), field))
                .as("the entry is gone from Redis")
                .isFalse();
        soft.assertAll();
    }

    /**
     * A {@code ~stored:} address (an entry stored under a key over 128 characters in full) takes a set as the key in
     * full, hashed: the limits are written under {@code ~sha256:…}, and the answer is that entry, the limits just set,
     * whether the old stored entry is still there or not.
     */
    @Test
    void limitsSetThroughAStoredAddressAreAnsweredAsSet() throws Exception {
        String longKey = "g".repeat(200);
        store("site", longKey.getBytes(StandardCharsets.UTF_8), "limits\t5/1s\tmallory\t1");
        String address = only(listed("site"), "address");
        assertThat(address).startsWith("~stored:");

        AdminClient.Answer withOldEntry = client.admin("POST", "/keys/site/" + address, fields("limits", "1/1s"));
        assertThat(client.admin("DELETE", "/keys/site/" + address, null)
                        .json()
                        .get("removed")
                        .asBoolean())
                .isTrue();
        AdminClient.Answer withoutOldEntry = client.admin("POST", "/keys/site/" + address, fields("limits", "2/1s"));

        SoftAssertions soft = new SoftAssertions();
        soft.assertThat(withOldEntry.status()).as(withOldEntry.body()).isEqualTo(200);
        if (withOldEntry.status() == 200) {
            soft.assertThat(withOldEntry.json().get("limits").toString())
                    .as("the limits just set, not the stored " + "entry's: %s", withOldEntry.body())
                    .isEqualTo("[\"1/1s\"]");
        }
        soft.assertThat(withoutOldEntry.status())
                .as("a set that was applied: %s", withoutOldEntry.body())
                .isEqualTo(200);
        soft.assertAll();
        // Both were applied, under the key's hash, as the limiter counts a key over 128 characters.
        JsonNode applied = listed("site");
        assertThat(applied).hasSize(1);
        assertThat(applied.get(0).get("key").asString()).startsWith("~sha256:");
        assertThat(applied.get(0).get("limits").toString()).isEqualTo("[\"2/1s\"]");
    }

    /**
     * A 100,000-character value in Redis whose limits do not parse: the entry's {@code problem} cuts the stored text
     * and the parser's message that repeats it, so an entry's answer and a listing's stay small.
     */
    @Test
    void aHugeUnreadableValueInRedisGivesABoundedAnswer() throws Exception {
        store("site", "amp".getBytes(StandardCharsets.UTF_8), "limits\ta" + "\u0001".repeat(100_000) + "a\tmallory\t1");

        AdminClient.Answer shown = client.admin("GET", "/keys/site/amp", null);
        assertThat(shown.status()).isEqualTo(200);
        assertThat(shown.json().get("problem").asString()).startsWith("unreadable:");
        assertThat(shown.json().get("limits")).as("never obeyed").isEmpty();
        AdminClient.Answer page = client.admin("GET", "/keys/site", null);

        SoftAssertions soft = new SoftAssertions();
        soft.assertThat(shown.body().length()).as("GET of one entry").isLessThan(10_000);
        soft.assertThat(page.body().length()).as("a listing of that one entry").isLessThan(10_000);
        soft.assertAll();
    }

    /**
     * Tomcat parses a form body for POST only, so a DELETE's form would be read as nothing: a key field naming another
     * than the path would not be refused, and a key given only in the body would be "missing". A DELETE (or GET) with
     * a body is refused with 400 and removes nothing; its fields go in the query.
     */
    @Test
    void aDeleteWithABodyIsRefusedAndItsQueryIsRead() throws Exception {
        assertThat(client.admin("POST", "/keys/site/victim", fields("limits", "5/1s"))
                        .status())
                .isEqualTo(200);
        AdminClient.Answer conflicting = client.admin("DELETE", "/keys/site/victim", fields("key", "other"));
        assertThat(conflicting.status()).as(conflicting.body()).isEqualTo(400);
        assertThat(conflicting.problem()).startsWith("DELETE takes its fields in the query");
        assertThat(client.admin("GET", "/keys/site/victim", null).status())
                .as("nothing removed")
                .isEqualTo(200);

        assertThat(client.admin("POST", "/keys/site/in-query", fields("limits", "5/1s"))
                        .status())
                .isEqualTo(200);
        assertThat(client.admin("DELETE", "/keys/site", fields("key", "in-query"))
                        .status())
                .isEqualTo(400);
        AdminClient.Answer byQuery = client.admin("DELETE", "/keys/site?key=in-query", null);
        assertThat(byQuery.status()).as(byQuery.body()).isEqualTo(200);
        assertThat(byQuery.json().get("removed").asBoolean()).isTrue();
        assertThat(client.admin("DELETE", "/keys/site/victim?key=other", null).status())
                .as("another key named")
                .isEqualTo(400);
    }

    /**
     * A form declared in a charset the server does not know would be decoded as ISO-8859-1 without a word, so the
     * reset of {@code é} (sent as UTF-8) would reach the key {@code Ã©}: it is refused with 415 instead.
     */
    @Test
    void aFormInACharsetTheServerDoesNotKnowChangesNoOtherKey() throws Exception {
        HttpRequest request = HttpRequest.newBuilder(
                        URI.create("http://localhost:" + server.port() + AdminClient.ADMIN + "/keys/hello"))
                .header(
                        "Authorization",
                        "Basic " + Base64.getEncoder().encodeToString("admin:admin".getBytes(StandardCharsets.UTF_8)))
                .header("X-Forwarded-For", "192.0.2.251")
                .header("Content-Type", "application/x-www-form-urlencoded; charset=no-such-charset")
                .POST(HttpRequest.BodyPublishers.ofString("key=%C3%A9&reset=true"))
                .build();
        HttpResponse<String> r = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());

        assertThat(r.statusCode()).as(r.body()).isEqualTo(415);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("application/problem+json");
        assertThat(AdminClient.JSON.readTree(r.body()).get("detail").asString())
                .startsWith("the charset 'no-such-charset' is not known here");
    }

    /**
     * Sets and deletes of one key racing: a set answers with the entry as it wrote it, never a 404 "no limits of its
     * own" because a DELETE landed before a read-back (and never the other operator's limits).
     */
    @Test
    void aSetRacingADeleteOfTheSameKeyIsNeverAnsweredAsRefused() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<String> refused = Collections.synchronizedList(new ArrayList<>());
        List<Integer> applied = Collections.synchronizedList(new ArrayList<>());
        try {
            List<Future<?>> tasks = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                int n = t + 1;
                AdminClient setter = new AdminClient(server.port());
                AdminClient deleter = new AdminClient(server.port());
                tasks.add(pool.submit(() -> {
                    for (int i = 0; i < 100; i++) {
                        AdminClient.Answer a = setter.admin("POST", "/keys/site/race", fields("limits", n + "/1s"));
                        if (a.status() == 200
                                && !a.json().get("limits").toString().equals("[\"" + n + "/1s\"]")) {
                            refused.add("answered with limits it did not set: " + a.body());
                        } else if (a.status() == 200) {
                            applied.add(a.status());
                        } else if (a.status() != 429) { // 429: the sample's own rules held it before the servlet
                            refused.add(a.status() + " " + a.body());
                        }
                    }
                    return null;
                }));
                tasks.add(pool.submit(() -> {
                    for (int i = 0; i < 100; i++) {
                        deleter.admin("DELETE", "/keys/site/race", null);
                    }
                    return null;
                }));
            }
            for (Future<?> task : tasks) {
                task.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(applied.size()).as("sets that reached the servlet").isGreaterThan(20);
        assertThat(refused)
                .as("valid sets answered other than 200 with their own limits")
                .isEmpty();
    }
}
