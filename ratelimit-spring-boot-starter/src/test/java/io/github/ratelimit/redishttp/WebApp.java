package io.github.ratelimit.redishttp;

import static org.awaitility.Awaitility.await;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.store.BucketStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.ServletRequestEvent;
import jakarta.servlet.ServletRequestListener;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.servlet.ServletListenerRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A test application on Spring MVC (Tomcat) or on WebFlux (Reactor Netty), on a free port, with the starter's real
 * auto-configuration (its Redis store from {@code ratelimit.redis.url}, its filters, its meters), the same handlers on
 * both, and what the tests read of it. Requests name their client in {@code X-Forwarded-For}: loopback is a trusted
 * proxy. One at a time per JVM (a WebFlux application counts its store work through a Reactor hook, which is global).
 * This package lies outside {@code io.github.ratelimit.spring.boot}, whose test applications scan their packages: the
 * configurations and handlers here would join theirs.
 *
 * <p>Handlers: {@code /r/slow?gate=} and {@code /r/status/<rule>?status=&gate=} wait at their gate (if any), then
 * answer 200, or the status asked for; {@code /r/other}, {@code /r/free} and {@code /r/crowd/<n>} answer at once.
 */
final class WebApp implements AutoCloseable {

    /** The web stack an application runs on. */
    enum Stack {
        /** Spring MVC on Tomcat: the servlet filter decides, and settles each request on its thread as it ends. */
        MVC,
        /** WebFlux on Reactor Netty: the WebFilter decides, and settles each request on the store's scheduler. */
        WEBFLUX
    }

    private static final HttpClient HTTP =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private final Stack stack;
    private final ConfigurableApplicationContext context;
    private final int port;
    /** WebFlux: the store work running and finished on the store scheduler. MVC: unused. */
    private final StoreWork storeWork;

    private final String hook;

    private WebApp(Stack stack, ConfigurableApplicationContext context, StoreWork storeWork, String hook) {
        this.stack = stack;
        this.context = context;
        this.port = ((WebServerApplicationContext) context).getWebServer().getPort();
        this.storeWork = storeWork;
        this.hook = hook;
    }

    /**
     * @param stack the web stack
     * @param properties {@code name=value} pairs
     * @return the application, started
     */
    static WebApp start(Stack stack, String... properties) {
        List<String> all = new ArrayList<>(List.of(properties));
        all.add("server.port=0");
        all.add("spring.main.banner-mode=off");
        all.add("ratelimit.trusted-proxies=127.0.0.1,::1");
        StoreWork storeWork = new StoreWork();
        String hook = null;
        if (stack == Stack.WEBFLUX) {
            // The settlement of a request that ended is store work WebFlux offloads to the store's scheduler.
            hook = "store-work-" + UUID.randomUUID();
            Schedulers.onScheduleHook(hook, storeWork::counted);
        }
        try {
            ConfigurableApplicationContext context = new SpringApplicationBuilder(
                            stack == Stack.MVC ? MvcApp.class : FluxApp.class)
                    .web(stack == Stack.MVC ? WebApplicationType.SERVLET : WebApplicationType.REACTIVE)
                    .properties(all.toArray(String[]::new))
                    .run();
            return new WebApp(stack, context, storeWork, hook);
        } catch (RuntimeException | Error e) {
            if (hook != null) {
                Schedulers.resetOnScheduleHook(hook);
            }
            throw e;
        }
    }

    Gates gates() {
        return context.getBean(Gates.class);
    }

    JedisBucketStore store() {
        return (JedisBucketStore) context.getBean(BucketStore.class);
    }

    MeterRegistry registry() {
        return context.getBean(MeterRegistry.class);
    }

