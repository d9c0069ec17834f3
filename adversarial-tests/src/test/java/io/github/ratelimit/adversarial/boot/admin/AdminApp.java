package io.github.ratelimit.adversarial.boot.admin;

import io.github.ratelimit.testing.redis.RedisServer;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import redis.clients.jedis.RedisClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * One running {@link AdminApplication} on a real Tomcat and a real Redis it starts, for a test class
 * ({@code @RegisterExtension static final AdminApp APP = new AdminApp();}), and the HTTP calls the tests make to it:
 * the application's own URLs, and the {@code ratelimitkeys} endpoint as an administrator.
 *
 * <p>Rules: {@code by-client} (URL {@code /api/client/**}, key {@code header:X-Client}, {@code 2/1h}),
 * {@code by-address} ({@code /api/address/**}, key {@code ip} behind the trusted proxy 127.0.0.1, {@code 2/1h}),
 * {@code log} ({@code /api/log/**}, key {@code header:X-Client}, {@code 5/1m}, a sliding window log), and the
 * annotations' {@code annotated-controller} and {@code annotated-service}. Plans: {@code wide} ({@code 100/1m
 * burst=500}) and {@code tiny} ({@code 1/1h}).
 */
final class AdminApp implements BeforeAllCallback, AfterAllCallback {

    static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    final String prefix = "adm" + UUID.randomUUID().toString().substring(0, 6);
    RedisServer redis;
    RedisClient jedis;
    private ConfigurableApplicationContext context;
    int port;

    @Override
    public void beforeAll(ExtensionContext extension) {
        redis = RedisServer.start();
        jedis = RedisClient.builder().hostAndPort(redis.hostAndPort()).build();
        List<String> properties = new ArrayList<>(List.of(
                "server.port=0",
                "server.address=127.0.0.1",
                "spring.main.banner-mode=off",
                "logging.level.root=warn",
                "logging.level.io.github.ratelimit.limits=info",
                "ratelimit.redis.url=" + redis.uri(),
                "ratelimit.redis.key-prefix=" + prefix,
                "ratelimit.limit-store.enabled=true",
                "ratelimit.trusted-proxies=127.0.0.1",
                "ratelimit.plans.wide=100/1m burst=500",
                "ratelimit.plans.tiny=1/1h",
                "ratelimit.rules[0].name=by-client",
                "ratelimit.rules[0].paths=/api/client/**",
                "ratelimit.rules[0].key=header:X-Client",
                "ratelimit.rules[0].limits=2/1h",
                "ratelimit.rules[1].name=by-address",
                "ratelimit.rules[1].paths=/api/address/**",
                "ratelimit.rules[1].key=ip",
                "ratelimit.rules[1].limits=2/1h",
                "ratelimit.rules[2].name=log",
                "ratelimit.rules[2].paths=/api/log/**",
                "ratelimit.rules[2].key=header:X-Client",
                "ratelimit.rules[2].limits=5/1m",
                "ratelimit.rules[2].algorithm=sliding-window-log",
                "management.endpoints.web.exposure.include=ratelimits,ratelimitkeys",
                "management.endpoint.ratelimitkeys.access=unrestricted",
                "management.endpoint.ratelimits.show-values=always"));
        try {
            context = new SpringApplicationBuilder(AdminApplication.class)
                    .properties(properties.toArray(String[]::new))
                    .run();
        } catch (RuntimeException e) {
            jedis.close();
            redis.close();
            throw e;
        }
        port = Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
    }

    @Override
    public void afterAll(ExtensionContext extension) {
        try {
            if (context != null) {
                context.close();
            }
        } finally {
            if (jedis != null) {
                jedis.close();
            }
            if (redis != null) {
                redis.close();
            }
        }
    }

    /** The Redis hash of a rule's per-key limits. */
    String ruleKey(String rule) {
        return prefix + ":{limits}:rule:" + rule;
    }

    /** The Redis stream of changes. */
    String stream() {
        return prefix + ":{limits}:changes";
    }

    /** A request to the application, with header lines as given ({@code "X-Client: alice"}). */
    HttpResponse<String> call(String path, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10));
        for (String h : headers) {
            int colon = h.indexOf(':');
            b.header(h.substring(0, colon).trim(), h.substring(colon + 1).trim());
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** As {@code admin}: a request to the endpoint; {@code json} is the body of a POST, or {@code null}. */
    HttpResponse<String> admin(String method, String path, Object json) throws Exception {
        return as("admin", "admin", method, path, json);
    }

    HttpResponse<String> as(String user, String password, String method, String path, Object json) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + "/actuator/ratelimitkeys" + path))
                .timeout(Duration.ofSeconds(10))
                .header(
                        "Authorization",
                        "Basic "
                                + Base64.getEncoder()
                                        .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)));
        if (json == null) {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            String body = json instanceof String s ? s : JSON.writeValueAsString(json);
            b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body));
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The {@code ratelimits} endpoint's most-rejected keys, as it shows them (values shown here). */
    List<JsonNode> topRejectedKeys() throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/ratelimits"))
                .header(
                        "Authorization",
                        "Basic " + Base64.getEncoder().encodeToString("admin:admin".getBytes(StandardCharsets.UTF_8)))
                .build();
        JsonNode body = JSON.readTree(
                HTTP.send(request, HttpResponse.BodyHandlers.ofString()).body());
        List<JsonNode> keys = new ArrayList<>();
        body.get("topRejectedKeys").forEach(keys::add);
        return keys;
    }

    static JsonNode json(HttpResponse<String> response) {
        return JSON.readTree(response.body());
    }

    static String message(HttpResponse<String> response) {
        return json(response).path("message").asString();
    }

    static String query(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    static Map<String, Object> body(Object... pairs) {
        java.util.LinkedHashMap<String, Object> m = new java.util.LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            m.put((String) pairs[i], pairs[i + 1]);
        }
        return m;
    }
}
