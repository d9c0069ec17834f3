package io.github.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A plan named in a header ({@code ratelimit.plan-from=header:X-Plan}) in a Spring MVC application over real HTTP, on
 * the local store and on a real Redis: the trusted proxy's word (127.0.0.1 is in {@code ratelimit.trusted-proxies}),
 * and nobody else's: an anonymous client connecting from 127.0.0.2 (a loopback address, but no trusted proxy) and
 * sending {@code X-Plan: pro} gets the rule's own limits, on a URL rule and on a handler's {@code @RateLimit} alike.
 */
class PlanHeaderTrustOverHttpTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    /** A client that connects directly: no trusted proxy. */
    private static final String STRANGER = "127.0.0.2";
    /** The trusted proxy. */
    private static final String PROXY = "127.0.0.1";

    /** Not scanned: the package holds other tests' applications. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Handlers.class)
    static class App {}

    @RestController
    static class Handlers {
        @GetMapping("/pt/url")
        String url() {
            return "url";
        }

        @GetMapping("/pt/annotated")
        @RateLimit(name = "pt-annotated", key = "ip", perMinute = 2)
        String annotated() {
            return "annotated";
        }
    }

    private static ConfigurableApplicationContext start(String store, String... more) {
        List<String> properties = new ArrayList<>(List.of(
                "server.port=0",
                "spring.main.banner-mode=off",
                "ratelimit.rules[0].name=pt-url",
                "ratelimit.rules[0].paths=/pt/url",
                "ratelimit.rules[0].key=ip",
                "ratelimit.rules[0].limits=2/1m",
                "ratelimit.plans.pro=5/1m",
                "ratelimit.plan-from=header:X-Plan",
                "ratelimit.plan-rules=pt-url, pt-annotated"));
        properties.addAll(List.of(more));
        if (store.equals("redis")) {
            properties.add("ratelimit.redis.url=" + redis.uri());
            properties.add("ratelimit.redis.key-prefix=pt-" + System.nanoTime());
            properties.add("ratelimit.redis.command-timeout=2s");
        }
        return new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.SERVLET)
                .properties(properties.toArray(String[]::new))
                .run();
    }

    private static int port(ConfigurableApplicationContext context) {
        return ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    /** How many calls pass before the first 429, each naming plan pro. */
    private static int admitted(int port, String path, String from, String forwardedFor) throws Exception {
        int n = 0;
        for (int i = 0; i < 20; i++) {
            RawHttp.Response r = forwardedFor == null
                    ? RawHttp.sendFrom(from, port, "GET", path, "X-Plan: pro")
                    : RawHttp.sendFrom(from, port, "GET", path, "X-Plan: pro", "X-Forwarded-For: " + forwardedFor);
            if (r.status() != 200) {
                assertThat(r.status()).isEqualTo(429);
                return n;
            }
            n++;
        }
        return n;
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aPlanHeaderIsBelievedFromTheTrustedProxyOnly(String store) throws Exception {
        try (ConfigurableApplicationContext context = start(store, "ratelimit.trusted-proxies=" + PROXY)) {
            int port = port(context);
            for (String path : List.of("/pt/url", "/pt/annotated")) {
                assertThat(admitted(port, path, STRANGER, null))
                        .as(path + ": an anonymous client naming plan pro")
                        .isEqualTo(2);
                assertThat(admitted(port, path, PROXY, "203.0.113.7"))
                        .as(path + ": pro, through the trusted proxy")
                        .isEqualTo(5);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aPlanHeaderDeclaredTrustedIsBelievedFromEveryPeer(String store) throws Exception {
        try (ConfigurableApplicationContext context = start(store, "ratelimit.plan-header-trusted=true")) {
            assertThat(admitted(port(context), "/pt/url", STRANGER, null)).isEqualTo(5);
        }
    }
}
