package io.github.ratelimit.benchmarks.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The figures the report draws from rounds: medians, spreads, per-round ratios, and the checked warm-up. */
class RoundFiguresTest {

    @Test
    void takesTheMedianWhateverTheOrderOfTheRounds() {
        assertThat(Stats.median(new double[] {300, 100, 200})).isEqualTo(200.0);
        assertThat(Stats.median(new double[] {400, 100, 300, 200})).isEqualTo(250.0);
        assertThat(Stats.median(new double[] {7})).isEqualTo(7.0);
    }

    @Test
    void givesTheSpreadAsTheRangeOverTheMedian() {
        assertThat(Stats.spread(new double[] {1_000, 950, 1_050})).isCloseTo(0.10, within(1e-12));
        assertThat(Stats.spread(new double[] {800, 800, 800})).isZero();
        assertThat(Stats.spread(new double[] {90, 100, 130})).isCloseTo(0.40, within(1e-12));
    }

    @Test
    void doesNotReorderTheCallersRounds() {
        double[] rounds = {3, 1, 2};
        Stats.median(rounds);
        Stats.spread(rounds);
        assertThat(rounds).containsExactly(3, 1, 2);
    }

    @Test
    void pairsRoundsForRatiosAndRefusesMismatchedOnes() {
        double[] perRound = Stats.ratios(new double[] {90, 80, 100}, new double[] {100, 100, 100});
        assertThat(perRound).containsExactly(0.9, 0.8, 1.0);
        assertThat(Stats.min(perRound)).isEqualTo(0.8);
        assertThat(Stats.max(perRound)).isEqualTo(1.0);
        assertThatThrownBy(() -> Stats.ratios(new double[] {1, 2}, new double[] {1, 2, 3}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("2 and 3");
        assertThatThrownBy(() -> Stats.median(new double[0])).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void countsARoundSteadyWithinTheToleranceOfTheOneBefore() {
        assertThat(Warmup.steady(1_000, 1_100, 0.10)).isTrue();
        assertThat(Warmup.steady(1_000, 900, 0.10)).isTrue();
        assertThat(Warmup.steady(1_000, 1_101, 0.10)).isFalse();
        assertThat(Warmup.steady(1_000, 899, 0.10)).isFalse();
        assertThat(Warmup.steady(0, 0, 0.10))
                .as("a phase that served nothing is not steady")
                .isFalse();
    }

    @Test
    void stopsWarmingUpAtTheFirstRoundCloseToTheOneBefore() throws Exception {
        Deque<Double> figures = new ArrayDeque<>(List.of(4_000.0, 7_000.0, 9_000.0, 9_500.0, 9_400.0));
        Warmup warmup = Warmup.run(figures::removeFirst, Warmup.CAP, Warmup.TOLERANCE);
        assertThat(warmup.steady()).isTrue();
        assertThat(warmup.requestsPerSecond()).containsExactly(4_000.0, 7_000.0, 9_000.0, 9_500.0);
        assertThat(figures).as("no round run after the steady one").containsExactly(9_400.0);
        assertThat(warmup.describe()).isEqualTo("4");
    }

    @Test
    void neverStopsAfterOneRoundSinceItHasNothingToCompareWith() throws Exception {
        Deque<Double> figures = new ArrayDeque<>(List.of(5_000.0, 5_100.0, 1.0));
        Warmup warmup = Warmup.run(figures::removeFirst, Warmup.CAP, Warmup.TOLERANCE);
        assertThat(warmup.requestsPerSecond()).containsExactly(5_000.0, 5_100.0);
        assertThat(warmup.steady()).isTrue();
    }

    @Test
    void marksAPhaseUnsteadyWhenTheCapIsReached() throws Exception {
        Deque<Double> figures =
                new ArrayDeque<>(List.of(1_000.0, 2_000.0, 1_000.0, 2_000.0, 1_000.0, 2_000.0, 2_050.0));
        Warmup warmup = Warmup.run(figures::removeFirst, 6, 0.10);
        assertThat(warmup.steady()).isFalse();
        assertThat(warmup.requestsPerSecond()).hasSize(6);
        assertThat(figures).as("the cap is a cap").containsExactly(2_050.0);
        assertThat(warmup.describe()).isEqualTo("6, **unsteady**");
        assertThatThrownBy(() -> Warmup.run(() -> 1.0, 1, 0.10)).hasMessageContaining("at least 2 rounds");
    }

    @Test
    void acceptsAScrapeWithTheLimitersMetersAndTheDecisionTimer() {
        String observed = """
                # HELP ratelimit_decision_seconds
                # TYPE ratelimit_decision_seconds summary
                ratelimit_decision_seconds_count{basis="bucket",error="none",outcome="allowed",rule="url"} 5
                ratelimit_requests_total{basis="bucket",outcome="allowed",rule="url"} 5.0
                http_server_requests_seconds_count{method="GET",status="200",uri="/url"} 5
                """;
        String unobserved = """
                # TYPE ratelimit_decision_active_seconds summary
                ratelimit_decision_active_seconds_count 0
                ratelimit_requests_total{basis="bucket",outcome="allowed",rule="url"} 5.0
                http_server_requests_seconds_count{method="GET",status="200",uri="/url"} 5
                """;
        assertThat(ObservedPath.problems(observed, true, false)).isEmpty();
        assertThat(ObservedPath.problems(unobserved, false, false)).isEmpty();
        assertThat(ObservedPath.problems(unobserved, true, true))
                .as("a local decision allowed at once is not observed")
                .isEmpty();
        assertThat(ObservedPath.problems(unobserved, true, false))
                .singleElement()
                .asString()
                .contains("no ratelimit_decision_seconds_count", "ObservationRegistry");
        assertThat(ObservedPath.problems(observed, false, false))
                .singleElement()
                .asString()
                .contains("management.observations.enable.ratelimit=false");
        assertThat(ObservedPath.problems(
                        "# HELP ratelimit_requests_total\njvm_threads_live_threads 20.0\n", true, true))
                .hasSize(2)
                .anySatisfy(p -> assertThat(p).contains("no ratelimit_requests_total"))
                .anySatisfy(p -> assertThat(p).contains("no http_server_requests_seconds_count"));
    }
}
