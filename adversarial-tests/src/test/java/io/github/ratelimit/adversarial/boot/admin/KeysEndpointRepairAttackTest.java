package io.github.ratelimit.adversarial.boot.admin;

import static io.github.ratelimit.adversarial.boot.admin.AdminApp.body;
import static io.github.ratelimit.adversarial.boot.admin.AdminApp.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

/**
 * Writes garbage into the limit store's Redis keys behind a running Spring Boot application's back (a rule's hash of
 * the wrong type, a stream of changes of the wrong type, an entry that does not parse) and checks over real HTTP
 * that the garbage is ignored or replaced, never obeyed, and never reaches another rule.
 */
class KeysEndpointRepairAttackTest {

    @RegisterExtension
    static final AdminApp APP = new AdminApp();

    @Test
    void aRuleHashOfTheWrongTypeNeitherFailsItsRuleNorTouchesAnotherRulesLimits() throws Exception {
        APP.jedis.set(APP.ruleKey("log"), "garbage");
        assertThat(APP.call("/api/log/x", "X-Client: first-probe").statusCode()).isEqualTo(200);
        assertThat(APP.admin("POST", "/by-client/healthy", body("limits", "20/1h"))
                        .statusCode())
                .isEqualTo(200);
        for (int i = 0; i < 10; i++) {
            // Each probe reads the broken rule's hash for a key not read before.
            assertThat(APP.call("/api/log/x", "X-Client: probe-" + i).statusCode())
                    .isEqualTo(200);
            assertThat(APP.call("/api/client/x", "X-Client: healthy").statusCode())
                    .as("call %d of healthy's own 20/1h, after a read of the broken rule", i)
                    .isEqualTo(200);
        }
        assertThat(APP.admin("GET", "/log/probe-1", null).statusCode()).isEqualTo(404);
        HttpResponse<String> page = APP.admin("GET", "/log?count=10", null);
        assertThat(page.statusCode()).as(page.body()).isEqualTo(200);
        assertThat(json(page).path("entries")).isEmpty();

        HttpResponse<String> change = APP.admin("POST", "/log/probe-1", body("limits", "1/1m"));
        assertThat(change.statusCode())
                .as("the change replaces the garbage: %s", change.body())
                .isEqualTo(200);
        assertThat(APP.jedis.type(APP.ruleKey("log"))).isEqualTo("hash");
        assertThat(APP.call("/api/log/x", "X-Client: probe-1").statusCode())
                .as("1/1m, one call made")
                .isEqualTo(429);
    }

    @Test
    void aStreamOfTheWrongTypeIsReplacedAndEveryChangeIsAppliedWhole() throws Exception {
        APP.jedis.set(APP.stream(), "garbage");
        HttpResponse<String> change = APP.admin("POST", "/by-client/streamy", body("limits", "20/1h"));
        assertThat(change.statusCode()).as(change.body()).isEqualTo(200);
        assertThat(APP.jedis.type(APP.stream())).isEqualTo("stream");
        assertThat(APP.jedis.xlen(APP.stream()))
                .as("a repair entry, then the change")
                .isEqualTo(2);
        for (int i = 0; i < 10; i++) {
            assertThat(APP.call("/api/client/x", "X-Client: streamy").statusCode())
                    .isEqualTo(200);
        }

        // Garbage again, and no change to replace it: the refresh does, within its interval (1 s).
        APP.jedis.set(APP.stream(), "garbage again");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> APP.jedis.type(APP.stream()).equals("stream"));
        assertThat(APP.admin("POST", "/by-client/after-repair", body("limits", "20/1h"))
                        .statusCode())
                .isEqualTo(200);
        for (int i = 0; i < 10; i++) {
            assertThat(APP.call("/api/client/x", "X-Client: after-repair").statusCode())
                    .isEqualTo(200);
        }
    }

    @Test
    void anUnreadableEntryGivesTheRulesOwnLimitsAndIsListedAsUnreadable() throws Exception {
        byte[] hash = APP.ruleKey("by-client").getBytes(StandardCharsets.UTF_8);
        APP.jedis.hset(hash, "junk".getBytes(StandardCharsets.UTF_8), "garbage".getBytes(StandardCharsets.UTF_8));
        APP.jedis.hset(hash, "binary".getBytes(StandardCharsets.UTF_8), new byte[] {(byte) 0xC3, 0x28, 9, 0});
        APP.jedis.hset(
                hash,
                "no-plan".getBytes(StandardCharsets.UTF_8),
                "plan\tgold\tops\t1".getBytes(StandardCharsets.UTF_8));
        assertThat(APP.admin("POST", "/by-client/readable", body("limits", "20/1h"))
                        .statusCode())
                .isEqualTo(200);

        for (String key : new String[] {"junk", "binary", "no-plan"}) {
            HttpResponse<String> shown = APP.admin("GET", "/by-client/" + key, null);
            assertThat(shown.statusCode()).as(shown.body()).isEqualTo(200);
            assertThat(json(shown).path("problem").asString()).as(key).isNotBlank();
            assertThat(json(shown).path("limits")).as(key).isEmpty();
            for (int i = 0; i < 2; i++) {
                assertThat(APP.call("/api/client/x", "X-Client: " + key).statusCode())
                        .isEqualTo(200);
            }
            assertThat(APP.call("/api/client/x", "X-Client: " + key).statusCode())
                    .as("%s: the rule's own 2/1h", key)
                    .isEqualTo(429);
        }
        HttpResponse<String> page = APP.admin("GET", "/by-client?count=100", null);
        assertThat(page.statusCode()).as(page.body()).isEqualTo(200);
        java.util.Map<String, JsonNode> listed = new java.util.HashMap<>();
        json(page).path("entries").forEach(e -> listed.put(e.path("key").asString(), e));
        // Before, a count of entries with a problem and a size of at least 4: neither said which entry was which.
        for (String key : new String[] {"junk", "binary", "no-plan"}) {
            assertThat(listed.get(key)).as(key).isNotNull();
            assertThat(listed.get(key).path("problem").asString())
                    .as(key)
                    .startsWith(key.equals("no-plan") ? "plan 'gold' is not known" : "unreadable: ");
            assertThat(listed.get(key).path("limits")).as(key).isEmpty();
        }
        assertThat(listed.get("readable").has("problem")).isFalse();
        assertThat(listed.get("readable").at("/limits/0").asString()).isEqualTo("20/1h");
    }
}
