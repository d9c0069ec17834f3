package io.github.ratelimit.spring.boot.charging;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.http.HttpServletResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
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
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Charging what a call used in a Spring MVC application over real HTTP, on the local store and on a real Redis: a
 * handler's {@code @RateLimit(charge = "#result.usage.totalTokens")}, a service returning a {@code CompletionStage}
 * (charged with the value it completes with), and a URL rule's {@code charge=response-header:X-Tokens-Used} read by
 * the servlet filter after the handler ran; a handler that throws keeps its estimate, counted in
 * {@code ratelimit.settlements}. Limits per hour, so the bucket refills one token every 3.6 s. One application per
 * store for the class; each test has its own client address (from the trusted proxy on the loopback).
 */
class MvcChargeWhatWasUsedTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import({Api.class, Model.class})
    static class App {}

    record Usage(long totalTokens) {}

    record Completion(Usage usage) {}

    @Service
    static class Model {
        @RateLimit(name = "mu-model", key = "'all'", limits = "1000/1h", charge = "#result.usage.totalTokens")
        CompletableFuture<Completion> complete(long tokens) {
            return CompletableFuture.supplyAsync(() -> new Completion(new Usage(tokens)));
        }
    }

    @RestController
    static class Api {
        private final Model model;

        Api(Model model) {
            this.model = model;
        }

        @GetMapping("/mu/complete")
        @RateLimit(name = "mu-completions", key = "ip", limits = "1000/1h", charge = "#result.usage.totalTokens")
        Completion complete(@RequestParam long tokens) {
            if (tokens < 0) {
                throw new IllegalArgumentException("no negative usage");
            }
            return new Completion(new Usage(tokens));
        }

        @GetMapping("/mu/model")
        Completion model(@RequestParam long tokens) {
            return model.complete(tokens).join();
        }

        @GetMapping("/mu/url")
        String url(@RequestParam String used, HttpServletResponse response) {
            response.setHeader("X-Tokens-Used", used);
            return "done";
        }
    }

    private static final Map<String, ConfigurableApplicationContext> APPS = new HashMap<>();

    @AfterAll
    static void stop() {
        APPS.values().forEach(ConfigurableApplicationContext::close);
    }

    private static ConfigurableApplicationContext app(String store) {
        return APPS.computeIfAbsent(store, MvcChargeWhatWasUsedTest::start);
    }

    private static ConfigurableApplicationContext start(String store) {
        List<String> properties = new ArrayList<>(List.of(
                "server.port=0",
                "spring.main.banner-mode=off",
                "ratelimit.trusted-proxies=127.0.0.1,::1",
                "ratelimit.rules[0].name=mu-url",
                "ratelimit.rules[0].paths=/mu/url",
                "ratelimit.rules[0].key=ip",
                "ratelimit.rules[0].limits=1000/1h",
                "ratelimit.rules[0].charge=response-header:X-Tokens-Used"));
        if (store.equals("redis")) {
            properties.add("ratelimit.redis.url=" + redis.uri());
            properties.add("ratelimit.redis.key-prefix=mu-" + System.nanoTime());
            properties.add("ratelimit.redis.command-timeout=2s");
        }
        return new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.SERVLET)
                .properties(properties.toArray(String[]::new))
                .run();
    }

    private final HttpClient http = HttpClient.newHttpClient();

    /** A request from {@code address}, as the trusted proxy on the loopback forwards it. */
    private HttpResponse<String> get(ConfigurableApplicationContext context, String address, String path)
            throws Exception {
        int port = ((WebServerApplicationContext) context).getWebServer().getPort();
        return http.send(
                HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                        .timeout(Duration.ofSeconds(10))
                        .header("X-Forwarded-For", address)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private void debtRefusesTheThird(ConfigurableApplicationContext context, String address, String path)
            throws Exception {
        assertThat(get(context, address, path + "600").statusCode()).isEqualTo(200);
        assertThat(get(context, address, path + "600").statusCode()).isEqualTo(200);
        HttpResponse<String> third = get(context, address, path + "600");
        assertThat(third.statusCode()).isEqualTo(429);
        // 200 tokens of debt and the third call's 1, at 1000 an hour: 723.6 s.
        assertThat(third.headers().firstValue("Retry-After").map(Long::parseLong))
                .hasValueSatisfying(s -> assertThat(s).isBetween(700L, 724L));
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aHandlerIsChargedWhatItReturned(String store) throws Exception {
        debtRefusesTheThird(app(store), "192.0.2.30", "/mu/complete?tokens=");
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aServiceIsChargedWhatItsFutureGave(String store) throws Exception {
        // The service's rejection becomes the request's 429, with the Retry-After of its debt. Its key is 'all': no
        // other test calls the service.
        debtRefusesTheThird(app(store), "192.0.2.31", "/mu/model?tokens=");
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aUrlRuleIsChargedTheResponseHeader(String store) throws Exception {
        debtRefusesTheThird(app(store), "192.0.2.32", "/mu/url?used=");
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "redis"})
    void aHandlerThatThrowsKeepsItsEstimateAndIsCounted(String store) throws Exception {
        ConfigurableApplicationContext context = app(store);
        assertThat(get(context, "192.0.2.33", "/mu/complete?tokens=-1").statusCode())
                .isEqualTo(500);
        HttpResponse<String> next = get(context, "192.0.2.33", "/mu/complete?tokens=0");
        assertThat(next.headers().firstValue("RateLimit"))
                .hasValueSatisfying(v -> assertThat(v).containsPattern("\"mu-completions-1h\";r=99[89];"));
        // The only test whose handler throws: the application's one unusable settlement.
        MeterRegistry registry = context.getBean(MeterRegistry.class);
        assertThat(registry.get("ratelimit.settlements")
                        .tag("rule", "mu-completions")
                        .tag("result", "unusable")
                        .counter()
                        .count())
                .isEqualTo(1.0);
    }
}
