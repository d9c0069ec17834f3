package io.github.ratelimit.samples.webflux;

import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimit;
import java.security.Principal;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

@RestController
@RequestMapping("/api")
class ApiHandlers {

    private final QuoteClient quotes;

    ApiHandlers(QuoteClient quotes) {
        this.quotes = quotes;
    }

    /** 5 per second and 100 per minute per client address; the sixth in a second gets 429. */
    @GetMapping("/hello")
    @RateLimit(name = "hello", key = "ip", perSecond = 5, perMinute = 100)
    Mono<String> hello() {
        return Mono.just("hello");
    }

    /** Soft: 2 per second; a burst waits its turn, up to 2 s, on a timer: no event loop waits. */
    @GetMapping("/reports")
    @RateLimit(name = "reports", key = "ip", perSecond = 2, mode = Mode.SOFT, maxDelay = "2s")
    Mono<String> reports() {
        return Mono.just("report ready");
    }

    /** Behind HTTP basic authentication: 3 per minute per user, from the reactive security context. */
    @GetMapping("/me")
    @RateLimit(name = "me", key = "user", perMinute = 3)
    Mono<String> me(Mono<Principal> principal) {
        return principal.map(p -> "you are " + p.getName());
    }

    /** 2 per minute per order id: a key over the method's arguments, decided when the handler is called. */
    @GetMapping("/orders/{id}")
    @RateLimit(name = "order", key = "#id", perMinute = 2)
    Mono<String> order(@PathVariable String id) {
        return Mono.just("order " + id);
    }

    /** Limited by a SOFT URL rule in application.properties (ratelimit.rules[1]). */
    @GetMapping("/export")
    Mono<String> export() {
        return Mono.just("export ready");
    }

    /** A stream from a paid third-party API, through a client throttled to its quota when subscribed. */
    @GetMapping("/quotes")
    Flux<String> quotes() {
        return quotes.latest();
    }

    /** Not limited at all: answers at once whatever the limited endpoints are waiting for. */
    @GetMapping("/status")
    Mono<String> status() {
        return Mono.just("up");
    }
}
