package io.github.ratelimit.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * Plans named by the request on WebFlux over real HTTP ({@code ratelimit.plan-from=header:X-Plan}, as a trusted
 * gateway sets it: believed from {@code ratelimit.trusted-proxies} only), on the local store and on a real Redis: a handler's {@code @RateLimit} and a URL rule take the
 * named plan's limits; a stored entry ({@code ratelimit.keys}) wins; an unknown plan is the rule's own limits. One
 * application per store for the class; each test has tenants of its own.
 */
class WebFluxPlansFromRequestTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Handlers.class)
    static class App {}

    /** The app, with a stand-in for Spring Security: an authentication with the authorities X-Authorities lists. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Handlers.class)
    static class SecuredApp {
        @org.springframework.context.annotation.Bean
        @org.springframework.core.annotation.Order(-150)
        org.springframework.web.server.WebFilter testAuthentication() {
            return (exchange, chain) -> {
                String authorities = exchange.getRequest().getHeaders().getFirst("X-Authorities");
                if (authorities == null) {
                    return chain.filter(exchange);
                }
                var token =
                        org.springframework.security.authentication.UsernamePasswordAuthenticationToken.authenticated(
                                "user",
                                "n/a",
                                org.springframework.security.core.authority.AuthorityUtils
                                        .commaSeparatedStringToAuthorityList(authorities));
                return chain.filter(
                        exchange.mutate().principal(Mono.just(token)).build());
            };
        }
    }

    @RestController
    static class Handlers {
        @GetMapping("/wp/annotated")
        @RateLimit(name = "wp-annotated", key = "header:X-Tenant", perMinute = 2)
        Mono<String> annotated() {
            return Mono.just("annotated");
        }

        @GetMapping("/wp/url")
        Mono<String> url() {
            return Mono.just("url");
        }
    }

    private static final WebFluxApps.Shared APPS = new WebFluxApps.Shared(WebFluxPlansFromRequestTest::start);

    @AfterAll
    static void stop() {
        APPS.close();
    }

    private static ConfigurableApplicationContext start(String store) {
        List<String> properties = new ArrayList<>(List.of(
                "ratelimit.rules[0].name=wp-url",
                "ratelimit.rules[0].paths=/wp/url",
                "ratelimit.rules[0].key=header:X-Tenant",
                "ratelimit.rules[0].limits=2/1m",
                "ratelimit.plans.pro=5/1m",
                "ratelimit.plan-from=header:X-Plan",
                "ratelimit.trusted-proxies=127.0.0.1",
                "ratelimit.plan-rules=wp-url, wp-annotated",
                "ratelimit.keys[0].key=header:X-Tenant:acme",
                "ratelimit.keys[0].limits=3/1m"));
        if (store.equals("redis")) {
            properties.add("ratelimit.redis.url=" + redis.uri());
            properties.add("ratelimit.redis.key-prefix=wp-" + System.nanoTime());
            properties.add("ratelimit.redis.command-timeout=2s");
        }
        return WebFluxApps.start(App.class, properties.toArray(String[]::new));
    }

    private static int admitted(WebTestClient client, String path, String tenant, String plan) {
        int n = 0;
        for (int i = 0; i < 20; i++) {
            WebTestClient.RequestHeadersSpec<?> request = client.get().uri(path).header("X-Tenant", tenant);
            if (plan != null) {
                request = request.header("X-Plan", plan);
            }
            int status =
                    request.exchange().returnResult(String.class).getStatus().value();
            if (status == 200) {
                n++;
            } else {
                assertThat(status).isEqualTo(429);
                break;
            }
        }
        return n;
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void theRequestNamesItsPlan(String store) {
        WebTestClient client = WebFluxApps.client(APPS.get(store));
        for (String path : List.of("/wp/url", "/wp/annotated")) {
            assertThat(admitted(client, path, "t1", "pro"))
                    .as(path + ": plan pro")
                    .isEqualTo(5);
            assertThat(admitted(client, path, "t2", null))
                    .as(path + ": no plan")
                    .isEqualTo(2);
            assertThat(admitted(client, path, "t3", "gold"))
                    .as(path + ": no such plan")
                    .isEqualTo(2);
            assertThat(admitted(client, path, "acme", "pro"))
                    .as(path + ": acme's own entry wins")
                    .isEqualTo(3);
        }
    }

    /**
     * The header is the trusted proxy's word (127.0.0.1): an anonymous client connecting from 127.0.0.2, a loopback
     * address that is no trusted proxy, names no plan with it.
     */
    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aPlanHeaderFromAPeerThatIsNoTrustedProxyNamesNoPlan(String store) throws Exception {
        ConfigurableApplicationContext context = APPS.get(store);
        int port = ((WebServerApplicationContext) context).getWebServer().getPort();
        for (String path : List.of("/wp/url", "/wp/annotated")) {
            int admitted = 0;
            for (int i = 0; i < 20; i++) {
                int status = RawHttp.sendFrom("127.0.0.2", port, "GET", path, "X-Tenant: t20", "X-Plan: pro")
                        .status();
                if (status != 200) {
                    assertThat(status).isEqualTo(429);
                    break;
                }
                admitted++;
            }
            assertThat(admitted).as(path + ": the rule's own limits").isEqualTo(2);
        }
        WebTestClient client = WebFluxApps.client(context);
        assertThat(admitted(client, "/wp/url", "t21", "pro"))
                .as("from the trusted proxy")
                .isEqualTo(5);
    }

    /** authority:PLAN_ on WebFlux, for a rule whose key reads no principal: the filter reads it for the plan. */
    @org.junit.jupiter.api.Test
    void aGrantedAuthorityNamesThePlanOfARuleKeyedByHeader() {
        // Closed with the others: closing a WebFlux application stops the event loops every one in this JVM uses.
        ConfigurableApplicationContext context = APPS.get(
                "secured",
                () -> WebFluxApps.start(
                        SecuredApp.class,
                        "ratelimit.rules[0].name=wp-url",
                        "ratelimit.rules[0].paths=/wp/url",
                        "ratelimit.rules[0].key=header:X-Tenant",
                        "ratelimit.rules[0].limits=2/1m",
                        "ratelimit.plans.pro=5/1m",
                        "ratelimit.plan-from=authority:PLAN_",
                        "ratelimit.plan-rules=wp-url"));
        WebTestClient client = WebFluxApps.client(context);
        int admitted = 0;
        for (int i = 0; i < 10; i++) {
            if (client.get()
                            .uri("/wp/url")
                            .header("X-Tenant", "t9")
                            .header("X-Authorities", "ROLE_USER,PLAN_pro")
                            .exchange()
                            .returnResult(String.class)
                            .getStatus()
                            .value()
                    == 200) {
                admitted++;
            }
        }
        assertThat(admitted).isEqualTo(5);
        assertThat(admitted(client, "/wp/url", "t10", null))
                .as("no authentication: the rule's own")
                .isEqualTo(2);
    }
}
