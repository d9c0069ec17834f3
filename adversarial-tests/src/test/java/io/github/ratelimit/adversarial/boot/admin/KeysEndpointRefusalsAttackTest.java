package io.github.ratelimit.adversarial.boot.admin;

import static io.github.ratelimit.adversarial.boot.admin.AdminApp.body;
import static io.github.ratelimit.adversarial.boot.admin.AdminApp.json;
import static io.github.ratelimit.adversarial.boot.admin.AdminApp.message;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.testing.CapturedLog;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

/**
 * Attacks the {@code ratelimitkeys} endpoint of a Spring Boot application (real Tomcat, Spring Security, Redis) with
 * what it must refuse: rules that do not exist, limits the rule cannot use, more windows than a rule may have (also
 * when written into Redis behind the endpoint's back), fields of the wrong JSON type, tampered cursors; and tries to
 * forge lines of the audit log with a key and with an administrator's name.
 */
class KeysEndpointRefusalsAttackTest {

    private static final String[] RULES = {"by-client", "by-address", "log", "annotated-controller", "annotated-service"
    };

    @RegisterExtension
    static final AdminApp APP = new AdminApp();

    private static String windows(int n) {
        return IntStream.range(0, n)
                .mapToObj(i -> (1000 + i) + "/" + (i + 1) + "s")
                .collect(Collectors.joining(","));
    }

    @Test
    void everyRuleIsKnownBeforeItsFirstRequestAndAnUnknownRuleIs404NamingTheKnownOnes() throws Exception {
        // No request has reached the annotated controller or service: their rules are known from start-up.
        for (String rule : RULES) {
            HttpResponse<String> set = APP.admin("POST", "/" + rule + "/before-first-use", body("limits", "1/1h"));
            assertThat(set.statusCode()).as("%s: %s", rule, set.body()).isEqualTo(200);
            assertThat(APP.admin("GET", "/" + rule + "/before-first-use", null).statusCode())
                    .isEqualTo(200);
            assertThat(json(APP.admin("DELETE", "/" + rule + "/before-first-use", null))
                            .path("removed")
                            .asBoolean())
                    .isTrue();
        }
        List<HttpResponse<String>> unknown = List.of(
                APP.admin("POST", "/no-such-rule/k", body("limits", "1/1h")),
                APP.admin("POST", "/no-such-rule/k", body("plan", "tiny")),
                APP.admin("POST", "/no-such-rule/k", body("reset", true)),
                APP.admin("POST", "/no-such-rule", body("key", "k", "limits", "1/1h")),
                APP.admin("GET", "/no-such-rule/k", null),
                APP.admin("GET", "/no-such-rule?count=10", null),
                APP.admin("DELETE", "/no-such-rule/k", null));
        for (HttpResponse<String> r : unknown) {
            assertThat(r.statusCode()).as(r.body()).isEqualTo(404);
            assertThat(message(r)).contains("no-such-rule").contains(RULES);
        }
        assertThat(APP.jedis.exists(APP.ruleKey("no-such-rule")))
                .as("nothing stored")
                .isFalse();
    }

    @Test
    void limitsTheRuleCannotUseAre400WithTheValidationMessageAndNothingIsStored() throws Exception {
        String[][] cases = {
            {"log", "limits", "3/1h burst=50", "burst"},
            {"log", "limits", "5/1s,10/1s", "two limits share the window 1s"},
            {"log", "limits", "10001/1h", "10000"},
            {"log", "plan", "wide", "burst"},
            {"by-client", "limits", windows(250), "250 limits, more than the 8"},
            {"by-client", "limits", windows(9), "9 limits, more than the 8"},
            {"by-client", "limits", "lots", "invalid limit 'lots'"},
            {"by-client", "limits", "1/1h,", "invalid limit"},
            {"by-client", "plan", "platinum", "known plans: [tiny, wide]"}
        };
        for (String[] c : cases) {
            HttpResponse<String> r = APP.admin("POST", "/" + c[0] + "/unusable", body(c[1], c[2]));
            assertThat(r.statusCode())
                    .as("%s %s=%s: %s", c[0], c[1], c[2], r.body())
                    .isEqualTo(400);
            assertThat(message(r)).as("%s %s=%s", c[0], c[1], c[2]).contains(c[3]);
            assertThat(APP.admin("GET", "/" + c[0] + "/unusable", null).statusCode())
                    .as("nothing stored")
                    .isEqualTo(404);
        }
        assertThat(APP.admin("POST", "/log/usable", body("plan", "tiny")).statusCode())
                .isEqualTo(200);
        assertThat(APP.admin("POST", "/log/usable", body("limits", windows(8))).statusCode())
                .as("8 windows")
                .isEqualTo(200);
    }

