package io.github.ratelimit.redis;

import io.github.bucket4j.distributed.remote.CommandResult;
import io.github.bucket4j.distributed.remote.RemoteCommand;
import io.github.bucket4j.distributed.remote.Request;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.RateLimitStoreException;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One command of this JVM on a Bucket4j bucket in Redis, started by {@link CasProxyManager#send} and awaited on the
 * thread that started it. The commands of one bucket wait in its {@link KeyQueue}: sent at once when the bucket is
 * free, else combined with the others waiting into one compare-and-set, computed in order from the state the previous
 * write left, so this JVM's commands on one bucket never conflict with each other.
 *
 * @param <T> the command's result type
 */
final class BucketCommand<T> extends KeyQueue.Call {

    final CasProxyManager manager;
    final CasProxyManager.Ref ref;
    final Request<T> request;
    /** The command wrapped to create or replace the bucket in the same step. */
    final RemoteCommand<T> command;
    /** The circuit breaker's epoch the command was let through in. */
    final long epoch;
    /** When it was started, for its latency. */
    final long started;
    /** For a command sent at once: its group (of one) and the attempt on its way. */
    private @Nullable List<BucketCommand<?>> group;

    private CasProxyManager.@Nullable Attempt first;
    private @Nullable CommandResult<T> result;
    private @Nullable RuntimeException error;

    BucketCommand(
            CasProxyManager manager,
            CasProxyManager.Ref ref,
            Request<T> request,
            RemoteCommand<T> command,
            long epoch,
            long started) {
        this.manager = manager;
        this.ref = ref;
        this.request = request;
        this.command = command;
        this.epoch = epoch;
        this.started = started;
    }

    /** Records that this command goes alone, its attempt on its way: its owner settles it on await. */
    void sentAlone(List<BucketCommand<?>> group, CasProxyManager.Attempt first) {
        this.group = group;
        this.first = first;
    }

    /** Sets the command's outcome and wakes its owner. */
    @SuppressWarnings("unchecked")
    void finish(@Nullable CommandResult<?> result, @Nullable RuntimeException error) {
        this.result = (CommandResult<T>) result;
        this.error = error;
        finished();
    }

    /**
     * @return the command's result, once Redis took the state its group wrote (after retries on conflicts)
     * @throws RateLimitStoreException when Redis fails, or refuses while the breaker is open
     * @throws BucketStore.ContentionException when the bucket kept changing under other
     *         instances' writes
     */
    @SuppressWarnings("NullAway") // first comes with its group; finish leaves a result or an error, thrown below
    CommandResult<T> await() {
        if (first != null) {
            CasProxyManager.Attempt attempt = first;
            first = null;
            try {
                manager.settle(ref, group, attempt);
            } finally {
                manager.handOver(ref);
            }
        } else {
            ref.queue.<BucketCommand<?>>awaitTurn(this, g -> manager.sendAndSettle(ref, g));
        }
        if (error != null) {
            throw error;
        }
        return result;
    }
}
