package io.github.ratelimit.webflux;

import java.time.Duration;
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
}
