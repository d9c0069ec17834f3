package io.github.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import brave.handler.MutableSpan;
import brave.handler.SpanHandler;
import brave.propagation.TraceContext;
import io.github.ratelimit.RateLimit;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A Boot application with Micrometer Tracing (Brave), over real HTTP, Spring MVC on Tomcat and WebFlux on Netty, on
 * the local store and on a real Redis: each
 * decision is a {@code ratelimit.decision} span inside the request's server span, in the request's trace, tagged with
 * the rule and the outcome, never the key.
 */
class TracingOverHttpTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    /** Every span the application finished, as a tracing exporter would receive it. */
    static final class Spans extends SpanHandler {
        final List<MutableSpan> finished = new CopyOnWriteArrayList<>();

        @Override
        public boolean end(TraceContext context, MutableSpan span, Cause cause) {
            finished.add(span);
            return true;
        }

        List<MutableSpan> named(String name) {
            return finished.stream().filter(s -> name.equals(s.name())).toList();
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Api.class)
    static class App {
        @Bean
        Spans spans() {
            return new Spans();
        }
    }

    @RestController
    static class Api {
        @GetMapping("/traced")
        @RateLimit(name = "traced", key = "ip", perMinute = 1)
        String traced() {
            return "traced";
        }
    }

    private static ConfigurableApplicationContext start(WebApplicationType type, String... properties) {
        return new SpringApplicationBuilder(App.class)
                .web(type)
                .properties(
                        "server.port=0", "spring.main.banner-mode=off", "management.tracing.sampling.probability=1.0")
                .properties(properties)
                .run();
    }

    /** Two requests: the first allowed, the second rejected. */
    private static void twoRequests(ConfigurableApplicationContext context) throws Exception {
        int port = ((WebServerApplicationContext) context).getWebServer().getPort();
        HttpClient http = HttpClient.newHttpClient();
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/traced"))
                .timeout(Duration.ofSeconds(10))
                .build();
        assertThat(http.send(request, HttpResponse.BodyHandlers.ofString()).statusCode())
                .isEqualTo(200);
        assertThat(http.send(request, HttpResponse.BodyHandlers.ofString()).statusCode())
                .isEqualTo(429);
    }

    /** The store on which each kind of application decides: Redis moves WebFlux's decisions to a scheduler's thread. */
    static Stream<Arguments> applications() {
        return Stream.of(
                Arguments.of(WebApplicationType.SERVLET, "local"),
                Arguments.of(WebApplicationType.REACTIVE, "local"),
                Arguments.of(WebApplicationType.SERVLET, "redis"),
                Arguments.of(WebApplicationType.REACTIVE, "redis"));
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("applications")
    void eachDecisionIsASpanInsideTheRequestsSpan(WebApplicationType type, String store) throws Exception {
        try (ConfigurableApplicationContext context = start(
                type,
                store.equals("local") ? "ratelimit.store=local" : "ratelimit.redis.url=" + redis.uri(),
                "ratelimit.redis.key-prefix=tracing-" + type)) {
            twoRequests(context);

            // A call a bucket in this JVM allows at once is not observed (RateLimiter.Observer): on the local store,
            // only the rejection is a span.
            boolean local = store.equals("local");
            int observed = local ? 1 : 2;
            Spans spans = context.getBean(Spans.class);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                assertThat(spans.named("ratelimit.decision")).hasSize(observed);
                assertThat(spans.finished.stream().filter(s -> s.kind() == brave.Span.Kind.SERVER))
                        .hasSize(2);
            });
            List<MutableSpan> servers = spans.finished.stream()
                    .filter(s -> s.kind() == brave.Span.Kind.SERVER)
                    .toList();
            List<MutableSpan> decisions = spans.named("ratelimit.decision");
            for (int i = 0; i < observed; i++) {
                MutableSpan decision = decisions.get(i);
                MutableSpan server = servers.stream()
                        .filter(s -> s.traceId().equals(decision.traceId()))
                        .findFirst()
                        .orElseThrow(() -> new AssertionError("no server span in the decision's trace"));
                assertThat(decision.parentId())
                        .as("the decision's parent: the request's span")
                        .isEqualTo(server.id());
                assertThat(decision.startTimestamp()).isGreaterThanOrEqualTo(server.startTimestamp());
                assertThat(decision.finishTimestamp()).isLessThanOrEqualTo(server.finishTimestamp());
            }
            Map<String, String> rejected = Map.of("rule", "traced", "outcome", "rejected", "basis", "bucket");
            if (local) {
                assertThat(decisions).extracting(s -> Map.copyOf(s.tags())).containsExactly(rejected);
            } else {
                assertThat(decisions)
                        .extracting(s -> Map.copyOf(s.tags()))
                        .containsExactlyInAnyOrder(
                                Map.of("rule", "traced", "outcome", "allowed", "basis", "bucket"), rejected);
            }
            assertThat(servers.stream().map(MutableSpan::traceId).distinct())
                    .as("one trace per request")
                    .hasSize(2);
            assertThat(servers)
                    .extracting(MutableSpan::name)
                    .as("Spring's names; a request rejected before MVC found " + "its handler has no pattern")
                    .allMatch(name -> name.equals("http get /traced") || name.equals("http get"));
            assertThat(context.getBean(MeterRegistry.class)
                            .get("ratelimit.decision")
                            .tags("rule", "traced", "outcome", "rejected")
                            .timer()
                            .count())
                    .as("the observation's timer")
                    .isOne();
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = WebApplicationType.class,
            names = {"SERVLET", "REACTIVE"})
    void bootsPropertyTurnsDecisionObservationsOff(WebApplicationType type) throws Exception {
        try (ConfigurableApplicationContext context = start(type, "management.observations.enable.ratelimit=false")) {
            twoRequests(context);

            Spans spans = context.getBean(Spans.class);
            await().atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThat(
                                    spans.finished.stream().filter(s -> s.kind() == brave.Span.Kind.SERVER))
                            .hasSize(2));
            assertThat(spans.named("ratelimit.decision")).isEmpty();
            assertThat(context.getBean(MeterRegistry.class)
                            .find("ratelimit.decision")
                            .timer())
                    .isNull();
        }
    }
}
