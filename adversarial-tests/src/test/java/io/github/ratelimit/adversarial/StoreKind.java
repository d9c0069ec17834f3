package io.github.ratelimit.adversarial;

/** Where the buckets of an attacked server live: every plain-filter attack runs against both. */
enum StoreKind {
    /** {@code LocalBucketStore}: this JVM's memory. */
    LOCAL,
    /** {@code JedisBucketStore} on a real Redis server started by the test harness. */
    REDIS
}
