package io.github.ratelimit.samples.boot;

import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimit;
import org.springframework.stereotype.Service;

/**
 * A client of a (pretend) paid third-party API that allows 2 calls per second: calls beyond that wait, up to a
 * second, instead of failing: client-side limiting, as the design asks.
 */
@Service
public class QuoteClient {

    @RateLimit(name = "quote-api", perSecond = 2, mode = Mode.SOFT, maxDelay = "1s")
    public String latest() {
        return "quote #" + System.nanoTime() % 1000;
    }
}
