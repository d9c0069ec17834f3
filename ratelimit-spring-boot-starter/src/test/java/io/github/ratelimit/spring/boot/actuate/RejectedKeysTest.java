package io.github.ratelimit.spring.boot.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Decision.Basis;
import io.github.ratelimit.Decision.Outcome;
import io.github.ratelimit.Decision.Verdict;
import io.github.ratelimit.Mode;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The Space-Saving summary keeps its guarantees with its O(1) structure and its stripes. */
class RejectedKeysTest {

    private static Decision rejected(String key) {
        return new Decision(
                Outcome.REJECTED,
                List.of(new Verdict("api", key, Mode.HARD, Outcome.REJECTED, Basis.BUCKET, List.of(), 1)),
                0,
                1);
    }

    @ParameterizedTest
    @ValueSource(ints = {10, 100, 1000})
    void findsEveryHeavyKeyWithCountsThatBoundTheTruth(int capacity) {
        RejectedKeys summary = new RejectedKeys(capacity);
        Map<String, Long> truth = new HashMap<>();
        Random random = new Random(capacity);
        int n = 200_000;
        for (int i = 0; i < n; i++) {
            // Five heavy keys (12 % of the rejections each, above the n / capacity that Space-Saving guarantees to
            // find, even for a capacity of 10) in a flood of distinct ones.
            String key = random.nextInt(10) < 6 ? "heavy-" + random.nextInt(5) : "k" + random.nextInt(1_000_000);
            truth.merge(key, 1L, Long::sum);
            summary.onDecision(rejected(key));
        }
        List<RejectedKeys.Entry> all = summary.top(Integer.MAX_VALUE);
        assertThat(all).hasSizeLessThanOrEqualTo(capacity);
        for (RejectedKeys.Entry e : all) {
            long actual = truth.getOrDefault(e.key(), 0L);
            assertThat(e.count()).as(e.key()).isGreaterThanOrEqualTo(actual);
            assertThat(e.count() - e.error()).as(e.key()).isLessThanOrEqualTo(actual);
        }
        // Every key rejected more often than its stripe's share of the stream over the stripe's counters is found.
        assertThat(all.subList(0, 5))
                .extracting(RejectedKeys.Entry::key)
                .containsExactlyInAnyOrder("heavy-0", "heavy-1", "heavy-2", "heavy-3", "heavy-4");
        // A key that takes over a counter inherits its count: the counts always add up to the rejections seen.
        assertThat(all.stream().mapToLong(RejectedKeys.Entry::count).sum()).isEqualTo(n);
    }
}
