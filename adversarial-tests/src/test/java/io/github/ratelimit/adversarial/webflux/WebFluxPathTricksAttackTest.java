package io.github.ratelimit.adversarial.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.servlet.testing.RawHttp;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * Spellings of a path that Spring WebFlux serves from one handler (percent-encoding, path parameters, doubled
 * slashes, encoded slashes, dot segments) must all be counted by the URL rule on that path: whatever reaches the
 * handler, the rule counted. WebFlux matches handlers on decoded segments without their path parameters; the rule
 * must match the same way. Over raw HTTP, on a real Reactor Netty port.
 */
class WebFluxPathTricksAttackTest {

    private static final int LIMIT = 3;
    private static final AtomicInteger ADMIN = new AtomicInteger();
    private static final AtomicInteger LOGIN = new AtomicInteger();
    private static final AtomicInteger REPORTS = new AtomicInteger();
    private static ConfigurableApplicationContext context;

    @BeforeAll
    static void start() {
        context = new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.REACTIVE)
                .properties(
                        "server.port=0",
                        "server.address=127.0.0.1",
                        "spring.main.banner-mode=off",
                        "logging.level.root=warn",
                        "ratelimit.rules[0].name=admin",
                        "ratelimit.rules[0].paths=/admin/**",
                        "ratelimit.rules[0].limits=" + LIMIT + "/1h",
                        "ratelimit.rules[1].name=login",
                        "ratelimit.rules[1].paths=/login",
                        "ratelimit.rules[1].limits=" + LIMIT + "/1h",
                        "ratelimit.rules[2].name=reports",
                        "ratelimit.rules[2].paths=/reports",
                        "ratelimit.rules[2].methods=GET",
                        "ratelimit.rules[2].limits=" + LIMIT + "/1h")
                .run();
    }

    @AfterAll
    static void stop() {
        context.close();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Handlers.class)
    static class App {
        @Bean
        SecurityWebFilterChain open(ServerHttpSecurity http) {
            return http.authorizeExchange(a -> a.anyExchange().permitAll())
                    .csrf(ServerHttpSecurity.CsrfSpec::disable)
                    .build();
        }
    }

    @RestController
    static class Handlers {
        @GetMapping({"/admin", "/admin/{x}", "/admin/{x}/**"})
        Mono<String> admin() {
            ADMIN.incrementAndGet();
            return Mono.just("admin");
        }

        @GetMapping("/login")
        Mono<String> login() {
            LOGIN.incrementAndGet();
            return Mono.just("login");
        }

        /** Answers every method: a rule on GET must count whatever spelling of GET (and HEAD) reaches it. */
        @org.springframework.web.bind.annotation.RequestMapping("/reports")
        Mono<String> reports(org.springframework.http.server.reactive.ServerHttpRequest request) {
            if (request.getMethod().matches("GET") || request.getMethod().matches("HEAD")) {
                REPORTS.incrementAndGet();
            }
            return Mono.just("reports");
        }

        @GetMapping("/other/{x}")
        Mono<String> other(@PathVariable String x) {
            return Mono.just(x);
        }
    }

    private static int get(String path) throws IOException {
        int port = Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
        int status = RawHttp.send(port, "GET", path).status();
        assertThat(status)
                .as("GET %s", path.length() > 80 ? path.substring(0, 80) + "..." : path)
                .isBetween(200, 499);
        return status;
    }

    @Test
    void noSpellingOfAnAdminPathReachesTheHandlerUncounted() throws Exception {
        int before = ADMIN.get();
        List<String> paths = List.of(
                "/admin/x",
                "/admin",
                "/admin/",
                "/admin/../admin/x",
                "/x/../admin/x",
                "/./admin/x",
                "//admin/x",
                "/admin//x",
                "/admin/./x",
                "/admin;jsessionid=1/x",
                "/admin;/x",
                "/admin/x;a=b",
                "/%61dmin/x",
                "/%61%64%6d%69%6e/x",
                "/admin%2Fx",
                "/admin%2fx",
                "/admin/x%2F..%2F",
                "/admin/%2e%2e/admin/x",
                "/admin/x?y=1",
                "/admin/x/",
                "/admin/" + "x/".repeat(30),
                "/admin/..;/admin/x",
                "/admin/%00",
                "/admin/%C0%AE%C0%AE/x",
                "/admin%3Bx/y",
                "/ADMIN/x");
        for (int round = 0; round < 3; round++) {
            for (String path : paths) {
                get(path);
            }
        }
        // Some spellings the rule counts are not served (WebFlux answers /admin/ with 404): at most the limit is.
        assertThat(ADMIN.get() - before).as("requests the admin handler served").isBetween(1, LIMIT);
    }

    @Test
    void noSpellingOfAnExactPathReachesTheHandlerUncounted() throws Exception {
        int before = LOGIN.get();
        List<String> paths = List.of(
                "/login",
                "/login;x=1",
                "/login;",
                "/./login",
                "/x/../login",
                "//login",
                "/%6Cogin",
                "/%6c%6f%67%69%6e",
                "/login?a=b",
                "/login/.",
                "/login/..;/login",
                "/login%3B",
                "/login/",
                "/login;jsessionid=abc");
        for (int round = 0; round < 3; round++) {
            for (String path : paths) {
                get(path);
            }
        }
        assertThat(LOGIN.get() - before).as("requests the login handler served").isBetween(1, LIMIT);
    }

    @Test
    void noSpellingOfGetReachesAGetRuleUncounted() throws Exception {
        int port = Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
        for (int round = 0; round < 3; round++) {
            for (String method : List.of("GET", "HEAD", "get", "Get", "gEt", "head")) {
                int status = RawHttp.send(port, method, "/reports").status();
                assertThat(status).as("%s /reports", method).isBetween(200, 499);
            }
        }
        assertThat(REPORTS.get()).as("GET and HEAD requests the handler served").isBetween(1, LIMIT);
    }
}
