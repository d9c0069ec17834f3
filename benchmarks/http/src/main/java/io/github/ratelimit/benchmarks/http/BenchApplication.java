package io.github.ratelimit.benchmarks.http;

import io.github.ratelimit.RateLimit;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The application under test: endpoints that answer the same two bytes, one without a limit, one with
 * {@code @RateLimit}, one under a URL rule ({@code application.properties}), and the hand-written yardstick
 * ({@link HandWrittenEndpoint}). Limits are far above any throughput here, so no request is refused and every one
 * takes the full decision path.
 */
@SpringBootApplication
public class BenchApplication {

    /** The endpoints. */
    @RestController
    static class Endpoints {

        @GetMapping("/bare")
        String bare() {
            return "ok";
        }

        @GetMapping("/annotated")
        @RateLimit(name = "annotated", limits = "1000000000/1s")
        String annotated() {
            return "ok";
        }

        @GetMapping("/url")
        String url() {
            return "ok";
        }
    }

    /**
     * @param args Spring Boot arguments ({@code --server.port=...}, {@code --ratelimit.redis.url=...})
     */
    public static void main(String[] args) {
        SpringApplication.run(BenchApplication.class, args);
    }
}
