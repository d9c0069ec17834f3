package io.github.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.testing.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A limiter built with {@code shadow(true)}, a dry run: every rule, whatever its mode, only records what it would
 * reject or delay, and writes no header that claims a limit.
 */
class DryRunTest {

    private final ManualClock clock = new ManualClock();

    @Test
    void everyRuleOnlyRecordsWhatItWouldRejectOrDelay() {
        List<Decision> heard = new ArrayList<>();
        try (RateLimiter limiter = RateLimiter.builder()
                .timeMeter(clock)
                .waiter(clock)
                .shadow(true)
                .listener(heard::add)
                .build()) {
            Guard hard = limiter.guard(Rule.builder("hard").limits("2/1m").build());
            Guard soft = limiter.guard(Rule.builder("soft")
                    .limits("1/1m")
                    .mode(Mode.SOFT)
                    .maxDelay(Duration.ofMinutes(5))
                    .build());
            Guard failing = limiter.guard(Rule.builder("closed")
                    .key("user")
                    .limits("1/1m")
                    .onMissingKey(MissingKeyPolicy.REJECT)
                    .build());
            List<Outcome> outcomes = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                outcomes.add(hard.acquire(RequestContext.empty()).outcome());
            }
            assertThat(outcomes).containsExactly(Outcome.ALLOWED, Outcome.ALLOWED, Outcome.SHADOW_REJECTED);
            assertThat(soft.acquire(RequestContext.empty()).outcome()).isEqualTo(Outcome.ALLOWED);
            Decision wouldWait = soft.acquire(RequestContext.empty());
            assertThat(wouldWait.outcome()).as("not delayed").isEqualTo(Outcome.SHADOW_REJECTED);
            assertThat(wouldWait.delayNanos()).isZero();
            assertThat(failing.acquire(RequestContext.empty()).outcome())
                    .as("a missing key that would be rejected")
                    .isEqualTo(Outcome.SHADOW_REJECTED);
            assertThat(heard).allSatisfy(d -> assertThat(d.permitted()).isTrue());
            java.util.Map<String, String> headers = new java.util.HashMap<>();
            RateLimitHeaders.write(
                    hard.acquire(RequestContext.empty()),
                    java.util.EnumSet.allOf(RateLimitHeaders.HeaderStyle.class),
                    headers::put);
            assertThat(headers).as("no header claims a limit").isEmpty();
            assertThat(limiter.rules())
                    .extracting(Rule::mode)
                    .as("the rules themselves are as configured")
                    .contains(Mode.HARD, Mode.SOFT);
        }
    }

    /**
     * A call no window of a rule could ever hold is refused with {@link CallTooLargeException} (413 on the web), but a
     * dry run refuses nothing: it records what it would have rejected, and the call goes on. (Issue 33, item 3: a
     * batch of 11 on a 10/1m rule got 413 under {@code ratelimit.shadow=true}, and no metric counted it.)
     */
    @Test
    void aCallNoWindowCouldHoldIsRecordedNotRefused() {
        List<Decision> heard = new ArrayList<>();
        try (RateLimiter limiter = RateLimiter.builder()
                .timeMeter(clock)
                .waiter(clock)
                .shadow(true)
                .listener(heard::add)
                .build()) {
            Guard batch = limiter.guard(Rule.builder("batch").limits("10/1m").build());
            Decision eleven = batch.acquire(RequestContext.empty(), 11);
            assertThat(eleven.outcome()).isEqualTo(Outcome.SHADOW_REJECTED);
            assertThat(eleven.permitted()).isTrue();
            assertThat(heard).extracting(Decision::outcome).containsExactly(Outcome.SHADOW_REJECTED);
            assertThat(batch.acquire(RequestContext.empty(), Long.MAX_VALUE).outcome())
                    .as("more permits than a long holds once multiplied")
                    .isEqualTo(Outcome.SHADOW_REJECTED);
            assertThat(batch.acquire(RequestContext.empty(), 10).outcome())
                    .as("what fits is counted")
                    .isEqualTo(Outcome.ALLOWED);
        }
        try (RateLimiter limiter =
                RateLimiter.builder().timeMeter(clock).waiter(clock).build()) {
            Guard batch = limiter.guard(Rule.builder("batch").limits("10/1m").build());
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> batch.acquire(RequestContext.empty(), 11))
                    .as("without the dry run")
                    .isInstanceOf(CallTooLargeException.class);
        }
    }
}
