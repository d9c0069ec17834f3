package io.github.ratelimit.benchmarks.redis;

import io.github.ratelimit.Limit;
import java.util.ArrayList;
import java.util.List;

/**
 * The limits and keys the benchmark uses.
 */
final class Workloads {

    /** Two windows so large nothing is rejected: the throughput phases measure the store, not rejections. */
    static final List<Limit> THROUGHPUT_LIMITS = List.of(Limit.parse("1000000000/1s"), Limit.parse("10000000000/1m"));

    /**
     * The sliding log's throughput limits. A log keeps every admitted call of its longest window, so a rule may let at
     * most {@code Rule.MAX_LOG_CALLS} (10,000) calls into it: with a minute, the hot key would be rejected after
     * 10,000 calls. Two windows of 10 ms and 100 ms cap a key at 100,000 calls/s, far above what one key reaches here,
     * so nothing is rejected either; the hot key's log then holds about 0.1 s worth of calls.
     */
    static final List<Limit> LOG_THROUGHPUT_LIMITS = List.of(Limit.parse("1000/10ms"), Limit.parse("10000/100ms"));

    /** A typical two-limit rule ({@code perSecond = 5, perMinute = 100}) for the memory probe. */
    static final List<Limit> MEMORY_LIMITS = List.of(Limit.parse("5/1s"), Limit.parse("100/1m"));

    static final List<String> HOT_KEY = List.of("hot");

    private Workloads() {}

    /**
     * @param prefix first characters of every key
     * @param count how many
     * @return {@code prefix0 .. prefix(count-1)}, e.g. {@code user:0}
     */
    static List<String> keys(String prefix, int count) {
        List<String> keys = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            keys.add(prefix + i);
        }
        return List.copyOf(keys);
    }

    static String describe(List<Limit> limits) {
        return String.join(" + ", limits.stream().map(Limit::toString).toList());
    }
}
