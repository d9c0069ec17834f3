package io.github.ratelimit.samples.plain;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Guard;
import io.github.ratelimit.Mode;
import io.github.ratelimit.RateLimitHeaders;
import io.github.ratelimit.RateLimitHeaders.HeaderStyle;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.RequestContext;
import io.github.ratelimit.Rule;
import java.io.PrintStream;
import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Fires bursts at two rules and prints each decision: a hard limit of 5 per second and 8 per minute per
 * client address, and a soft limit that delays instead of rejecting.
 */
public final class PlainJavaSample {

    private PlainJavaSample() {}

    public static void main(String[] args) throws Exception {
        run(System.out);
    }

    static void run(PrintStream out) throws InterruptedException {
        try (RateLimiter limiter = RateLimiter.builder().build()) {
            Guard hard = limiter.guard(
                    Rule.builder("hello").key("ip").limits("5/1s", "8/1m").build());
            RequestContext client =
                    RequestContext.builder().remoteAddress("203.0.113.7").build();

            out.println("HARD rule 'hello': 5/1s and 8/1m per client address. A burst of 8:");
            burst(out, hard, client, 8);
            out.println("After 1 s, another burst of 8: the second window refilled, the minute window did not:");
            Thread.sleep(1000);
            burst(out, hard, client, 8);

            Guard soft = limiter.guard(Rule.builder("reports")
                    .limits("2/1s")
                    .mode(Mode.SOFT)
                    .maxDelay(Duration.ofMillis(800))
                    .build());
            out.println();
            out.println("SOFT rule 'reports': 2/1s, waits up to 800 ms. A burst of 5:");
            burst(out, soft, RequestContext.empty(), 5);
        }
    }

    private static void burst(PrintStream out, Guard guard, RequestContext context, int n) {
        for (int i = 1; i <= n; i++) {
            long start = System.nanoTime();
            Decision d = guard.acquire(context);
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            Decision.Window w = d.bindingWindow();
            Map<String, String> headers = new LinkedHashMap<>();
            RateLimitHeaders.write(d, EnumSet.of(HeaderStyle.X_RATELIMIT), headers::put);
            out.printf(
                    "  #%d %-8s window=%-3s remaining=%-3s retry-after=%-4s waited=%d ms   %s%n",
                    i,
                    d.outcome(),
                    w == null ? "-" : w.name(),
                    w == null ? "-" : Long.toString(w.remaining()),
                    d.permitted() ? "-" : RateLimitHeaders.retryAfterSeconds(d) + "s",
                    tookMs,
                    headers);
        }
    }
}
