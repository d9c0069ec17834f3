package io.github.ratelimit.benchmarks.http;

import java.util.ArrayList;
import java.util.List;

/**
 * What the application's {@code /actuator/prometheus} scrape must show, after a few limited requests, for the
 * benchmark to measure the path users run: the limiter's meters; Spring's own request timer, which only an active
 * {@code ObservationRegistry} with Boot's meter handler records; and the {@code ratelimit.decision} observation's timer
 * when observations are on and decisions go to Redis, none when they are off. On the local store a call its bucket
 * allows at once is not observed (the limiter's {@code RateLimiter.Observer}), so there the timer is not required.
 */
final class ObservedPath {

    /** A sample of the limiter's request counter. */
    static final String REQUESTS = "ratelimit_requests_total";

    /** A sample of the decision observation's timer. */
    static final String DECISIONS = "ratelimit_decision_seconds_count";

    /** A sample of Spring's request observation's timer. */
    static final String HTTP_REQUESTS = "http_server_requests_seconds_count";

    private ObservedPath() {}

    /**
     * @param scrape the text {@code /actuator/prometheus} answered
     * @param observed whether the application runs with decision observations on
     * @param localStore whether it decides on the local store, where the calls the scrape follows are not observed
     * @return what is wrong with it, each a sentence; empty when the scrape shows the expected path
     */
    static List<String> problems(String scrape, boolean observed, boolean localStore) {
        List<String> problems = new ArrayList<>();
        if (!hasSample(scrape, REQUESTS)) {
            problems.add("no " + REQUESTS + " sample: the limiter's metrics are not registered");
        }
        if (!hasSample(scrape, HTTP_REQUESTS)) {
            problems.add("no " + HTTP_REQUESTS + " sample: requests are not observed (no active ObservationRegistry)");
        }
        boolean decisions = hasSample(scrape, DECISIONS);
        if (observed && !localStore && !decisions) {
            problems.add("no " + DECISIONS + " sample: decisions are not observed (no active ObservationRegistry)");
        }
        if (!observed && decisions) {
            problems.add("a " + DECISIONS + " sample although management.observations.enable.ratelimit=false");
        }
        return problems;
    }

    /** @return whether a line is a sample of the metric: its name, then labels or the value */
    private static boolean hasSample(String scrape, String metric) {
        return scrape.lines().anyMatch(line -> line.startsWith(metric + "{") || line.startsWith(metric + " "));
    }
}
