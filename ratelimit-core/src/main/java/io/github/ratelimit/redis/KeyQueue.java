package io.github.ratelimit.redis;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * This JVM's calls on one Redis key, combined: at most one call (or group of calls) of this JVM is on its way for the
 * key at a time. A call started while one is (or while others already wait) waits in the queue; once the key is free,
 * the first waiting owner to await takes the calls waiting (at most a group's size, in the order they were started)
 * and sends them as one (flat combining): a token bucket's commands as one compare-and-set computed in order, a
 * sliding window's operations as one script run that performs them in order. So the calls of one JVM on one key never
 * conflict with each other, and a crowd on one key costs Redis one call per group, not one per caller.
 *
 * <p>A call that finds the key free and nobody waiting goes at once, alone ({@link #goesAlone}): a thread may start
 * several calls (one request's rules) before it awaits the first, and they share a round trip; its owner settles it
 * when it awaits it, and then frees the key ({@link #handOver}).
 *
 * <p>Waiting never depends on a thread that is not awaiting: a group of several is led by an owner who awaits it there
 * and then, and a call alone by its owner, who awaits its calls in the order it started them. A call queued behind a
 * call alone was started after it, so a chain of waits always runs back in time, and never closes into a cycle.
 * Thread-safe.
 */
final class KeyQueue {

    /** A call that may wait in a key's queue; its outcome is set by whoever ends it, before {@link #finished}. */
    abstract static class Call {

        private static final int QUEUED = 0;
        private static final int TAKEN = 1;
        private static final int DONE = 2;

        private final Thread owner = Thread.currentThread();
        private volatile int state = QUEUED;
        /** Whether its owner waits in {@link KeyQueue#awaitTurn}: only such an owner is woken to lead a group. */
        private volatile boolean awaited;

        /** Publishes the outcome, written before this call, and wakes the owner. */
        final void finished() {
            state = DONE;
            if (owner != Thread.currentThread()) {
                LockSupport.unpark(owner);
            }
        }

        /** @return whether its outcome is in */
        final boolean done() {
            return state == DONE;
        }
    }

    /** Sends a group the caller leads, and ends each of its calls. */
    @FunctionalInterface
    interface Leader<C extends Call> {
        void sendAndFinish(List<C> group);
    }

    private final int maxGroup;
    /** Whether a call or group of this JVM is on its way for the key; guarded by this queue's monitor. */
    private boolean onWire;

    private final ArrayDeque<Call> waiting = new ArrayDeque<>();

    /**
     * @param maxGroup the most calls sent as one
     */
    KeyQueue(int maxGroup) {
        this.maxGroup = maxGroup;
    }

    /**
     * @param call a call just started
     * @return {@code true} when it goes at once, alone: the caller sends it, and must {@link #handOver} once it is
     *         settled (or could not be sent); {@code false} when it waits in the queue ({@link #awaitTurn})
     */
    synchronized boolean goesAlone(Call call) {
        if (onWire || !waiting.isEmpty()) {
            waiting.add(call);
            return false;
        }
        onWire = true;
        return true;
    }

    /**
     * Waits, on the owner's thread, until a group with the call in it is done, leading one whenever the key is free.
     * Ignores interruption, as a blocking socket read does, and keeps the thread's interrupt status.
     *
     * @param own the call, queued
     * @param leader sends a group this thread leads, and ends each of its calls
     */
    @SuppressWarnings("unchecked")
    <C extends Call> void awaitTurn(C own, Leader<C> leader) {
        Call call = own;
        call.awaited = true;
        boolean interrupted = false;
        try {
            while (!own.done()) {
                List<Call> group = call.state == Call.QUEUED ? take(call) : null;
                if (group != null) {
                    try {
                        leader.sendAndFinish((List<C>) (List<?>) group);
                    } finally {
                        handOver();
                    }
                    continue;
                }
                if (!own.done()) {
                    // A group with this call in it is on its way, or another's is: each ends within the store's
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

    /** @return the next group, when the key is free and {@code own} still waits to be taken; else {@code null} */
    private synchronized @Nullable List<Call> take(Call own) {
        if (onWire || own.state != Call.QUEUED) {
            return null;
        }
        onWire = true;
        List<Call> group = new ArrayList<>(Math.min(waiting.size(), maxGroup));
        for (Call c; group.size() < maxGroup && (c = waiting.poll()) != null; ) {
            c.state = Call.TAKEN;
            group.add(c);
        }
        return group;
    }

    /**
     * Frees the key once its call or group is done, and wakes the owner of the first waiting call who awaits it: that
     * owner leads the next group. (An owner who does not await yet leads it when it does.)
     */
    synchronized void handOver() {
        onWire = false;
        for (Call c : waiting) {
            if (c.awaited) {
                LockSupport.unpark(c.owner);
                return;
            }
        }
    }
}