    @Test
    void anEntryOfMoreWindowsThanARuleMayHaveWrittenIntoRedisIsIgnoredAndHeadersStayBounded() throws Exception {
        APP.jedis.hset(APP.ruleKey("by-client"), "wide-open", "limits\t" + windows(250) + "\tmallory\t1");
        assertThat(APP.admin("POST", "/by-client/wide-open-too", body("limits", windows(250)))
                        .statusCode())
                .isEqualTo(400);
        for (String client : new String[] {"wide-open", "wide-open-too"}) {
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> r = APP.call("/api/client/x", "X-Client: " + client);
                statuses.add(r.statusCode());
                int headerBytes = r.headers().map().entrySet().stream()
                        .mapToInt(e -> e.getKey().length()
                                + String.join(", ", e.getValue()).length()
                                + 4)
                        .sum();
                assertThat(headerBytes).as("%s: response header bytes", client).isLessThan(1024);
            }
            assertThat(statuses).as("%s: the rule's own 2/1h", client).containsExactly(200, 200, 429);
        }
        JsonNode shown = json(APP.admin("GET", "/by-client/wide-open", null));
        assertThat(shown.path("problem").asString()).contains("250 limits, more than the 8");
    }

    @Test
    void everyFieldHasAStrictJsonType() throws Exception {
        for (int i = 0; i < 2; i++) {
            assertThat(APP.call("/api/client/x", "X-Client: strict").statusCode())
                    .isEqualTo(200);
        }
        assertThat(APP.call("/api/client/x", "X-Client: strict").statusCode()).isEqualTo(429);
        // Actuator hands an operation its body's fields as text, so the string "true" cannot be told from true.
        String[] bodies = {
            "{\"reset\":\"yes\"}",
            "{\"reset\":\"on\"}",
            "{\"reset\":\"TRUE\"}",
            "{\"reset\":1}",
            "{\"reset\":false}",
            "{\"reset\":[true]}",
            "{\"limits\":5}",
            "{\"limits\":[\"5/1s\"]}",
            "{\"limits\":{\"a\":\"5/1s\"}}",
            "{\"plan\":true}",
            "{\"plan\":[\"tiny\"]}",
            "{\"limits\":\"5/1s\",\"reset\":true}",
            "{}",
            "{\"limits\":null}",
            "not json",
            "[]"
        };
        for (String b : bodies) {
            HttpResponse<String> r = APP.admin("POST", "/by-client/strict", b);
            assertThat(r.statusCode()).as("%s -> %s", b, r.body()).isEqualTo(400);
        }
        for (String b : new String[] {
            "{\"key\":{\"a\":1},\"reset\":true}",
            "{\"key\":[\"strict\"],\"reset\":true}",
            "{\"key\":\"\",\"reset\":true}",
            "{\"reset\":true}"
        }) {
            HttpResponse<String> r = APP.admin("POST", "/by-client", b);
            assertThat(r.statusCode()).as("%s -> %s", b, r.body()).isEqualTo(400);
        }
        assertThat(APP.call("/api/client/x", "X-Client: strict").statusCode())
                .as("nothing was reset")
                .isEqualTo(429);
        assertThat(APP.admin("GET", "/by-client/strict", null).statusCode())
                .as("nothing was set")
                .isEqualTo(404);
    }

    @Test
    void aQueryParameterOrBodyFieldCannotTurnAnOperationAwayFromThePathsRuleOrKey() throws Exception {
        // Actuator merges query parameters and body fields over the path's selectors: before, each of these acted on
        // bob, or on rule log, while the path (what a proxy, an audit of URLs or a reviewer sees) named alice.
        assertThat(APP.admin("POST", "/by-client/bob", body("limits", "9/1h")).statusCode())
                .isEqualTo(200);
        for (int i = 0; i < 2; i++) {
            assertThat(APP.call("/api/client/x", "X-Client: bob").statusCode()).isEqualTo(200);
        }
        String[][] requests = {
            {"POST", "/by-client/alice?key=bob", "{\"limits\":\"1/1h\"}"},
            {"POST", "/by-client/alice", "{\"key\":\"bob\",\"limits\":\"1/1h\"}"},
            {"POST", "/by-client/alice", "{\"key\":\"bob\",\"reset\":true}"},
            {"POST", "/by-client/alice", "{\"rule\":\"log\",\"limits\":\"1/1h\"}"},
            {"POST", "/by-client/alice?rule=log", "{\"plan\":\"tiny\"}"},
            {"POST", "/by-client?rule=log", "{\"key\":\"alice\",\"limits\":\"1/1h\"}"},
            {"DELETE", "/by-client/alice?key=bob", null},
            {"GET", "/by-client/alice?key=bob", null},
            {"GET", "/by-client?rule=log", null}
        };
        for (String[] r : requests) {
            HttpResponse<String> response = APP.admin(r[0], r[1], r[2]);
            assertThat(response.statusCode())
                    .as("%s %s %s: %s", r[0], r[1], r[2], response.body())
                    .isEqualTo(400);
            assertThat(message(response)).as(r[1]).contains("the path names").contains("give the");
        }
        assertThat(APP.jedis.hget(APP.ruleKey("by-client"), "bob"))
                .as("bob's entry is untouched")
                .startsWith("limits\t9/1h\t");
        assertThat(APP.jedis.hexists(APP.ruleKey("by-client"), "alice")).isFalse();
        assertThat(APP.jedis.hexists(APP.ruleKey("log"), "alice"))
                .as("nothing stored for rule log")
                .isFalse();
        assertThat(APP.call("/api/client/x", "X-Client: bob").statusCode())
                .as("bob was not reset")
                .isEqualTo(200);
        assertThat(APP.call("/api/client/x", "X-Client: bob").statusCode()).isEqualTo(200);
        // The same name given twice alike is no override; a key in the query of …/{rule} is the documented form.
        assertThat(APP.admin("POST", "/by-client/alice", body("key", "alice", "limits", "3/1h"))
                        .statusCode())
                .isEqualTo(200);
        assertThat(json(APP.admin("GET", "/by-client?key=bob", null))
                        .path("limits")
                        .get(0)
                        .asString())
                .isEqualTo("9/1h");
        assertThat(APP.jedis.hget(APP.ruleKey("by-client"), "alice")).startsWith("limits\t3/1h\t");
    }

    @Test
    void aFieldEchoedInA400IsEscaped() throws Exception {
        HttpResponse<String> r = APP.admin("POST", "/by-client/echo", body("reset", "yes\r\nforged\u202e' field 'x"));
        assertThat(r.statusCode()).isEqualTo(400);
        // Before, the value came back as it was: a line break, a bidi control and a quote that ends the field.
        assertThat(message(r)).doesNotContain("\r", "\n", "\u202e").contains("'yes\\r\\nforged\\u202e\\' field \\'x'");
        r = APP.admin("GET", "/by-client?count=" + AdminApp.query("1\u202e"), null);
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(message(r)).doesNotContain("\u202e").contains("'1\\u202e'");
    }

    @Test
    void aTamperedCursorOrCountIs400() throws Exception {
        for (String query : new String[] {
            "cursor=18446744073709551616",
            "cursor=99999999999999999999999999",
            "cursor=-1",
            "cursor=abc",
            "count=0",
            "count=5000",
            "count=abc",
            "cursor=1&cursor=2"
        }) {
            HttpResponse<String> r = APP.admin("GET", "/by-client?" + query, null);
            assertThat(r.statusCode()).as("%s -> %s", query, r.body()).isEqualTo(400);
        }
        assertThat(APP.admin("GET", "/by-client?cursor=0&count=5", null).statusCode())
                .isEqualTo(200);
    }

    @Test
    void neitherAKeyNorAnAdministratorsNameForgesALineOfTheAuditLog() throws Exception {
        String key = "evil\r\nINFO: Limits of rule 'by-client' key 'root' set to 1000000/1s by 'admin'\u2028\u0085\t";
        String forger = AdminApplication.FORGING_ADMIN;
        try (CapturedLog audit = CapturedLog.of("io.github.ratelimit.limits")) {
            assertThat(APP.as(forger, "forger", "POST", "/by-client/plain", body("limits", "1/1h"))
                            .statusCode())
                    .isEqualTo(200);
            assertThat(APP.as(forger, "forger", "POST", "/by-client/plain", body("reset", true))
                            .statusCode())
                    .isEqualTo(200);
            assertThat(audit.messages()).hasSize(2);
            assertNoForgedLine(audit.messages());
            assertThat(APP.as(forger, "forger", "POST", "/by-client", body("key", key, "limits", "1/1h"))
                            .statusCode())
                    .isEqualTo(200);
            assertThat(APP.as(forger, "forger", "POST", "/by-client", body("key", key, "reset", true))
                            .statusCode())
                    .isEqualTo(200);
            List<String> lines = audit.messages();
            assertThat(lines).hasSize(4);
            assertNoForgedLine(lines);
            assertThat(lines.subList(2, 4))
                    .allSatisfy(line -> assertThat(line)
                            .contains("evil\\r\\nINFO: Limits of rule")
                            .contains("\\u2028\\u0085\\t"));
        }
    }

    private static void assertNoForgedLine(List<String> lines) {
        for (String line : lines) {
            assertThat(line).doesNotContain("\r", "\n", "\u2028", "\u0085", "\t");
            assertThat(line).contains("'ops\\nINFO Rule \\'by-client\\' key \\'root\\' reset by \\'admin\\'\\u2028x'");
        }
    }
}
