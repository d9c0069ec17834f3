package io.github.ratelimit.webflux;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

/** Starts WebFlux test applications on a free Reactor Netty port, as users run them (the gateway's tests too). */
public final class WebFluxApps {

    private WebFluxApps() {}

    public static ConfigurableApplicationContext start(Class<?> app, String... properties) {
        String[] all = new String[properties.length + 2];
        System.arraycopy(properties, 0, all, 0, properties.length);
        all[properties.length] = "server.port=0";
        all[properties.length + 1] = "spring.main.banner-mode=off";
        return new SpringApplicationBuilder(app)
                .web(WebApplicationType.REACTIVE)
                .properties(all)
                .run();
    }

    public static WebTestClient client(ConfigurableApplicationContext context) {
        int port = ((WebServerApplicationContext) context).getWebServer().getPort();
        return WebTestClient.bindToServer()
                .baseUrl("http://localhost:" + port)
                .responseTimeout(Duration.ofSeconds(10))
                .build();
    }

    /**
     * A client whose every request comes from {@code address}, as a trusted proxy on the loopback forwards it
     * ({@code X-Forwarded-For}; the application trusts {@code 127.0.0.1,::1}): a test's own key in an application it
     * shares with other tests.
     */
    public static WebTestClient client(ConfigurableApplicationContext context, String address) {
        return client(context)
                .mutate()
                .defaultHeader("X-Forwarded-For", address)
                .build();
    }

    /**
     * The applications of one test class, one per configuration, each started by the first test that asks for it and
     * all closed by {@link #close()}, which the class calls from its {@code @AfterAll}: for tests that need keys of
     * their own, not an application of their own. Starting an application takes seconds; a request, milliseconds.
     *
     * <p>A class that shares applications starts every application it runs through this, so that none is closed
     * before the others: closing a WebFlux application disposes Reactor Netty's global resources, the event loops of
     * every WebFlux server in the JVM, and the servers still running then refuse connections.
     */
    public static final class Shared implements AutoCloseable {

        private final Function<String, ConfigurableApplicationContext> starter;
        private final Map<String, ConfigurableApplicationContext> started = new LinkedHashMap<>();

        /** @param starter starts the application of a configuration, given its name */
        public Shared(Function<String, ConfigurableApplicationContext> starter) {
            this.starter = starter;
        }

        /** @return the application of {@code configuration}, started now by the starter if none is yet */
        public ConfigurableApplicationContext get(String configuration) {
            return get(configuration, () -> starter.apply(configuration));
        }

        /**
         * @param configuration names the configuration {@code start} starts
         * @return the application started for {@code configuration}, started now by {@code start} if none is yet
         */
        public synchronized ConfigurableApplicationContext get(
                String configuration, Supplier<ConfigurableApplicationContext> start) {
            ConfigurableApplicationContext context = started.get(configuration);
            if (context == null) {
                context = start.get();
                started.put(configuration, context);
            }
            return context;
        }

        @Override
        public synchronized void close() {
            started.values().forEach(ConfigurableApplicationContext::close);
            started.clear();
        }
    }
}
