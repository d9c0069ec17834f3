package io.github.ratelimit.adversarial.boot.admin;

import static io.github.ratelimit.adversarial.boot.admin.AdminApp.body;
import static io.github.ratelimit.adversarial.boot.admin.AdminApp.json;
import static io.github.ratelimit.adversarial.boot.admin.AdminApp.query;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

/**
 * Every key a resolver produces can be reached through the {@code ratelimitkeys} endpoint of a Spring Boot
 * application behind Spring Security's strict firewall: keys the limiter escapes ({@code + ~ \}), keys with
 * {@code % /} and dot segments, an IPv6 client's {@code /64}, a key with a control character, and keys over 128
 * characters (stored as their hash). For each, as the {@code ratelimits} endpoint shows it after rejections: reset,
 * set, show and delete, by the key in the JSON body and in the query, and by the address the listing gives in the
 * path; each change enforced by the next request.
 */
class KeysEndpointAddressingAttackTest {

    @RegisterExtension
    static final AdminApp APP = new AdminApp();

    /** A client of one rule: the URL it calls and the header that makes its key. */
    private record Client(String rule, String path, String header, String key) {}

    private static List<Client> clients() {
        String longValue = "k".repeat(200);
        List<Client> clients = new ArrayList<>();
        clients.add(
                new Client("by-address", "/api/address/x", "X-Forwarded-For: 2001:db8:9:9::1", "2001:db8:9:9::/64"));
        String[][] values = {
            {"a+b", "a\\+b"},
            {"t~x", "t\\~x"},
            {"~sha256:abc", "\\~sha256:abc"},
            {"back\\slash", "back\\\\slash"},
            {"100%", "100%"},
            {"100%25", "100%25"},
            {"a/b/../c", "a/b/../c"},
            {".", "."},
            {"..", ".."},
            {"tab\there", "tab\there"},
            {"two words", "two words"},
            {"o'brien(x)*!$,=@:", "o'brien(x)*!$,=@:"},
            {"k=v;x?y#z&w", "k=v;x?y#z&w"},
            {longValue, sha256(longValue)}
        };
        for (String[] v : values) {
            clients.add(new Client("by-client", "/api/client/x", "X-Client: " + v[0], v[1]));
        }
        return clients;
    }

    private static int call(Client c) throws Exception {
        return APP.call(c.path(), c.header()).statusCode();
    }

    /** The key the ratelimits endpoint shows for the client's rejections. */
    private static String shownKey(Client c) throws Exception {
        for (int i = 0; i < 2; i++) {
            assertThat(call(c)).as("%s", c).isEqualTo(200);
        }
        assertThat(call(c)).as("%s", c).isEqualTo(429);
        List<String> keys = new ArrayList<>();
        for (JsonNode e : APP.topRejectedKeys()) {
            if (e.path("rule").asString().equals(c.rule())) {
                keys.add(e.path("key").asString());
            }
        }
        assertThat(keys).as("%s", c).contains(c.key());
        return c.key();
    }

