package io.github.ratelimit.samples.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.StringJoiner;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * Talks HTTP to the sample's server as a browser or a script would: its own client address (through the trusted
 * proxy's X-Forwarded-For), Basic credentials or none, form bodies. Reads JSON answers and checks that every answer
 * of the admin servlet is well-formed: JSON for a success, problem+json with its status for a failure, never a 500.
 */
final class AdminClient {

    static final ObjectMapper JSON = new ObjectMapper();
    static final String ADMIN = "/ratelimit-admin";

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final int port;
    final String clientIp = "203.0.113." + (1 + (int) (Math.random() * 250));
    /** The operator's own address: the rules limit the admin's requests too, apart from the client's. */
    private final String adminIp = "192.0.2." + (1 + (int) (Math.random() * 250));

    AdminClient(int port) {
        this.port = port;
    }

    /** An answer: status, content type, body. */
    record Answer(int status, String contentType, String body, HttpResponse<String> response) {

        JsonNode json() {
            return JSON.readTree(body);
        }

        /** @return the problem's detail, after checking the answer is a problem+json of its status */
        String problem() {
            assertThat(contentType).as(body).startsWith("application/problem+json");
            JsonNode json = json();
            assertThat(json.get("status").asInt()).isEqualTo(status);
            assertThat(json.get("type").asString()).isEqualTo("about:blank");
            return json.get("detail").asString();
        }
    }

    /**
     * @param method the HTTP method
     * @param path the path, query included
     * @param user a user whose password is their name ({@code alice}, {@code bob}, {@code admin}), or {@code null}
     * @param form form fields for the body, or {@code null} for none
     * @return the answer
     */
    Answer send(String method, String path, String user, Map<String, String> form) throws Exception {
        return send(clientIp, method, path, user, form);
    }

    private Answer send(String ip, String method, String path, String user, Map<String, String> form) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .timeout(Duration.ofSeconds(10))
                .header("X-Forwarded-For", ip);
        if (user != null) {
            String token = Base64.getEncoder().encodeToString((user + ":" + user).getBytes(StandardCharsets.UTF_8));
            b.header("Authorization", "Basic " + token);
        }
        if (form != null) {
            b.header("Content-Type", "application/x-www-form-urlencoded");
            b.method(method, HttpRequest.BodyPublishers.ofString(form(form)));
        } else {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        }
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        Answer answer = new Answer(
                r.statusCode(), r.headers().firstValue("Content-Type").orElse(""), r.body(), r);
        assertThat(answer.status()).as("%s %s: %s", method, path, r.body()).isNotEqualTo(500);
        return answer;
    }

    /** As the admin, from the operator's address, to the admin servlet. */
    Answer admin(String method, String adminPath, Map<String, String> form) throws Exception {
        Answer a = send(adminIp, method, ADMIN + adminPath, "admin", form);
        boolean health = adminPath.equals("/health") && (a.status() == 200 || a.status() == 503);
        if (a.status() >= 400 && a.status() != 401 && !health) {
            a.problem();
        } else if ((a.status() < 300 || health) && !method.equals("HEAD")) {
            // A health check's 503 is its report, as JSON, like the 200 (as Actuator's health answers too).
            assertThat(a.contentType()).startsWith("application/json");
            a.json();
        }
        return a;
    }

    Answer get(String path) throws Exception {
        return send("GET", path, null, null);
    }

    static Map<String, String> fields(String... nameValues) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < nameValues.length; i += 2) {
            m.put(nameValues[i], nameValues[i + 1]);
        }
        return m;
    }

    static String form(Map<String, String> fields) {
        StringJoiner body = new StringJoiner("&");
        fields.forEach((k, v) -> body.add(
                URLEncoder.encode(k, StandardCharsets.UTF_8) + "=" + URLEncoder.encode(v, StandardCharsets.UTF_8)));
        return body.toString();
    }

    /** @return this client's key for rule {@code site} and {@code hello} (keyed by the client address) */
    String ipKey(JsonNode topRejectedKeys, String rule) {
        for (JsonNode e : topRejectedKeys) {
            if (e.get("rule").asString().equals(rule) && e.get("key").asString().contains(clientIp)) {
                return e.get("key").asString();
            }
        }
        throw new AssertionError("no rejected key of rule " + rule + " for " + clientIp + " in " + topRejectedKeys);
    }
}
