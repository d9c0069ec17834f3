package io.github.ratelimit.benchmarks.http;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A checked warm-up of one phase: rounds of load until a round's requests/s is within a tolerance of the round
 * before, at most a cap of rounds. A phase that reaches the cap without that is unsteady, and the report says so.
 *
 * @param requestsPerSecond each warm-up round's figure, in order
 * @param steady whether the last round was within the tolerance of the one before
 */
record Warmup(List<Double> requestsPerSecond, boolean steady) {

    /** How close two consecutive rounds must be: 10 % of the earlier. */
    static final double TOLERANCE = 0.10;

    /** At most this many warm-up rounds per phase. */
    static final int CAP = 6;

    /** One warm-up round. */
    interface Round {

        /**
         * @return the round's requests/s
         * @throws Exception when the load cannot run
         */
        double requestsPerSecond() throws Exception;
    }

    Warmup {
        requestsPerSecond = List.copyOf(requestsPerSecond);
    }

    /**
     * Runs rounds until one is within {@code tolerance} of the one before, or {@code cap} rounds ran.
     *
     * @param round one warm-up round
     * @param cap the most rounds, at least 2 (a round is only checked against the one before)
     * @param tolerance the largest relative change, of the earlier round, that counts as steady
     * @return the rounds, and whether they ended steady
     * @throws Exception when a round cannot run
     */
    static Warmup run(Round round, int cap, double tolerance) throws Exception {
        if (cap < 2) {
            throw new IllegalArgumentException("a checked warm-up needs at least 2 rounds, not " + cap);
        }
        List<Double> figures = new ArrayList<>();
        figures.add(round.requestsPerSecond());
        while (figures.size() < cap) {
            figures.add(round.requestsPerSecond());
            if (steady(figures.get(figures.size() - 2), figures.get(figures.size() - 1), tolerance)) {
                return new Warmup(figures, true);
            }
        }
        return new Warmup(figures, false);
    }

    /**
     * @param previous the earlier round's requests/s
     * @param current the later round's
     * @param tolerance the largest relative change of {@code previous}
     * @return whether {@code current} is within {@code tolerance} of {@code previous}
     */
    static boolean steady(double previous, double current, double tolerance) {
        return previous > 0 && Math.abs(current - previous) <= tolerance * previous;
    }

    /** @return for the report: the rounds it took, and {@code unsteady} when it hit the cap */
    String describe() {
        return String.format(Locale.ROOT, "%d%s", requestsPerSecond.size(), steady ? "" : ", **unsteady**");
    }
}
