package io.github.ratelimit.samples.boot;

import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimit;
import io.github.ratelimit.StoreFailurePolicy;
import java.security.Principal;
import java.util.List;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

@RestController
@RequestMapping("/api")
class ApiController {

    private final QuoteClient quotes;

    ApiController(QuoteClient quotes) {
        this.quotes = quotes;
    }

    /** 5 per second and 100 per minute per client address; the sixth in a second gets 429. */
    @GetMapping("/hello")
    @RateLimit(name = "hello", key = "ip", perSecond = 5, perMinute = 100)
    String hello() {
        return "hello";
    }

    /** Soft: 2 per second; a burst waits its turn, up to 2 s, instead of being rejected. */
    @GetMapping("/reports")
    @RateLimit(name = "reports", key = "ip", perSecond = 2, mode = Mode.SOFT, maxDelay = "2s")
    String reports() {
        return "report ready";
    }

    /** Login attempts: 5 per minute per client address, and none at all while the store is down. */
    @PostMapping("/login")
    @RateLimit(name = "login", key = "ip", perMinute = 5, onStoreFailure = StoreFailurePolicy.FAIL_CLOSED)
    String login(@RequestParam(defaultValue = "") String user) {
        return "welcome " + user;
    }

    /**
     * Behind HTTP basic authentication: 3 per minute per user; bob's stored plan gives him 10, and so does carol's
     * granted authority PLAN_pro (ratelimit.plan-from).
     */
    @GetMapping("/me")
    @RateLimit(name = "me", key = "user", perMinute = 3)
    String me(Principal principal) {
        return "you are " + principal.getName();
    }

    /** Limited by a SOFT URL rule in application.properties (ratelimit.rules[1]). */
    @GetMapping("/export")
    String export() {
        return "export ready";
    }

    /**
     * A batch of items: 10 items a minute per client address, each item one permit, however the items are split into
     * requests: 7 pass, then 4 are refused (429, with the Retry-After of the missing tokens), then 3 pass. A batch of
     * more than 10 could never pass: 413.
     */
    @PostMapping("/batch")
    @RateLimit(name = "batch", key = "ip", perMinute = 10, permits = "#items.size()")
    String batch(@RequestBody List<String> items) {
        return "accepted " + items.size();
    }

    /** The most tokens one completion may report. */
    static final long MAX_TOKENS = 100_000;

    /**
     * A stand-in for a language model's completion, which knows what it cost only once it is done: answers
     * {@code {"usage":{"totalTokens":N}}} for {@code tokens=N}. Rule {@code completions}: 1000 tokens a minute per client
     * address, charged from the result. A call is admitted while the address has tokens left and takes 1; once it has
     * returned, it takes the rest of what it reports, going into debt: two calls of 600 pass, and the third is refused
     * (429) with a {@code Retry-After} of about 12 s (200 tokens of debt and the next call's 1, at 1000 a minute).
     */
    @GetMapping("/complete")
    @RateLimit(name = "completions", key = "ip", limits = "1000/1m", charge = "#result.usage.totalTokens")
    Completion complete(@RequestParam(defaultValue = "") String tokens) {
        long n;
        try {
            n = Long.parseLong(tokens.trim());
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (n < 0 || n > MAX_TOKENS) {
            throw new BadTokens(tokens);
        }
        return new Completion(new Usage(n));
    }

    /** What {@link #complete} answers. */
    record Completion(Usage usage) {}

    /** The tokens a completion used. */
    record Usage(long totalTokens) {}

    /** A {@code tokens} parameter out of range: 400, and the call keeps the 1 token it took. */
    static final class BadTokens extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadTokens(String tokens) {
            super("tokens must be a whole number from 0 to " + MAX_TOKENS + ", but was '"
                    + (tokens.length() > 40 ? tokens.substring(0, 40) + "..." : tokens) + "'");
        }
    }

    @ExceptionHandler(BadTokens.class)
    ResponseEntity<String> badTokens(BadTokens e) {
        return ResponseEntity.badRequest().contentType(MediaType.TEXT_PLAIN).body(e.getMessage());
    }

    /**
     * Slow work: sleeps {@code ms} milliseconds (at most 5000). Rule {@code slow} in application.properties lets 2 such
     * calls per client address run at once: 6 sent together give 2 × 200 and 4 × 429, whatever the rate.
     */
    @GetMapping("/slow")
    String slow(@RequestParam(defaultValue = "1000") long ms) throws InterruptedException {
        long sleep = Math.max(0, Math.min(ms, 5000));
        Thread.sleep(sleep);
        return "slept " + sleep + " ms";
    }

    /** Calls a paid third-party API through a client that is throttled to its quota. */
    @GetMapping("/quote")
    String quote() {
        return quotes.latest();
    }
}
