package io.github.ratelimit.adversarial.webflux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.servlet.testing.RawHttp;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Attacks the {@code ip} key of a Spring WebFlux application on Reactor Netty, started with Boot's real
 * auto-configurations and used over raw HTTP, under each of Boot's forwarded-header strategies. Both Spring's
 * {@code ForwardedHeaderTransformer} ({@code framework}) and Netty's own forwarded handling ({@code native})
 * believe every peer's {@code X-Forwarded-For}, and the application sees the address they chose; the limiter reads
 * the connection's own address and the headers as sent, and applies {@code ratelimit.trusted-proxies} itself.
 */
class WebFluxForwardingAttackTest {

    private static final int LIMIT = 5;
    private static final AtomicInteger REACHED = new AtomicInteger();

    private ConfigurableApplicationContext context;

    @AfterEach
    void stop() {
        if (context != null) {
            context.close();
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Whoami.class)
    static class App {
        /** Spring Security is on this module's class path: everything open, as a public API is. */
        @org.springframework.context.annotation.Bean
        org.springframework.security.web.server.SecurityWebFilterChain open(
                org.springframework.security.config.web.server.ServerHttpSecurity http) {
            return http.authorizeExchange(a -> a.anyExchange().permitAll())
                    .csrf(org.springframework.security.config.web.server.ServerHttpSecurity.CsrfSpec::disable)
                    .build();
        }
    }

    @RestController
    static class Whoami {
        /** The client address the application sees, after any forwarded-header handling. */
        @GetMapping("/api/whoami")
        Mono<String> whoami(ServerWebExchange exchange) {
            REACHED.incrementAndGet();
            InetSocketAddress address = exchange.getRequest().getRemoteAddress();
            return Mono.just(address == null ? "none" : address.getHostString());
        }
    }

    private void run(String... extra) {
        String[] properties = Stream.concat(
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
        context = new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.REACTIVE)
                .properties(properties)
                .run();
    }

    private int port() {
        return Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
    }

    private RawHttp.Response get(List<String> headers) throws IOException {
        RawHttp.Response response = RawHttp.send(port(), "GET", "/api/whoami", headers);
        assertThat(response.status()).as("GET /api/whoami with %s", headers).isIn(200, 429);
        return response;
    }

    private int admitted(List<List<String>> requests) throws IOException {
        int admitted = 0;
        for (List<String> headers : requests) {
            if (get(headers).status() == 200) {
                admitted++;
            }
        }
        return admitted;
    }

    private static List<List<String>> rotating(int count) {
        List<List<String>> requests = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            requests.add(List.of("X-Forwarded-For: 198.51.100." + i));
            requests.add(List.of("Forwarded: for=198.51.101." + i));
            requests.add(List.of("X-Forwarded-For: 198.51.102." + i, "X-Real-IP: 198.51.103." + i));
        }
        return requests;
    }

    @Test
    void withNoStrategyAClientRotatingForwardedHeadersGetsOnlyTheLimit() throws Exception {
        run();
        assertThat(admitted(rotating(20))).isEqualTo(LIMIT);
    }

    @Test
    void withTheNativeStrategyNettyBelievesTheClientButTheLimiterCountsTheConnection() throws Exception {
        run("server.forward-headers-strategy=native");
        // Netty believes the client: the application sees the forged address...
        assertThat(get(List.of("X-Forwarded-For: 198.51.100.200")).body()).isEqualTo("198.51.100.200");
        // ...but the limiter counts by the connection, which no trusted proxy vouches for.
        assertThat(admitted(rotating(20))).isEqualTo(LIMIT - 1);
    }

    @Test
    void withTheFrameworkStrategySpringBelievesTheClientButTheLimiterCountsTheConnection() throws Exception {
        run("server.forward-headers-strategy=framework");
        assertThat(get(List.of("X-Forwarded-For: 198.51.100.200")).body()).isEqualTo("198.51.100.200");
        assertThat(admitted(rotating(20))).isEqualTo(LIMIT - 1);
    }

