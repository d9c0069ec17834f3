package io.github.ratelimit.redis;

import io.github.bucket4j.distributed.remote.CommandResult;
import io.github.bucket4j.distributed.remote.MutableBucketEntry;
import io.github.bucket4j.distributed.remote.RemoteBucketState;
import io.github.bucket4j.distributed.remote.RemoteCommand;
import io.github.bucket4j.distributed.serialization.PrimitiveSerializationHandles;
import io.github.bucket4j.distributed.serialization.SerializationHandle;
import io.github.bucket4j.distributed.versioning.Version;
import io.github.bucket4j.distributed.versioning.Versions;
import io.github.ratelimit.internal.bucket.BucketKeyState;

/**
 * Takes what a call used from a bucket, whatever is left, leaving no window owing more than its bound
 * ({@link io.github.ratelimit.internal.bucket.BucketKeyState#maxDebt}, {@link io.github.ratelimit.store.BucketStore.KeyState#charge}): Bucket4j's {@code consumeIgnoringRateLimits}
 * with the bound computed from the same state, in the same compare-and-set, so concurrent charges on any instance
 * cannot pass it. Computed in this JVM only ({@link CasProxyManager} sends states, never commands), so it has no
 * serialized form.
 */
final class ChargeCommand implements RemoteCommand<Long> {

    private final long tokens;

    /** @param tokens the tokens to take, at least 1 */
    ChargeCommand(long tokens) {
        this.tokens = tokens;
    }

    @Override
    public CommandResult<Long> execute(MutableBucketEntry entry, long currentTimeNanos) {
        if (!entry.exists()) {
            return CommandResult.bucketNotFound();
        }
        RemoteBucketState state = entry.get();
        state.refillAllBandwidth(currentTimeNanos);
        long taken = BucketKeyState.chargeable(state.getState(), tokens);
        if (taken > 0) {
            state.consume(taken);
            entry.set(state);
        }
        return CommandResult.success(taken, PrimitiveSerializationHandles.LONG_HANDLE);
    }

    /** Never serialized: the compare-and-set runs it in this JVM. */
    @Override
    public SerializationHandle<RemoteCommand<?>> getSerializationHandle() {
        throw new UnsupportedOperationException("a charge is computed in this JVM and never serialized");
    }

    @Override
    public boolean isImmediateSyncRequired(long unsynchronizedTokens, long nanosSinceLastSync) {
        return true;
    }

    @Override
    public long estimateTokensToConsume() {
        return tokens;
    }

    @Override
    public long getConsumedTokens(Long result) {
        return result;
    }

    @Override
    public Version getRequiredVersion() {
        return Versions.v_7_0_0;
    }
}
