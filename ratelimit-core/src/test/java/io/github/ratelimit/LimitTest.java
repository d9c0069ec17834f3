package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class LimitTest {

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "5/1s          | 5    | PT1S    | 5",
                "5/s           | 5    | PT1S    | 5",
                "100/1m        | 100  | PT1M    | 100",
                "1000/1d       | 1000 | PT24H   | 1000",
                "10/5s         | 10   | PT5S    | 10",
                "2/500ms       | 2    | PT0.5S  | 2",
                "7/PT2H        | 7    | PT2H    | 7",
                "5/1s burst=20 | 5    | PT1S    | 20",
                "1_000/1h      | 1000 | PT1H    | 1000",
                "' 5/1S '      | 5    | PT1S    | 5"
            })
    void parsesTextForm(String text, long permits, Duration period, long capacity) {
        assertThat(Limit.parse(text)).isEqualTo(new Limit(permits, period, capacity));
    }

    @Test
    void printsTheTextFormBack() {
        assertThat(Limit.parse("5/1s burst=20")).hasToString("5/1s burst=20");
        assertThat(Limit.of(100, Duration.ofMinutes(1))).hasToString("100/1m");
        assertThat(Limit.of(3, Duration.ofSeconds(90)).window()).isEqualTo("90s");
    }

    @Test
    void rejectsAnUnknownUnitNamingTheTextAndTheSyntax() {
        assertThatThrownBy(() -> Limit.parse("100/x"))
                .isInstanceOf(InvalidRateLimitConfigurationException.class)
                .hasMessage("invalid limit '100/x': period 'x' is not a duration. Expected '<permits>/<period>' "
                        + "with an optional ' burst=<capacity>', e.g. '5/1s', '100/1m' or '5/1s burst=20'.");
    }

    @Test
    void rejectsTextWithoutASlash() {
        assertThatThrownBy(() -> Limit.parse("100"))
                .hasMessage("invalid limit '100'. Expected '<permits>/<period>' with an optional ' burst=<capacity>', "
                        + "e.g. '5/1s', '100/1m' or '5/1s burst=20'.");
    }

    @Test
    void rejectsZeroAndNegativeAndOverflowingPermits() {
        assertThatThrownBy(() -> Limit.parse("0/1s"))
                .hasMessageStartingWith("invalid limit '0/1s': '0' is not a whole number from 1 to 1000000000000.");
        assertThatThrownBy(() -> Limit.parse("-5/1s"))
                .hasMessageStartingWith("invalid limit '-5/1s': '-5' is not a whole number from 1 to 1000000000000.");
        assertThatThrownBy(() -> Limit.parse("99999999999999999999/1s"))
                .hasMessageStartingWith(
                        "invalid limit '99999999999999999999/1s': '99999999999999999999' is not a whole number");
    }

    @Test
    void rejectsAMalformedBurst() {
        assertThatThrownBy(() -> Limit.parse("5/1s bust=3")).hasMessageStartingWith("invalid limit '5/1s bust=3'.");
        assertThatThrownBy(() -> Limit.parse("5/1s burst=0"))
                .hasMessageStartingWith("invalid limit '5/1s burst=0': '0' is not a whole number");
    }

    @Test
    void rejectsPeriodsOutOfRange() {
        assertThatThrownBy(() -> Limit.of(1, Duration.ofNanos(10)))
                .hasMessage("limit period must be between 1ms and 3660d, but was PT0.00000001S");
        assertThatThrownBy(() -> Limit.parse("1/4000d"))
                .hasMessage("invalid limit '1/4000d': limit period must be between 1ms and 3660d, but was PT96000H.");
        assertThatThrownBy(() -> Limit.parse("5/0s"))
                .hasMessage("invalid limit '5/0s': limit period must be between 1ms and 3660d, but was PT0S.");
    }

    @Test
    void rejectsMoreThanOneTokenPerNanosecond() {
        assertThatThrownBy(() -> Limit.parse("2000000/1ms"))
                .hasMessage("invalid limit '2000000/1ms': limit 2000000/1ms refills more than one token per "
                        + "nanosecond; use a longer period.");
    }
}
