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

    /** A typical two-limit rule ({@code perSecond = 5, perMinute = 100}) for the memory probe. */
    static final List<Limit> MEMORY_LIMITS = List.of(Limit.parse("5/1s"), Limit.parse("100/1m"));

    static final List<String> HOT_KEY = List.of("hot");

    private Workloads() {
    }

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
