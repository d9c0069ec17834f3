package io.github.ratelimit.internal.bucket;

/**
 * A bucket in this JVM that takes a call and records its windows in place, with no probe or window records: the
 * engine's path for a call one rule decides ({@link AllowedVerdict}).
 */
public interface RecordingBucket {

    /**
     * Takes {@code cost} now if every window has room for it, as {@code KeyState.consume} does.
     *
     * @param cost the permits the call takes, at least 1
     * @param verdict receives each window's state after the call, when taken; its shape's configuration must be the
     *        bucket's
     * @return whether it was taken; when not, nothing was taken or recorded
     */
    boolean consume(long cost, AllowedVerdict verdict);
}