    /** The key the limiter stores a key over 128 characters as. */
    private static String sha256(String key) {
        try {
            return "~sha256:"
                    + java.util.HexFormat.of()
                            .formatHex(java.security.MessageDigest.getInstance("SHA-256")
                                    .digest(key.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The address the listing gives for the key. */
    private static String listedAddress(String rule, String key) throws Exception {
        JsonNode page = json(APP.admin("GET", "/" + rule + "?count=1000", null));
        for (JsonNode e : page.path("entries")) {
            if (e.path("key").asString().equals(key)) {
                return e.path("address").asString();
            }
        }
        throw new AssertionError("no entry for " + key + " in " + page);
    }

    private static boolean controlCharacters(String key) {
        return key.chars().anyMatch(Character::isISOControl);
    }

    @Test
    void everyKeyShownIsResetSetShownAndDeletedOverHttp() throws Exception {
        for (Client c : clients()) {
            String key = shownKey(c);
            String rule = c.rule();

            HttpResponse<String> reset = APP.admin("POST", "/" + rule, body("key", key, "reset", true));
            assertThat(reset.statusCode()).as("reset %s: %s", c, reset.body()).isEqualTo(200);
            assertThat(call(c)).as("%s: reset, a full bucket again", c).isEqualTo(200);

            HttpResponse<String> set = APP.admin("POST", "/" + rule, body("key", key, "limits", "20/1h"));
            assertThat(set.statusCode()).as("set %s: %s", c, set.body()).isEqualTo(200);
            assertThat(json(set).path("key").asString()).isEqualTo(key);
            for (int i = 0; i < 10; i++) {
                assertThat(call(c)).as("%s: 20/1h enforced, call %d", c, i).isEqualTo(200);
            }

            String address = listedAddress(rule, key);
            assertThat(address)
                    .as("%s: an address is one path segment, safe in a query", c)
                    .matches("[A-Za-z0-9._~:@!$'()*,=-]+")
                    .isNotIn(".", "..");
            HttpResponse<String> byAddress = APP.admin("GET", "/" + rule + "/" + address, null);
            assertThat(byAddress.statusCode())
                    .as("show %s by its address %s: %s", c, address, byAddress.body())
                    .isEqualTo(200);
            assertThat(json(byAddress).path("key").asString()).isEqualTo(key);
            assertThat(json(byAddress).at("/limits/0").asString()).isEqualTo("20/1h");
            HttpResponse<String> byQuery = APP.admin("GET", "/" + rule + "?key=" + query(address), null);
            assertThat(byQuery.statusCode()).as("show %s by ?key=<address>", c).isEqualTo(200);
            if (!controlCharacters(key)) {
                // Spring Security's firewall refuses control characters in parameters: those keys go by address.
                byQuery = APP.admin("GET", "/" + rule + "?key=" + query(key), null);
                assertThat(byQuery.statusCode())
                        .as("show %s by ?key=: %s", c, byQuery.body())
                        .isEqualTo(200);
                assertThat(json(byQuery).path("key").asString()).isEqualTo(key);
            }

            HttpResponse<String> delete = APP.admin("DELETE", "/" + rule + "/" + address, null);
            assertThat(delete.statusCode())
                    .as("delete %s: %s", c, delete.body())
                    .isEqualTo(200);
            assertThat(json(delete).path("removed").asBoolean()).isTrue();
            assertThat(APP.admin("GET", "/" + rule + "/" + address, null).statusCode())
                    .isEqualTo(404);
            for (int i = 0; i < 2; i++) {
                assertThat(call(c))
                        .as("%s: back to the rule's 2/1h after a reset", c)
                        .isEqualTo(200);
            }
            assertThat(call(c)).as("%s: back to the rule's 2/1h", c).isEqualTo(429);
            // Before, the reset by address was checked by its status alone, at a point where its effect did not show.
            HttpResponse<String> resetByAddress = APP.admin("POST", "/" + rule + "/" + address, body("reset", true));
            assertThat(resetByAddress.statusCode()).as("reset %s by address", c).isEqualTo(200);
            assertThat(call(c))
                    .as("%s: reset by its address, a full bucket again", c)
                    .isEqualTo(200);

            if (!controlCharacters(key)) {
                assertThat(APP.admin("POST", "/" + rule, body("key", key, "plan", "tiny"))
                                .statusCode())
                        .isEqualTo(200);
                assertThat(APP.jedis.hget(APP.ruleKey(rule), key))
                        .as("%s: the plan is stored", c)
                        .startsWith("plan\ttiny\tadmin\t");
                HttpResponse<String> deleteByQuery = APP.admin("DELETE", "/" + rule + "?key=" + query(key), null);
                assertThat(deleteByQuery.statusCode())
                        .as("delete %s by ?key=: %s", c, deleteByQuery.body())
                        .isEqualTo(200);
                assertThat(json(deleteByQuery).path("removed").asBoolean()).isTrue();
            }
        }
    }

    @Test
    void aKeyOverTheLengthLimitMayBeGivenInFullAsTheLimiterHashesIt() throws Exception {
        String value = "api-key-" + "0123456789".repeat(20);
        Client c = new Client("by-client", "/api/client/x", "X-Client: " + value, sha256(value));
        String hashed = shownKey(c);
        assertThat(APP.admin("POST", "/by-client", body("key", value, "reset", true))
                        .statusCode())
                .isEqualTo(200);
        assertThat(call(c))
                .as("the reset by the full key reached the hashed one")
                .isEqualTo(200);
        HttpResponse<String> set = APP.admin("POST", "/by-client", body("key", value, "limits", "20/1h"));
        assertThat(json(set).path("key").asString()).isEqualTo(hashed);
        assertThat(APP.jedis.hget(APP.ruleKey("by-client"), hashed))
                .as("stored under the hash")
                .startsWith("limits\t20/1h\tadmin\t");
        assertThat(APP.jedis.hexists(APP.ruleKey("by-client"), value))
                .as("never under the key in full")
                .isFalse();
        assertThat(json(APP.admin("GET", "/by-client?key=" + query(value), null))
                        .path("key")
                        .asString())
                .isEqualTo(hashed);
        assertThat(json(APP.admin("DELETE", "/by-client?key=" + query(value), null))
                        .path("removed")
                        .asBoolean())
                .isTrue();
    }

    @Test
    void anEntryStoredUnderALongKeyInFullIsListedWithAnAddressThatShowsAndDeletesIt() throws Exception {
        String legacy = "legacy-" + "0123456789".repeat(15);
        APP.jedis.hset(APP.ruleKey("log"), legacy, "limits\t3/1h\tolder-version\t1");
        String address = listedAddress("log", legacy);
        assertThat(address).startsWith("~stored:");
        // Before, the listing's address was the key itself, which the endpoint hashed: 404, and DELETE removed nothing.
        HttpResponse<String> shown = APP.admin("GET", "/log/" + address, null);
        assertThat(shown.statusCode()).as(shown.body()).isEqualTo(200);
        assertThat(json(shown).path("key").asString()).isEqualTo(legacy);
        HttpResponse<String> deleted = APP.admin("DELETE", "/log/" + address, null);
        assertThat(json(deleted).path("removed").asBoolean()).as(deleted.body()).isTrue();
        assertThat(json(deleted).path("key").asString()).isEqualTo(legacy);
        assertThat(APP.jedis.hexists(APP.ruleKey("log"), legacy)).isFalse();
    }

    @Test
    void aKeyWithALoneSurrogateIs400AndReachesNoOtherKey() throws Exception {
        // JSON may carry a lone surrogate ("\ud800"); UTF-8 cannot, and wrote it as '?': the key '?' was changed.
        assertThat(APP.admin("POST", "/by-client", body("key", "?", "limits", "7/1h"))
                        .statusCode())
                .isEqualTo(200);
        for (String b : new String[] {
            "{\"key\":\"\\ud800\",\"limits\":\"1/1h\"}",
            "{\"key\":\"\\ud800\",\"reset\":true}",
            "{\"key\":\"a\\udc00\",\"plan\":\"tiny\"}"
        }) {
            HttpResponse<String> r = APP.admin("POST", "/by-client", b);
            assertThat(r.statusCode()).as("%s -> %s", b, r.body()).isEqualTo(400);
            assertThat(AdminApp.message(r)).contains("lone UTF-16 surrogate");
        }
        assertThat(APP.jedis.hget(APP.ruleKey("by-client"), "?"))
                .as("the key '?' is untouched")
                .startsWith("limits\t7/1h\tadmin\t");
        assertThat(json(APP.admin("DELETE", "/by-client?key=" + query("?"), null))
                        .path("removed")
                        .asBoolean())
                .isTrue();
    }

    @Test
    void anAddressThatIsNotOneIs400() throws Exception {
        for (String address : new String[] {"~b64:", "~b64:!!!", "~b64:_w", "~b64:Y"}) {
            HttpResponse<String> r = APP.admin("GET", "/by-client/" + address, null);
            assertThat(r.statusCode()).as("%s -> %s", address, r.body()).isEqualTo(400);
            assertThat(AdminApp.message(r)).contains("address");
        }
        assertThat(APP.admin("GET", "/by-client/~b64:YQ", null).statusCode())
                .as("key 'a': no entry")
                .isEqualTo(404);
    }
}
