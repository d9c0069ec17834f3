package io.github.ratelimit.adversarial.boot.admin;

import static io.github.ratelimit.adversarial.boot.admin.AdminApp.body;
import static io.github.ratelimit.adversarial.boot.admin.AdminApp.json;
import static io.github.ratelimit.adversarial.boot.admin.AdminApp.message;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

/**
 * A client whose API key is 200 characters long, on a Spring MVC application with Spring Security, Actuator and a
 * real Redis, over real HTTP: the {@code ratelimits} endpoint lists it as {@code ~sha256:<hex>}, and that address,
 * in the path of the {@code ratelimitkeys} endpoint or in its JSON body, reaches the state the client's requests use
 * (a reset unblocks it; limits and a plan set through it are the ones it then gets). An address in the hash's form
 * that is no hash is refused with a 400 saying what to give, never answered 200 as if it were done.
 */
class KeysEndpointHashedKeyTest {

    @RegisterExtension
    static final AdminApp APP = new AdminApp();

    /** A 200-character API key, different for each call (tests share the application). */
    private static String apiKey(String tag) {
        String key = tag + "-" + "0123456789abcdef".repeat(13);
        return key.substring(0, 200);
    }

    private static String sha256(String key) throws Exception {
        return "~sha256:"
                + HexFormat.of()
                        .formatHex(MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8)));
    }

    private static List<Integer> calls(String path, String apiKey, int n) throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            statuses.add(APP.call(path, "X-Client: " + apiKey).statusCode());
        }
        return statuses;
    }

    private static long allowed(String path, String apiKey, int n) throws Exception {
        return calls(path, apiKey, n).stream().filter(s -> s == 200).count();
    }

    /** The key of the rule's entry among the most-rejected keys that is the given one, as the endpoint lists it. */
    private static String listed(String rule, String key) throws Exception {
        for (JsonNode e : APP.topRejectedKeys()) {
            if (e.path("rule").asString().equals(rule)
                    && e.path("key").asString().equals(key)) {
                return e.path("key").asString();
            }
        }
        throw new AssertionError("rule " + rule + " key " + key + " not among " + APP.topRejectedKeys());
    }

    @Test
    void theListedHashResetsTheClientAndItsLimitsAndPlanAreTheOnesItGets() throws Exception {
        String apiKey = apiKey("mvc");
        assertThat(calls("/api/log/x", apiKey, 6)).containsExactly(200, 200, 200, 200, 200, 429);
        String address = listed("log", sha256(apiKey));

        HttpResponse<String> reset = APP.admin("POST", "/log/" + address, body("reset", true));
        assertThat(reset.statusCode()).as(reset.body()).isEqualTo(200);
        assertThat(json(reset).path("key").asString()).isEqualTo(address);
        assertThat(calls("/api/log/x", apiKey, 1))
                .as("unblocked by the reset through the listed address")
                .containsExactly(200);

        assertThat(APP.admin("POST", "/log/" + address, body("reset", true)).statusCode())
                .isEqualTo(200);
        HttpResponse<String> set = APP.admin("POST", "/log/" + address, body("limits", "2/1h"));
        assertThat(set.statusCode()).as(set.body()).isEqualTo(200);
        assertThat(allowed("/api/log/x", apiKey, 6))
                .as("2/1h set through the listed address, not the rule's 5/1m")
                .isEqualTo(2);
        assertThat(json(APP.admin("GET", "/log/" + address, null))
                        .path("limits")
                        .toString())
                .isEqualTo("[\"2/1h\"]");

        // The same client on rule by-client (2/1h), through the address in the JSON body: plan tiny (1/1h).
        assertThat(calls("/api/client/x", apiKey, 3)).containsExactly(200, 200, 429);
        String byClient = listed("by-client", sha256(apiKey));
        assertThat(APP.admin("POST", "/by-client", body("key", byClient, "reset", true))
                        .statusCode())
                .isEqualTo(200);
        assertThat(APP.admin("POST", "/by-client", body("key", byClient, "plan", "tiny"))
                        .statusCode())
                .isEqualTo(200);
        assertThat(allowed("/api/client/x", apiKey, 6))
                .as("plan tiny set through the listed address")
                .isEqualTo(1);
    }

    @Test
    void anAddressInTheHashsFormThatIsNoHashIsRefusedWith400NotAnsweredAsDone() throws Exception {
        String apiKey = apiKey("bad");
        assertThat(calls("/api/client/x", apiKey, 3)).containsExactly(200, 200, 429);
        String hash = listed("by-client", sha256(apiKey));
        String upper = "~sha256:" + hash.substring("~sha256:".length()).toUpperCase(Locale.ROOT);
        String cut = hash.substring(0, hash.length() - 1);

        for (String address : new String[] {upper, cut}) {
            for (Object change : List.of(body("reset", true), body("limits", "5/1s"), body("plan", "wide"))) {
                HttpResponse<String> byPath = APP.admin("POST", "/by-client/" + address, change);
                assertThat(byPath.statusCode())
                        .as("%s %s: %s", address, change, byPath.body())
                        .isEqualTo(400);
                assertThat(message(byPath))
                        .contains("is no key of rule 'by-client'")
                        .contains("the address a listing gives");
            }
            HttpResponse<String> inBody = APP.admin("POST", "/by-client", body("key", address, "reset", true));
            assertThat(inBody.statusCode()).as(inBody.body()).isEqualTo(400);
        }
        assertThat(APP.jedis.hkeys(APP.ruleKey("by-client")))
                .as("nothing written")
                .doesNotContain(upper, cut);
        assertThat(calls("/api/client/x", apiKey, 1))
                .as("still blocked: nothing was reset")
                .containsExactly(429);
    }
}
