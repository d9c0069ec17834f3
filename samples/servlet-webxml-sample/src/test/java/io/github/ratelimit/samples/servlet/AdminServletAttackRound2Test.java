package io.github.ratelimit.samples.servlet;

import static io.github.ratelimit.samples.servlet.AdminClient.fields;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.RedisClient;
import tools.jackson.databind.JsonNode;

/**
 * A second round of attacks on the sample's admin servlet over real HTTP in its real Tomcat, with a real Redis:
 * a reset of a key whose text starts like a {@code ~stored:} address, entries whose field is huge, and a body the
 * servlet takes for a form that Tomcat never reads.
 */
class AdminServletAttackRound2Test {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private String prefix;
    private SampleServer server;
    private AdminClient client;
    private RedisClient jedis;

    @BeforeEach
    void start() throws Exception {
        prefix = "servlet-attack2-" + UUID.randomUUID();
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

    private static String b64(String key) {
        return "~b64:" + Base64.getUrlEncoder().withoutPadding().encodeToString(key.getBytes(StandardCharsets.UTF_8));
    }

    /** The audit log of the limits ("... reset by ..."), in this JVM, where the sample's Tomcat runs. */
    private static final class Audit extends Handler implements AutoCloseable {
        final List<String> messages = Collections.synchronizedList(new ArrayList<>());
        private final Logger logger = Logger.getLogger("io.github.ratelimit.limits");

        Audit() {
            logger.addHandler(this);
        }

        @Override
        public void publish(LogRecord record) {
            messages.add(record.getMessage());
        }

        @Override
        public void flush() {}

        @Override
        public void close() {
            logger.removeHandler(this);
        }
    }

    /**
     * The key {@code ~stored:YWxpY2U}, literally (set and listed through its {@code ~b64:} address like any key of 1
     * to 128 characters), is reset through that address: the answer names that key and address, not {@code alice}.
     */
    @Test
    void aResetThroughAB64AddressAnswersTheKeyItReset() throws Exception {
        String literal = "~stored:YWxpY2U";
        String address = b64(literal);
        try (Audit audit = new Audit()) {
            AdminClient.Answer reset = client.admin("POST", "/keys/site/" + address, fields("reset", "true"));

            assertThat(audit.messages).as("what was reset").anyMatch(m -> m.contains("key '" + literal + "' reset"));
            assertThat(reset.status()).as(reset.body()).isEqualTo(200);
            assertThat(reset.json().get("key").asString())
                    .as("the key the answer names: %s", reset.body())
                    .isEqualTo(literal);
            assertThat(reset.json().get("address").asString())
                    .as("the address the answer gives: %s", reset.body())
                    .isEqualTo(address);
        }
    }

    /**
     * The key {@code ~stored:!!} is set through its {@code ~b64:} address (200), then reset through the same
     * address: the reset is applied (the audit log says so) and answered 200, not 400 as bad input.
     */
    @Test
    void aResetThatWasAppliedIsNotAnsweredAsBadInput() throws Exception {
        String address = b64("~stored:!!");
        AdminClient.Answer set = client.admin("POST", "/keys/site/" + address, fields("limits", "5/1s"));
        assertThat(set.status()).as("a set of that very key: %s", set.body()).isEqualTo(200);
        try (Audit audit = new Audit()) {
            AdminClient.Answer reset = client.admin("POST", "/keys/site/" + address, fields("reset", "true"));

            assertThat(audit.messages).as("the reset was applied").anyMatch(m -> m.contains("reset by 'admin'"));
            assertThat(reset.status())
                    .as("the answer to a reset that was applied: %s", reset.body())
                    .isEqualTo(200);
        }
    }

    /**
     * Four entries in Redis under 1 MB fields (of U+0001, which JSON writes as six characters): shown in full with
     * their addresses they would make a page of about 29 MB (of 1,000 entries, about 7 GB); the listing gives a small
     * answer.
     */
    @Test
    void entriesUnderHugeFieldsGiveABoundedListing() throws Exception {
        for (int i = 0; i < 4; i++) {
            byte[] field = new byte[1 << 20];
            Arrays.fill(field, (byte) 1);
            field[0] = (byte) ('a' + i);
            jedis.hset(ruleKey("site"), field, "limits\t5/1s\tmallory\t1".getBytes(StandardCharsets.UTF_8));
        }
        AdminClient.Answer page = client.admin("GET", "/keys/site?count=4", null);
        assertThat(page.status()).isEqualTo(200);

        assertThat(page.body().length())
                .as(
                        "a page of %d entries, each under a 1 MB field in Redis",
                        page.json().get("entries").size())
                .isLessThan(1_000_000);
    }

    /**
     * An entry under a 2,000-byte field (over 128 characters: listed with a {@code ~stored:} address of 2,675
     * characters) is removed by its listed address in the path; one under a 10,000-byte field, whose address no
     * request line could carry, is removed by the listing that finds it (a repair), so no listed entry is out of reach.
     */
    @Test
    void everyListedEntryIsRemovableAndOnesNoAddressCouldCarryAreRepaired() throws Exception {
        byte[] longest = "x".repeat(2_000).getBytes(StandardCharsets.UTF_8);
        byte[] tooLong = "z".repeat(10_000).getBytes(StandardCharsets.UTF_8);
        jedis.hset(ruleKey("site"), longest, "limits\t5/1s\tmallory\t1".getBytes(StandardCharsets.UTF_8));
        jedis.hset(ruleKey("site"), tooLong, "limits\t5/1s\tmallory\t1".getBytes(StandardCharsets.UTF_8));
        JsonNode entries = client.admin("GET", "/keys/site", null).json().get("entries");

        assertThat(entries).hasSize(1);
        assertThat(jedis.hexists(ruleKey("site"), tooLong))
                .as("repaired by the listing")
                .isFalse();
        String address = entries.get(0).get("address").asString();
        assertThat(address).startsWith("~stored:eHh4");
        assertThat(entries.get(0).get("key").asString())
                .as("shown cut")
                .hasSize(301)
                .endsWith("x…");
        AdminClient.Answer byPath = client.admin("DELETE", "/keys/site/" + address, null);
        assertThat(byPath.status()).as(byPath.body()).isEqualTo(200);
        assertThat(byPath.json().get("removed").asBoolean()).isTrue();
        assertThat(jedis.hexists(ruleKey("site"), longest))
                .as("removed by its address")
                .isFalse();
    }

    /**
     * A POST whose Content-Type starts with {@code application/x-www-form-urlencoded} but is another type
     * ({@code application/x-www-form-urlencoded-v2}), which Tomcat does not parse: its body, which names another key,
     * is refused rather than ignored, and the query's change is not applied.
     */
    @Test
    void aBodyTheContainerDoesNotReadIsNotIgnoredSilently() throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + server.port()
                        + AdminClient.ADMIN + "/keys/site?key=victim&limits="
                        + URLEncoder.encode("1/1s", StandardCharsets.UTF_8)))
                .header(
                        "Authorization",
                        "Basic " + Base64.getEncoder().encodeToString("admin:admin".getBytes(StandardCharsets.UTF_8)))
                .header("X-Forwarded-For", "192.0.2.252")
                .header("Content-Type", "application/x-www-form-urlencoded-v2")
                .POST(HttpRequest.BodyPublishers.ofString("key=other"))
                .build();
        HttpResponse<String> r = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());

        assertThat(r.statusCode()).as("a body that is not read: %s", r.body()).isIn(400, 415);
        assertThat(client.admin("GET", "/keys/site/victim", null).status())
                .as("nothing set")
                .isEqualTo(404);
    }
}
