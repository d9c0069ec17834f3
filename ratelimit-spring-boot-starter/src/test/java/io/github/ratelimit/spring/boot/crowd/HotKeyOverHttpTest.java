package io.github.ratelimit.spring.boot.crowd;

import io.github.ratelimit.RateLimit;
import io.github.ratelimit.testing.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** {@link HotKeyOverHttpContract} on Spring MVC (Tomcat). */
class HotKeyOverHttpTest {

    private static RedisServer redis;
    private static ConfigurableApplicationContext context;

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Api.class)
    static class App {}

    @RestController
    static class Api {
        @GetMapping("/hot/hello")
        @RateLimit(name = "hot-hello", key = "global", perMinute = 10_000_000)
        String hello() {
            return "hello";
        }
    }

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
        context = new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.SERVLET)
                .properties(HotKeyOverHttpContract.properties(redis.uri().toString()))
                .properties("server.port=0", "spring.main.banner-mode=off")
                .run();
    }

    @AfterAll
    static void stop() {
        if (context != null) {
            context.close();
        }
        redis.close();
    }

    @Test
    void sixtyFourClientsAtOnceForFiftyRoundsAreAllAnsweredWithoutAConflict() throws Exception {
        HotKeyOverHttpContract.sixtyFourClientsAtOnceForFiftyRoundsAreAllAnsweredWithoutAConflict(
                context, ((WebServerApplicationContext) context).getWebServer().getPort());
    }
}
