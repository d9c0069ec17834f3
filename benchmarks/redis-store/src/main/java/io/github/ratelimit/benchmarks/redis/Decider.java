package io.github.ratelimit.benchmarks.redis;

/**
 * Decides one call for one key of a prepared key space. Thread-safe.
 */
@FunctionalInterface
interface Decider {

    /** The call was allowed by the bucket in Redis. */
    int ALLOWED = 0;
    /** The bucket rejected the call (the benchmark's limits are set so that this should not happen). */
    int REJECTED = 1;
    /** The store failed and the call was decided without it (e.g. the limiter's fail-open), or it threw. */
    int STORE_FAILED = 2;

    /**
     * @param keyIndex index into the key space the decider was prepared for
     * @return {@link #ALLOWED}, {@link #REJECTED} or {@link #STORE_FAILED}
     */
    int decide(int keyIndex);
}
