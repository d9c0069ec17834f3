package io.github.ratelimit.samples.webflux;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A Spring WebFlux application on Reactor Netty, rate limited by {@code @RateLimit} on its handlers and on a
 * service, and by URL rules in {@code application.properties}. Run it with
 * {@code ./mvnw -q -pl samples/webflux-sample -am spring-boot:run}; add
 * {@code -Dspring-boot.run.arguments=--ratelimit.redis.url=redis://localhost:6379} to keep the buckets in Redis.
 */
@SpringBootApplication
public class WebFluxSampleApplication {

    public static void main(String[] args) {
        SpringApplication.run(WebFluxSampleApplication.class, args);
    }
}
