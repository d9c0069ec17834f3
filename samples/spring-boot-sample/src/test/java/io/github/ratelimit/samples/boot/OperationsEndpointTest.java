package io.github.ratelimit.samples.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Operations on a live system, as the sample secures them: per-key limits in Redis switched on by one property,
 * the ratelimitkeys endpoint's writes switched on, and Spring Security letting only ADMIN reach the actuator. Nobody
 * else changes anything; an admin's change is enforced at once and records who made it.
 */
class OperationsEndpointTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private final HttpClient http = HttpClient.newHttpClient();

    private static ConfigurableApplicationContext start() {
        return SpringApplication.run(
                SampleApplication.class,
                "--server.port=0",
                "--ratelimit.redis.url=" + redis.uri(),
                "--ratelimit.limit-store.enabled=true",
                "--management.endpoints.web.exposure.include=health,ratelimits,ratelimitkeys",
                "--management.endpoint.ratelimitkeys.access=unrestricted");
    }

    private HttpResponse<String> send(int port, String method, String path, String user, String json) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path));
        if (user != null) {
            b.header(
                    "Authorization",
                    "Basic "
                            + Base64.getEncoder().encodeToString((user + ":" + user).getBytes(StandardCharsets.UTF_8)));
        }
        b.method(
                method, json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json));
        if (json != null) {
            b.header("Content-Type", "application/json");
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void onlyAnAdminChangesLimitsAndTheChangeIsEnforcedAndAttributed() throws Exception {
        try (ConfigurableApplicationContext app = start()) {
            int port = ((WebServerApplicationContext) app).getWebServer().getPort();
            String path = "/actuator/ratelimitkeys/me/alice";

            assertThat(send(port, "POST", path, null, "{\"limits\":\"1/1m\"}").statusCode())
                    .isEqualTo(401);
            assertThat(send(port, "POST", path, "alice", "{\"limits\":\"1/1m\"}")
                            .statusCode())
                    .isEqualTo(403);
            assertThat(send(port, "POST", path, "alice", "{\"reset\":true}").statusCode())
                    .isEqualTo(403);
            assertThat(send(port, "DELETE", path, "bob", null).statusCode()).isEqualTo(403);
            assertThat(send(port, "GET", path, "admin", null).statusCode())
                    .as("nothing was set")
                    .isEqualTo(404);

            HttpResponse<String> set = send(port, "POST", path, "admin", "{\"limits\":\"1/1m\"}");
            assertThat(set.statusCode()).as(set.body()).isEqualTo(200);
            assertThat(set.body()).contains("\"changedBy\":\"admin\"").contains("1/1m");

            assertThat(send(port, "GET", "/api/me", "alice", null).statusCode()).isEqualTo(200);
            assertThat(send(port, "GET", "/api/me", "alice", null).statusCode()).isEqualTo(429);
            assertThat(send(port, "GET", "/api/me", "bob", null).statusCode())
                    .as("bob keeps his plan")
                    .isEqualTo(200);

            assertThat(send(port, "POST", path, "admin", "{\"reset\":true}").statusCode())
                    .isEqualTo(200);
            assertThat(send(port, "GET", "/api/me", "alice", null).statusCode())
                    .as("unblocked")
                    .isEqualTo(200);
        }
    }
}
