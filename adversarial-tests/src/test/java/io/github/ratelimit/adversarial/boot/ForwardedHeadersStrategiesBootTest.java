package io.github.ratelimit.adversarial.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.adversarial.boot.web.WebApplication;
import io.github.ratelimit.servlet.testing.RawHttp;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Attacks the {@code ip} key of a Spring Boot application on real Tomcat through Boot's own forwarded-header
 * strategies, started with {@code SpringApplication} and Boot's real auto-configurations: with {@code framework},
 * Spring's {@code ForwardedHeaderFilter} believes every peer's {@code X-Forwarded-For}, yet a client rotating the
 * leftmost value through the trusted proxy gets only the limit's admissions while real clients keep their own
 * buckets; {@code native} with an {@code ip} rule (set, or implied by a cloud platform) stops start-up; and with
 * {@code native} plus {@code ratelimit.trust-container-forwarding=true}, the key follows what Tomcat's
 * {@code RemoteIpValve} decided under {@code server.tomcat.remoteip.internal-proxies}, which a client cannot rotate.
 * Each case runs in an application context of its own.
 */
class ForwardedHeadersStrategiesBootTest {

    private static final int LIMIT = 5;

    private ConfigurableApplicationContext context;

    @AfterEach
    void stop() {
        if (context != null) {
            context.close();
        }
    }

    private static String[] properties(String... extra) {
        return Stream.concat(
                        Stream.of(
                                "server.port=0",
                                "server.address=127.0.0.1",
                                "spring.main.banner-mode=off",
                                "logging.level.root=warn",
                                "spring.main.cloud-platform=none",
                                "ratelimit.rules[0].name=per-address",
                                "ratelimit.rules[0].paths=/api/**",
                                "ratelimit.rules[0].key=ip",
                                "ratelimit.rules[0].limits=" + LIMIT + "/1h"),
                        Stream.of(extra))
                .toArray(String[]::new);
    }

    private void run(String... extra) {
        context = new SpringApplicationBuilder(WebApplication.class)
                .properties(properties(extra))
                .run();
    }

    private int port() {
        return Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
    }

    private RawHttp.Response get(String... headers) throws IOException {
        RawHttp.Response response = RawHttp.send(port(), "GET", "/api/whoami", headers);
        assertThat(response.status())
                .as("GET /api/whoami with %s", List.of(headers))
                .isIn(200, 429);
        return response;
    }

    private int admitted(List<String[]> requests) throws IOException {
        int admitted = 0;
        for (String[] headers : requests) {
            if (get(headers).status() == 200) {
                admitted++;
            }
        }
        return admitted;
    }

