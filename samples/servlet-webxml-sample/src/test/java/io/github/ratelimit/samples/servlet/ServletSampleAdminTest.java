package io.github.ratelimit.samples.servlet;

import static io.github.ratelimit.samples.servlet.AdminClient.fields;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;

/**
 * The sample's admin servlet ({@code /ratelimit-admin/*} in its web.xml) over real HTTP in a real Tomcat, with the
 * local store: who may use it (the container's Basic authentication and role {@code ratelimit-admin}), what it shows
 * after real rejections, a reset that lets a client in again, and input it refuses with 400 and problem+json.
 */
class ServletSampleAdminTest {

    private SampleServer server;
    private AdminClient client;

    @BeforeEach
    void start() throws Exception {
        server = SampleServer.start(0, Map.of());
        client = new AdminClient(server.port());
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    /**
     * GETs /hello until an answer is not a 200, at most 100 times, and checks it is a 429. hello allows 5 a second
     * and puts a token back every 200 ms: exactly 5 pass when the requests take less than 200 ms, and one more for
     * each 200 ms they took (measured around all of them, so never less than the server saw); a slow machine must
     * not decide the test.
     */
    private void exhaustHello() throws Exception {
        List<Integer> statuses = new ArrayList<>();
        long start = System.nanoTime();
        do {
            statuses.add(client.get("/hello").status());
        } while (statuses.get(statuses.size() - 1) == 200 && statuses.size() < 100);
        long tokensBack = (System.nanoTime() - start) / 200_000_000L;
        assertThat(statuses.get(statuses.size() - 1)).as("%s", statuses).isEqualTo(429);
        assertThat(statuses.stream().filter(s -> s == 200).count())
                .as("%s, %d tokens back meanwhile", statuses, tokensBack)
                .isBetween(5L, 5 + tokensBack);
    }

    @ParameterizedTest
    @CsvSource({
        "GET, /",
        "GET, /health",
        "GET, /rejected",
        "GET, /keys/hello",
        "POST, /keys/hello/x",
        "DELETE, /keys/hello/x",
        "GET, /no-such-path"
    })
    void onlyTheAdminRoleGetsIn(String method, String path) throws Exception {
        AdminClient.Answer anonymous = client.send(method, AdminClient.ADMIN + path, null, null);
        assertThat(anonymous.status()).as("no credentials").isEqualTo(401);
        assertThat(anonymous.response().headers().firstValue("WWW-Authenticate"))
                .hasValueSatisfying(v -> assertThat(v).startsWith("Basic"));
        assertThat(client.send(method, AdminClient.ADMIN + path, "alice", null).status())
                .as("role user only")
                .isEqualTo(403);
        assertThat(client.send(method, AdminClient.ADMIN + path, "admin", null).status())
                .as("role ratelimit-admin")
                .isNotIn(401, 403);
    }

    @Test
    void showsTheRulesTheStoresOfBothFiltersAndTheKeysJustRejected() throws Exception {
        exhaustHello();
        AdminClient.Answer summary = client.admin("GET", "/", null);
        assertThat(summary.status()).isEqualTo(200);
        JsonNode json = summary.json();
        List<String> rules = new ArrayList<>();
        json.get("rules").forEach(r -> rules.add(r.get("name").asString()));
        assertThat(rules)
                .contains(
                        "site",
                        "me",
                        "search",
                        "hello",
                        "reports",
                        "login-failures-by-address",
                        "login-failures-by-user");
        JsonNode hello = null;
        for (JsonNode r : json.get("rules")) {
            hello = r.get("name").asString().equals("hello") ? r : hello;
        }
        assertThat(hello.get("limits").toString()).isEqualTo("[\"5/1s\",\"100/1m\"]");
        assertThat(hello.get("mode").asString()).isEqualTo("HARD");
        List<String> filters = new ArrayList<>();
        json.get("stores").forEach(s -> {
            filters.add(s.get("filter").asString());
            assertThat(s.get("type").asString()).isEqualTo("LocalBucketStore");
        });
        assertThat(filters).containsExactly("rateLimitBeforeAuthentication", "rateLimit");
        String key = client.ipKey(json.get("topRejectedKeys"), "hello");
        assertThat(key).contains(client.clientIp);
        // The same keys at /rejected, as many as asked for.
        JsonNode rejected =
                client.admin("GET", "/rejected?count=1", null).json().get("topRejectedKeys");
        assertThat(rejected).hasSize(1);
        assertThat(rejected.get(0).get("key").asString()).isEqualTo(key);
        assertThat(rejected.get(0).get("count").asLong()).isEqualTo(1);
    }

    @Test
    void aResetKeyIsAllowedAgainAtOnce() throws Exception {
        exhaustHello();
        String key = client.ipKey(client.admin("GET", "/rejected", null).json().get("topRejectedKeys"), "hello");
        AdminClient.Answer reset = client.admin("POST", "/keys/hello/" + key, fields("reset", "true"));
        assertThat(reset.status()).isEqualTo(200);
        assertThat(reset.json().get("reset").asBoolean()).isTrue();
        assertThat(reset.json().get("key").asString()).isEqualTo(key);
        assertThat(client.get("/hello").status())
                .as("the key's bucket is full again")
                .isEqualTo(200);
        // The key in the body works the same, for any key.
        for (int i = 0; i < 10 && client.get("/hello").status() != 429; i++) {
            // spends the rest of the second's tokens
        }
        assertThat(client.get("/hello").status()).isEqualTo(429);
        assertThat(client.admin("POST", "/keys/hello", fields("key", key, "reset", "true"))
                        .status())
                .isEqualTo(200);
        assertThat(client.get("/hello").status()).isEqualTo(200);
    }

    @Test
    void healthIsUpWithTheLocalStore() throws Exception {
        JsonNode health = client.admin("GET", "/health", null).json();
        assertThat(health.get("status").asString()).isEqualTo("UP");
        assertThat(health.get("stores"))
                .hasSize(2)
                .allSatisfy(s -> assertThat(s.get("status").asString()).isEqualTo("UP"));
    }

    @Test
    void perKeyLimitsNeedTheLimitStore() throws Exception {
        for (String[] call :
                new String[][] {{"GET", "/keys/me"}, {"GET", "/keys/me/bob"}, {"DELETE", "/keys/me/bob"}}) {
            AdminClient.Answer a = client.admin(call[0], call[1], null);
            assertThat(a.status()).isEqualTo(404);
            assertThat(a.problem()).contains("per-key limits are not kept at run time here");
        }
        AdminClient.Answer set = client.admin("POST", "/keys/me/bob", fields("limits", "5/1m"));
        assertThat(set.status()).isEqualTo(404);
    }

    /** Each refusal: the request (method, admin path, form fields), its status, a part of its message. */
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "GET    | /rejected?count=abc          |                       | 400 | \"count\" is 'abc'; it must be a whole number, 1 to 1000",
                "GET    | /rejected?count=0            |                       | 400 | it must be a whole number, 1 to 1000",
                "GET    | /rejected?count=99999999999  |                       | 400 | it must be a whole number, 1 to 1000",
                "GET    | /rejected?count=1&count=2    |                       | 400 | \"count\" is a list (given twice?); it must be one string",
                "POST   | /keys/hello/x                | reset=yes             | 400 | \"reset\" is 'yes'; it can only be the JSON boolean true",
                "POST   | /keys/hello/x                |                       | 400 | give exactly one of \"limits\"",
                "POST   | /keys/hello/x                | reset=true,plan=pro   | 400 | give exactly one of \"limits\"",
                "POST   | /keys/hello/x?key=y          | reset=true            | 400 | the path names key 'x', but a query parameter or body field \"key\" names 'y'",
                "POST   | /keys/hello/x?rule=site      | reset=true            | 400 | the path names rule 'hello', but",
                "POST   | /keys/hello                  | reset=true            | 400 | \"key\" is missing",
                "POST   | /keys/hello/~b64:!!!         | reset=true            | 400 | is not ~b64: followed by a key's UTF-8 bytes in base64url",
                "POST   | /keys/no-such-rule/x         | reset=true            | 404 | rule 'no-such-rule' is not known here; known rules: [",
                "GET    | /no-such-path                |                       | 404 | no such rate-limit admin path",
                "GET    | /keys                        |                       | 404 | no such rate-limit admin path",
                "GET    | /keys/hello/x/y              |                       | 404 | no such rate-limit admin path",
                "PUT    | /keys/hello/x                |                       | 405 | this path answers GET, HEAD, POST, DELETE",
                "POST   | /                            |                       | 405 | this path answers GET, HEAD",
                "DELETE | /health                      |                       | 405 | this path answers GET, HEAD"
            })
    void refusesBadInputWithProblemDetails(String method, String path, String form, int status, String message)
            throws Exception {
        Map<String, String> fields = null;
        if (form != null) {
            fields = new java.util.LinkedHashMap<>();
            for (String pair : form.split(",")) {
                fields.put(pair.substring(0, pair.indexOf('=')), pair.substring(pair.indexOf('=') + 1));
            }
        } else if (method.equals("POST")) {
            fields = Map.of();
        }
        AdminClient.Answer a = client.admin(method, path, fields);
        assertThat(a.status()).as(a.body()).isEqualTo(status);
        assertThat(a.problem()).contains(message);
        if (status == 405) {
            assertThat(a.response().headers().firstValue("Allow")).isPresent();
        }
    }

    @Test
    void refusesAJsonBodyWith415() throws Exception {
        java.net.http.HttpRequest request = java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://localhost:" + server.port() + AdminClient.ADMIN + "/keys/hello/x"))
                .header(
                        "Authorization",
                        "Basic " + java.util.Base64.getEncoder().encodeToString("admin:admin".getBytes()))
                .header("Content-Type", "application/json")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"reset\":true}"))
                .build();
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient()
                .send(request, java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(415);
        assertThat(r.body()).contains("give the fields as a form (application/x-www-form-urlencoded)");
    }

    @Test
    void hugeAndStrangeKeysAreAnsweredNeverWithA500() throws Exception {
        // A key far over 128 characters is hashed as the limiter hashes it: a reset of it is a reset of that key.
        String huge = "k".repeat(200_000);
        AdminClient.Answer reset = client.admin("POST", "/keys/hello", fields("key", huge, "reset", "true"));
        assertThat(reset.status()).isEqualTo(200);
        assertThat(reset.json().get("key").asString()).startsWith("~sha256:");
        // Too long for a request line: the container refuses it before the application sees it.
        AdminClient.Answer tooLong =
                client.send("GET", AdminClient.ADMIN + "/keys/hello/" + "k".repeat(20_000), "admin", null);
        assertThat(tooLong.status()).isBetween(400, 499);
        // Control characters, quotes and markup are escaped in the JSON, and the key is reset as given.
        String strange = "a\"b\\c<d>&\u0001\u2028e";
        AdminClient.Answer escaped = client.admin("POST", "/keys/hello", fields("key", strange, "reset", "true"));
        assertThat(escaped.status()).isEqualTo(200);
        assertThat(escaped.body()).doesNotContain("<", ">", "&", "\u0001", "\u2028");
        assertThat(escaped.json().get("key").asString()).isEqualTo(strange);
    }
}
