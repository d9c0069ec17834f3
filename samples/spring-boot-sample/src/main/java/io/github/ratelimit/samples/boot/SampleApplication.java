package io.github.ratelimit.samples.boot;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * Rate limiting in a Spring Boot application: {@code @RateLimit} on controllers and on a service, URL rules in
 * {@code application.properties}, local buckets by default, Redis with one property.
 */
@SpringBootApplication
public class SampleApplication {

    public static void main(String[] args) {
        SpringApplication.run(SampleApplication.class, args);
    }
}
