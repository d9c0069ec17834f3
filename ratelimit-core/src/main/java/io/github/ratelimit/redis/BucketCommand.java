package io.github.ratelimit.redis;

import io.github.bucket4j.distributed.remote.CommandResult;
import io.github.bucket4j.distributed.remote.RemoteCommand;
import io.github.bucket4j.distributed.remote.Request;

import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * One command of this JVM on a Bucket4j bucket in Redis, started by {@link CasProxyManager#send} and awaited on the
 * thread that started it.
 *
 * <h2>Combining</h2>
 * At most one compare-and-set of this JVM is on its way for a bucket at a time ({@link CasProxyManager.Ref#onWire}).
 * A command started while one is (or while others already wait) waits in the bucket's queue; once the bucket is free,
 * the first waiting owner to await takes every command waiting, computes them in order from the state the previous
 * write left, and sends them as one compare-and-set (flat combining). So commands of one JVM on one bucket never
 * conflict with each other, however many there are: a conflict needs another instance's write. A command that finds
 * the bucket free and nobody waiting is sent at once, alone, as a group of one that its owner settles when it awaits
 * it: a thread may start several commands (one request's rules) before it awaits the first, and they share a round
 * trip.
 *
 * <p>Waiting never depends on a thread that is not awaiting: a group of several is led by an owner who awaits it
 * there and then, and a group of one by the owner of its only command, which awaits its commands in the order it
 * started them. A command queued behind a group of one was started after it, so a chain of waits always runs back in
 * time, and never closes into a cycle.
 *
 * @param <T> the command's result type
 */
final class BucketCommand<T> {

    private static final int QUEUED = 0;
    private static final int TAKEN = 1;
    private static final int DONE = 2;

    final CasProxyManager manager;
    final CasProxyManager.Ref ref;
    final Request<T> request;
    /** The command wrapped to create or replace the bucket in the same step. */
    final RemoteCommand<T> command;
    /** The circuit breaker's epoch the command was let through in. */
    final long epoch;
    /** When it was started, for its latency. */
    final long started;
    private final Thread owner = Thread.currentThread();
    private volatile int state = QUEUED;
    /** Whether its owner waits in {@link #await}: only such an owner is woken to lead a group. */
    private volatile boolean awaited;
    /** For a command sent at once: its group (of one) and the attempt on its way. */
    private List<BucketCommand<?>> group;
    private CasProxyManager.Attempt first;
    private CommandResult<T> result;
    private RuntimeException error;

    BucketCommand(CasProxyManager manager, CasProxyManager.Ref ref, Request<T> request, RemoteCommand<T> command,
                  long epoch, long started) {
        this.manager = manager;
        this.ref = ref;
        this.request = request;
        this.command = command;
        this.epoch = epoch;
        this.started = started;
    }

    /** Records that this command leads a group of one whose attempt is on its way: its owner settles it on await. */
    void sentAlone(List<BucketCommand<?>> group, CasProxyManager.Attempt first) {
        this.group = group;
        this.first = first;
    }

    /** Marks the command taken into a group a leader is about to send (under the bucket's monitor). */
    void take() {
        state = TAKEN;
    }

    /** @return whether its outcome is in */
    boolean done() {
        return state == DONE;
    }

    /** @return whether it waits to be taken into a group (read under the bucket's monitor) */
    boolean queued() {
        return state == QUEUED;
    }

    /** @return whether its owner is waiting in {@link #await} (read under the bucket's monitor) */
    boolean awaited() {
        return awaited;
    }

    /** Wakes its owner, who may lead the next group. */
    void wake() {
        LockSupport.unpark(owner);
    }

    /** Publishes the command's outcome (fields written before the volatile state) and wakes its owner. */
    @SuppressWarnings("unchecked")
    void finish(CommandResult<?> result, RuntimeException error) {
        this.result = (CommandResult<T>) result;
        this.error = error;
        state = DONE;
        if (owner != Thread.currentThread()) {
            LockSupport.unpark(owner);
        }
    }

    /**
     * @return the command's result, once Redis took the state its group wrote (after retries on conflicts)
     * @throws io.github.ratelimit.store.RateLimitStoreException when Redis fails, or refuses while the breaker is open
     * @throws io.github.ratelimit.store.BucketStore.ContentionException when the bucket kept changing under other
     *         instances' writes
     */
    CommandResult<T> await() {
        if (first != null) {
            CasProxyManager.Attempt attempt = first;
            first = null;
            manager.settle(ref, group, attempt);
        } else {
            awaitTurn();
        }
        if (error != null) {
            throw error;
        }
        return result;
    }

    /** Waits until a group with this command in it is done, leading one when the bucket is free. */
    private void awaitTurn() {
        awaited = true;
        boolean interrupted = false;
        try {
            while (state != DONE) {
                List<BucketCommand<?>> lead = state == QUEUED ? manager.takeGroup(ref, this) : null;
                if (lead != null) {
                    manager.sendAndSettle(ref, lead);
                    continue;
                }
                if (state != DONE) {
                    // A group with this command in it is on its way, or another's is: each ends within the store's
                    // timeouts, and whoever ends one wakes the next leader.
                    LockSupport.park(this);
                    interrupted |= Thread.interrupted();
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
