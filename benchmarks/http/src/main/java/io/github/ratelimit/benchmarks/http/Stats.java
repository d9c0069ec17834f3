package io.github.ratelimit.benchmarks.http;

import java.util.Arrays;

/**
 * Figures over the measured rounds of a phase: the median the report prints, the spread that says how far to trust
 * it, and the per-round ratios of two phases measured in the same rounds.
 */
final class Stats {

    private Stats() {}

    /**
     * @param values one figure per round, at least one
     * @return the middle value, or the mean of the two middle values for an even count
     * @throws IllegalArgumentException when there is no value
     */
    static double median(double[] values) {
        double[] v = sorted(values);
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }

    /**
     * @param values one figure per round, at least one
     * @return {@code (max - min) / median}: 0.05 when the rounds span 5 % of their median
     * @throws IllegalArgumentException when there is no value
     */
    static double spread(double[] values) {
        double[] v = sorted(values);
        return (v[v.length - 1] - v[0]) / median(v);
    }

    /**
     * @param subject the subject's figure in each round
     * @param base the baseline's figure in the same rounds, in the same order
     * @return {@code subject[i] / base[i]} for each round
     * @throws IllegalArgumentException when the two do not cover the same rounds
     */
    static double[] ratios(double[] subject, double[] base) {
        if (subject.length != base.length || subject.length == 0) {
            throw new IllegalArgumentException(
                    "ratios need the same rounds on both sides, not " + subject.length + " and " + base.length);
        }
        double[] r = new double[subject.length];
        for (int i = 0; i < r.length; i++) {
            r[i] = subject[i] / base[i];
        }
        return r;
    }

    /**
     * @param values at least one
     * @return the smallest
     */
    static double min(double[] values) {
        return sorted(values)[0];
    }

    /**
     * @param values at least one
     * @return the largest
     */
    static double max(double[] values) {
        double[] v = sorted(values);
        return v[v.length - 1];
    }

    private static double[] sorted(double[] values) {
        if (values.length == 0) {
            throw new IllegalArgumentException("no rounds to take a figure of");
        }
        double[] v = values.clone();
        Arrays.sort(v);
        return v;
    }
}
