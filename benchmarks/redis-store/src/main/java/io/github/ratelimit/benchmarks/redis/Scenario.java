package io.github.ratelimit.benchmarks.redis;

/**
 * The load shapes measured for every subject.
 */
enum Scenario {

    /** One caller, cycling through the spread keys. */
    ONE_THREAD_SPREAD("spread1", false),
    /** {@code --threads} callers, each cycling through its own slice of the spread keys. */
    THREADS_SPREAD("spreadN", false),
    /** {@code --threads} callers, all on one key. */
    THREADS_HOT("hotN", true);

    private final String code;
    private final boolean hot;

    Scenario(String code, boolean hot) {
        this.code = code;
        this.hot = hot;
    }

    /** @return a short name, part of the Redis keys of the scenario */
    String code() {
        return code;
    }

    boolean hot() {
        return hot;
    }

    int threads(Options options) {
        return this == ONE_THREAD_SPREAD ? 1 : options.threads();
    }

    String label(Options options) {
        int threads = threads(options);
        return threads + (threads == 1 ? " thread" : " threads") + (hot ? ", one hot key" : ", spread keys");
    }
}