    private static InvalidRateLimitConfigurationException configurationError(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof InvalidRateLimitConfigurationException e) {
                return e;
            }
        }
        throw new AssertionError("no InvalidRateLimitConfigurationException in the cause chain of " + failure, failure);
    }

    @Test
    void withTheFrameworkStrategyAClientRotatingTheLeftmostForwardedAddressGetsOnlyTheLimit() throws Exception {
        run("server.forward-headers-strategy=framework", "ratelimit.trusted-proxies=127.0.0.1");
        // Spring's filter believes the client's leftmost value: the application sees a new address each time...
        assertThat(get("X-Forwarded-For: 198.51.100.200, 203.0.113.9").body()).isEqualTo("198.51.100.200");
        List<String[]> requests = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            requests.add(new String[] {"X-Forwarded-For: 198.51.100." + i + ", 203.0.113.9"});
            requests.add(new String[] {"X-Forwarded-For: 198.51.100." + i, "X-Forwarded-For: 203.0.113.9"});
            requests.add(new String[] {"Forwarded: for=198.51.101." + i, "X-Forwarded-For: 203.0.113.9"});
        }
        // ...but the limiter keys by what the trusted proxy appended.
        assertThat(admitted(requests)).isEqualTo(LIMIT - 1);
    }

    @Test
    void withTheFrameworkStrategyEachRealClientBehindTheProxyHasItsOwnBucket() throws Exception {
        run("server.forward-headers-strategy=framework", "ratelimit.trusted-proxies=127.0.0.1");
        for (int client = 1; client <= 3; client++) {
            for (int i = 0; i < LIMIT; i++) {
                assertThat(get("X-Forwarded-For: 10.0.0." + i + ", 203.0.113." + client)
                                .status())
                        .as("client %d request %d", client, i)
                        .isEqualTo(200);
            }
            assertThat(get("X-Forwarded-For: 203.0.113." + client).status())
                    .as("client %d over the limit", client)
                    .isEqualTo(429);
        }
        // Forwarded headers alone (which Spring's filter prefers) name no client to the limiter: the proxy's own
        // bucket.
        List<String[]> requests = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            requests.add(new String[] {"Forwarded: for=198.51.100." + i});
        }
        assertThat(admitted(requests)).isEqualTo(LIMIT);
    }

    @Test
    void theNativeStrategyWithAnIpRuleStopsStartUp() {
        assertThatThrownBy(() -> run("server.forward-headers-strategy=native"))
                .satisfies(failure -> assertThat(configurationError(failure))
                        .hasMessageContaining("server.forward-headers-strategy = native")
                        .hasMessageContaining("ratelimit.trust-container-forwarding=true"));
        assertThat(context).isNull();
    }

    @Test
    void aCloudPlatformThatImpliesTheNativeStrategyStopsStartUpToo() {
        assertThatThrownBy(() -> context = new SpringApplicationBuilder(WebApplication.class)
                        .properties(Stream.of(properties())
                                .map(p -> p.equals("spring.main.cloud-platform=none")
                                        ? "spring.main.cloud-platform=kubernetes"
                                        : p)
                                .toArray(String[]::new))
                        .run())
                .satisfies(failure -> assertThat(configurationError(failure)).hasMessageContaining("KUBERNETES"));
        assertThat(context).isNull();
    }

    @Test
    void trustingTheContainerWhoseInternalProxiesExcludeThePeerDoesNotLetAClientRotateItsKey() throws Exception {
        run(
                "server.forward-headers-strategy=native",
                "ratelimit.trust-container-forwarding=true",
                "server.tomcat.remoteip.internal-proxies=10\\.9\\.9\\.9");
        // Tomcat's valve does not believe 127.0.0.1, so the application sees the connection...
        assertThat(get("X-Forwarded-For: 198.51.100.200").body()).isEqualTo("127.0.0.1");
        List<String[]> requests = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            requests.add(new String[] {"X-Forwarded-For: 198.51.100." + i});
            requests.add(new String[] {"X-Forwarded-For: 10.9.9.9, 198.51.100." + i});
            requests.add(new String[] {"X-Forwarded-For: 198.51.100." + i + ", 10.9.9.9"});
        }
        // ...and so does the limiter: one bucket, whatever the header says.
        assertThat(admitted(requests)).isEqualTo(LIMIT - 1);
    }

    @Test
    void trustingTheContainerWhoseInternalProxiesAreThePeerKeysByTheClientItAppended() throws Exception {
        run(
                "server.forward-headers-strategy=native",
                "ratelimit.trust-container-forwarding=true",
                "server.tomcat.remoteip.internal-proxies=127\\.0\\.0\\.1");
        assertThat(get("X-Forwarded-For: 198.51.100.200, 203.0.113.9").body()).isEqualTo("203.0.113.9");
        List<String[]> rotating = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            rotating.add(new String[] {"X-Forwarded-For: 198.51.100." + i + ", 203.0.113.9"});
        }
        assertThat(admitted(rotating))
                .as("a client rotating the leftmost value")
                .isEqualTo(LIMIT - 1);
        for (int client = 1; client <= 3; client++) {
            for (int i = 0; i < LIMIT; i++) {
                assertThat(get("X-Forwarded-For: 198.51.100." + i + ", 203.0.113." + client)
                                .status())
                        .as("client %d request %d", client, i)
                        .isEqualTo(200);
            }
            assertThat(get("X-Forwarded-For: 203.0.113." + client).status()).isEqualTo(429);
        }
    }
}
