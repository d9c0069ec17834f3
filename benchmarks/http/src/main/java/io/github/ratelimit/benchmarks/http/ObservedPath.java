package io.github.ratelimit.benchmarks.http;

import java.util.ArrayList;
import java.util.List;

/**
 * What the application's {@code /actuator/prometheus} scrape must show, after a few limited requests, for the
 * benchmark to measure the path users run: the limiter's meters, and the {@code ratelimit.decision} observation's
 * timer when observations are on (an {@code ObservationRegistry} that observes decisions), none when they are off.
 */
final class ObservedPath {

    /** A sample of the limiter's request counter. */
    static final String REQUESTS = "ratelimit_requests_total";

    /** A sample of the decision observation's timer. */
    static final String DECISIONS = "ratelimit_decision_seconds_count";

    private ObservedPath() {}

    /**
     * @param scrape the text {@code /actuator/prometheus} answered
     * @param observed whether the application runs with decision observations on
     * @return what is wrong with it, each a sentence; empty when the scrape shows the expected path
     */
    static List<String> problems(String scrape, boolean observed) {
        List<String> problems = new ArrayList<>();
        if (!hasSample(scrape, REQUESTS)) {
            problems.add("no " + REQUESTS + " sample: the limiter's metrics are not registered");
        }
        boolean decisions = hasSample(scrape, DECISIONS);
        if (observed && !decisions) {
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
