package io.github.ratelimit.samples.gateway;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A Spring Cloud Gateway (server WebFlux) that routes {@code /api/**} to an upstream service, with the gateway's
 * {@code RequestRateLimiter} filter on {@code /api/hello} backed by ratelimit. Run it with
 * {@code ./mvnw -q -pl samples/gateway-sample -am spring-boot:run}.
 */
@SpringBootApplication
public class GatewaySampleApplication {

    public static void main(String[] args) {
        SpringApplication.run(GatewaySampleApplication.class, args);
    }
}