    /**
     * A mark to count the settlements of requests held at a gate from: the limiter gives back their slots and tokens
     * (or fails to) once they end. Take it after they were decided, before any of them can end.
     *
     * @return the settlements so far, once no earlier request's store work still runs (on WebFlux, where the store work
     *         of every request is counted)
     */
    long mark() {
        if (stack == Stack.MVC) {
            return context.getBean(RequestEnds.class).ended.get();
        }
        await("no store work running")
                .atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(5))
                .until(() -> storeWork.running.get() == 0);
        return storeWork.finished.get();
    }

    /**
     * @param mark what {@link #mark()} returned
     * @return how many requests held at a gate the limiter has settled since: on Spring MVC, the requests of a gate
     *         Tomcat has finished, after every filter, so after the limiter's settlement on the request's thread; on
     *         WebFlux, the store work the limiter has run on its store scheduler since, which is each such request's
     *         settlement once it ends (no other request may be decided meanwhile)
     */
    long settledSince(long mark) {
        return (stack == Stack.MVC ? context.getBean(RequestEnds.class).ended.get() : storeWork.finished.get()) - mark;
    }

    /** @return {@code ratelimit.store.refunds{result}}, or 0 where the store does not have it */
    double refunds(String result) {
        FunctionCounter c =
                registry().find("ratelimit.store.refunds").tag("result", result).functionCounter();
        return c == null ? 0 : c.count();
    }

    /** @return the decisions of every rule that rest on the basis ({@code ratelimit.requests{basis}}) */
    double decisions(String basis) {
        return registry().find("ratelimit.requests").tag("basis", basis).counters().stream()
                .mapToDouble(Counter::count)
                .sum();
    }

    /**
     * Reads what one rule's key holds now in Redis, without taking anything.
     *
     * @param rule the rule's name
     * @param ip the client address it counts by
     * @return the first window's remaining permits, or -1 when the store did not answer (a failure policy decided)
     */
    long remaining(String rule, String ip) {
        RateLimiter limiter = context.getBean(RateLimiter.class);
        Rule r = limiter.rules().stream()
                .filter(x -> x.name().equals(rule))
                .findFirst()
                .orElseThrow();
        Decision peek =
                limiter.guard(r).peek(RequestContext.builder().remoteAddress(ip).build());
        Decision.Verdict v = peek.verdicts().get(0);
        return v.basis() == Decision.Basis.BUCKET ? v.windows().get(0).remaining() : -1;
    }

    /**
     * Resets a rule's key through this application's limiter, as the Actuator's and the admin servlet's resets do.
     *
     * @param rule the rule's name
     * @param key the key, as the rule resolves it
     */
    void reset(String rule, String key) {
        context.getBean(RateLimiter.class).reset(rule, key);
    }

    URI uri(String path) {
        return URI.create("http://localhost:" + port + path);
    }

    /** Sends a GET from the client at {@code ip}; the answer comes later. */
    CompletableFuture<HttpResponse<String>> send(String path, String ip) {
        return HTTP.sendAsync(
                HttpRequest.newBuilder(uri(path))
                        .timeout(Duration.ofSeconds(30))
                        .header("X-Forwarded-For", ip)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Sends a GET from the client at {@code ip} and waits for its answer. */
    HttpResponse<String> get(String path, String ip) {
        try {
            return HTTP.send(
                    HttpRequest.newBuilder(uri(path))
                            .timeout(Duration.ofSeconds(30))
                            .header("X-Forwarded-For", ip)
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Writes a GET on a connection of its own, whose client the test can make go away by closing the socket (the
     * JDK's client cannot abort an exchange on Java 17).
     */
    Socket open(String path, String ip) throws IOException {
        Socket socket = new Socket("localhost", port);
        OutputStream out = socket.getOutputStream();
        out.write(("GET " + path + " HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: " + ip + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return socket;
    }

    @Override
    public void close() {
        try {
            gates().openAll();
            context.close();
        } finally {
            if (hook != null) {
                Schedulers.resetOnScheduleHook(hook);
            }
        }
    }

    /** Counts the requests held at a gate ({@code gate=} in the query) that Tomcat has finished with. */
    static final class RequestEnds implements ServletRequestListener {
        final AtomicLong ended = new AtomicLong();

        @Override
        public void requestDestroyed(ServletRequestEvent event) {
            if (event.getServletRequest() instanceof HttpServletRequest http
                    && http.getQueryString() != null
                    && http.getQueryString().contains("gate=")) {
                ended.incrementAndGet();
            }
        }
    }

    /** Counts the tasks that run on the limiter's store scheduler ({@code ratelimit-store} threads). */
    private static final class StoreWork {
        final AtomicLong running = new AtomicLong();
        final AtomicLong finished = new AtomicLong();

        Runnable counted(Runnable task) {
            return () -> {
                boolean store = Thread.currentThread().getName().startsWith("ratelimit-store");
                if (store) {
                    running.incrementAndGet();
                }
                try {
                    task.run();
                } finally {
                    if (store) {
                        finished.incrementAndGet();
                        running.decrementAndGet();
                    }
                }
            };
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(MvcHandlers.class)
    static class MvcApp {
        @Bean
        Gates gates() {
            return new Gates();
        }

        @Bean
        RequestEnds requestEnds() {
            return new RequestEnds();
        }

        @Bean
        ServletListenerRegistrationBean<RequestEnds> requestEndsRegistration(RequestEnds ends) {
            return new ServletListenerRegistrationBean<>(ends);
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(FluxHandlers.class)
    static class FluxApp {
        @Bean
        Gates gates() {
            return new Gates();
        }
    }

    /** Blocks Tomcat's thread at a gate, as a slow handler does. */
    @RestController
    static class MvcHandlers {
        private final Gates gates;

        MvcHandlers(Gates gates) {
            this.gates = gates;
        }

        @GetMapping("/r/slow")
        String slow(@RequestParam(defaultValue = "") String gate) {
            gates.pass(gate);
            return "slow";
        }

        @GetMapping("/r/status/{rule}")
        ResponseEntity<String> status(@RequestParam int status, @RequestParam(defaultValue = "") String gate) {
            gates.pass(gate);
            return ResponseEntity.status(status).body("answered " + status);
        }

        @GetMapping({"/r/other", "/r/free", "/r/crowd/{n}"})
        String now() {
            return "now";
        }
    }

    /** Waits at a gate without holding a thread. */
    @RestController
    static class FluxHandlers {
        private final Gates gates;

        FluxHandlers(Gates gates) {
            this.gates = gates;
        }

        @GetMapping("/r/slow")
        Mono<String> slow(@RequestParam(defaultValue = "") String gate) {
            return gates.later(gate).thenReturn("slow");
        }

        @GetMapping("/r/status/{rule}")
        Mono<ResponseEntity<String>> status(@RequestParam int status, @RequestParam(defaultValue = "") String gate) {
            return gates.later(gate)
                    .then(Mono.fromSupplier(() -> ResponseEntity.status(status).body("answered " + status)));
        }

        @GetMapping({"/r/other", "/r/free", "/r/crowd/{n}"})
        Mono<String> now() {
            return Mono.just("now");
        }
    }
}
