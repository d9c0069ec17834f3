package io.github.ratelimit.samples.webflux;

import io.github.ratelimit.RateLimit;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;

/**
 * Stands in for a client of a paid quote API that allows this application 10 calls a minute. The limit applies
 * when the returned publisher is subscribed to, so a stream built and never subscribed costs nothing; over the
 * quota, the request is answered 429 with {@code Retry-After} and a body that does not name the internal rule.
 */
@Component
class QuoteClient {

    @RateLimit(name = "quote-api", perMinute = 10)
    public Flux<String> latest() {
        return Flux.just("ACME 41.20", "INITECH 12.05");
    }
}
