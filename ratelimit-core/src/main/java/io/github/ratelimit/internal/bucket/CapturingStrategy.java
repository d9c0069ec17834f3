package io.github.ratelimit.internal.bucket;

import io.github.bucket4j.BlockingStrategy;

/**
 * A Bucket4j blocking strategy that does not block: Bucket4j reserves the tokens, computes how long the call
 * must wait, and hands that time to {@link #park}, which only records it. The limiter then waits itself
 * (on the calling thread, or with a timer for asynchronous callers), so a reservation costs one bucket
 * operation and no thread is tied up by Bucket4j. Used once per reservation; not thread-safe.
 */
final class CapturingStrategy implements BlockingStrategy {

    long nanos;

    @Override
    public void park(long nanosToPark) {
        this.nanos = nanosToPark;
    }
}