    @Test
    void behindATrustedProxyARotatingLeftmostAddressGetsOnlyTheLimitAndRealClientsHaveTheirOwnBuckets()
            throws Exception {
        for (String strategy : List.of("none", "native", "framework")) {
            run("server.forward-headers-strategy=" + strategy, "ratelimit.trusted-proxies=127.0.0.1");
            List<List<String>> forged = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                forged.add(List.of("X-Forwarded-For: 198.51.100." + i + ", 203.0.113.9"));
                forged.add(List.of("X-Forwarded-For: 198.51.100." + i, "X-Forwarded-For: 203.0.113.9"));
            }
            assertThat(admitted(forged))
                    .as("strategy %s: forged addresses before the proxy's", strategy)
                    .isEqualTo(LIMIT);
            for (int client = 1; client <= 3; client++) {
                for (int i = 0; i < LIMIT; i++) {
                    assertThat(get(List.of("X-Forwarded-For: 10.0.0." + i + ", 203.0.113." + client))
                                    .status())
                            .as("strategy %s, client %d, request %d", strategy, client, i)
                            .isEqualTo(200);
                }
                assertThat(get(List.of("X-Forwarded-For: 203.0.113." + client)).status())
                        .isEqualTo(429);
            }
            context.close();
            context = null;
        }
    }

    @Test
    void manyHeaderLinesAndThousandsOfHopsCannotRotateTheClientsIdentity() throws Exception {
        run("ratelimit.trusted-proxies=127.0.0.1");
        List<List<String>> requests = new ArrayList<>();
        for (int i = 0; i < 15; i++) {
            List<String> lines = new ArrayList<>();
            for (int j = 0; j < 90; j++) {
                lines.add("X-Forwarded-For: 198.51.100." + ((i + j) % 250));
            }
            lines.add("X-Forwarded-For: 203.0.113.50");
            requests.add(lines);
            // One line of about 7 KB: 2,000 hops of "::" and a rotating one, then the proxy's.
            requests.add(List.of("X-Forwarded-For: " + "::, ".repeat(2000) + "198.51.100." + i + ", 203.0.113.50"));
        }
        assertThat(admitted(requests)).isEqualTo(LIMIT);
    }

    @Test
    void headersBeyondNettysLimitAreRefusedBeforeTheApplicationNotFailed() throws Exception {
        run("ratelimit.trusted-proxies=127.0.0.1");
        int reached = REACHED.get();
        RawHttp.Response response = RawHttp.send(
                port(), "GET", "/api/whoami", List.of("X-Forwarded-For: " + "1.2.3.4, ".repeat(2000) + "203.0.113.60"));
        assertThat(response.status()).isIn(400, 413, 431);
        assertThat(REACHED.get()).isEqualTo(reached);
    }

    @Test
    void malformedHopsFromATrustedProxyFallBackToTheProxy() throws Exception {
        run("ratelimit.trusted-proxies=127.0.0.1");
        List<List<String>> requests = new ArrayList<>();
        for (String hop : List.of(
                "unknown",
                "_hidden",
                "",
                "garbage",
                "256.1.1.1",
                "1.2.3",
                "[2001:db8::1",
                "203.0.113.7:99999",
                "fe80::1%",
                "0x7f.0.0.1",
                "2130706433",
                "\"203.0.113.7\"",
                "x".repeat(300))) {
            requests.add(List.of("X-Forwarded-For: 198.51.100." + requests.size() + ", " + hop));
        }
        assertThat(admitted(requests)).isEqualTo(LIMIT);
        assertThat(get(List.of()).status())
                .as("they all counted against the proxy's own address")
                .isEqualTo(429);
        assertThat(get(List.of("X-Forwarded-For: 203.0.113.20")).status()).isEqualTo(200);
    }

    @Test
    void trustingNettysOrSpringsForwardingIsRefusedAtStartUpSinceTheyBelieveEveryPeer() {
        for (String strategy : List.of("native", "framework")) {
            assertThatThrownBy(() -> run(
                            "server.forward-headers-strategy=" + strategy, "ratelimit.trust-container-forwarding=true"))
                    .satisfies(failure -> assertThat(configurationError(failure))
                            .hasMessageContaining("ratelimit.trust-container-forwarding = true, but "
                                    + "server.forward-headers-strategy = " + strategy)
                            .hasMessageContaining("believe the X-Forwarded-For of every peer"));
            assertThat(context).isNull();
        }
    }

    private static InvalidRateLimitConfigurationException configurationError(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof InvalidRateLimitConfigurationException e) {
                return e;
            }
        }
        throw new AssertionError("no InvalidRateLimitConfigurationException in the cause chain of " + failure, failure);
    }
}
