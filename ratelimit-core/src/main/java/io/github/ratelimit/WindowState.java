package io.github.ratelimit;

import java.time.Duration;

/**
 * The state of one window of a rule's bucket right after a decision; what the rate-limit headers report.
 *
 * @param name the window's name within its rule, its period in text form ({@code 1s}, {@code 1m})
 * @param limit the bucket capacity of the window (above {@code permits} for a limit with a burst)
 * @param permits tokens the window adds per period: the sustained rate is {@code permits / period}
 * @param period the window's refill period
 * @param remaining tokens left, never negative
 * @param resetNanos nanoseconds until the window is full again (0 when it is full)
 */
public record WindowState(String name, long limit, long permits, Duration period, long remaining, long resetNanos) {
}
