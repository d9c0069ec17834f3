package io.github.ratelimit.store;

import io.github.ratelimit.Decision;
import io.github.ratelimit.store.BucketStore.KeyState;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The calls in flight of concurrency rules' keys in this JVM ({@link BucketStore.Limits#concurrency()}): a count per
 * key, changed atomically, and removed when it falls to zero, so the map holds only keys with a call in flight and its
 * size is bounded by the calls this JVM runs at once (no eviction could forget a call that holds a slot). A slot has
 * no expiry here: every call that takes one runs in this JVM, which gives it back when the call ends. Each count has a
 * generation, the receipt of its slots, so a call taken before a {@link #reset} gives back nothing of the count after
 * it. Thread-safe.
 */
final class LocalSlots {

    /** A key's calls in flight, and the generation they were counted in. */
    private record Held(long generation, int count) {}

    private static final AtomicLong GENERATIONS = new AtomicLong();

    /** How long a rejected call is told to wait: nothing says when a call in flight ends. */
    static final long RETRY_NANOS = 1_000_000_000L;

    private final ConcurrentHashMap<BucketStore.Key, Held> inFlight = new ConcurrentHashMap<>();

    /**
     * @param key the key
     * @param max the most calls in flight
     * @return the key's slots
     */
    KeyState state(BucketStore.Key key, int max) {
        return new Slots(key, max);
    }

    /** Forgets a key's calls in flight: they give back nothing when they end, and new calls find every slot free. */
    void reset(BucketStore.Key key) {
        inFlight.remove(key);
    }

    private final class Slots implements KeyState {

        private final BucketStore.Key key;
        private final int max;

        Slots(BucketStore.Key key, int max) {
            this.key = key;
            this.max = max;
        }

        @Override
        public Probe consume(long cost) {
            Held[] after = new Held[1];
            boolean[] took = new boolean[1];
            inFlight.compute(key, (k, held) -> {
                Held h = held == null ? new Held(GENERATIONS.incrementAndGet(), 0) : held;
                took[0] = h.count() < max;
                after[0] = took[0] ? new Held(h.generation(), h.count() + 1) : h;
                return after[0].count() == 0 ? null : after[0];
            });
            List<Decision.Window> windows = List.of(Decision.Window.concurrency(max, after[0].count()));
            return took[0]
                    ? new Probe(true, 0, windows, after[0].generation())
                    : new Probe(false, RETRY_NANOS, windows, 0);
        }

        @Override
        public Probe peek(long cost) {
            Held held = inFlight.get(key);
            int n = held == null ? 0 : held.count();
            return new Probe(n < max, n < max ? 0 : RETRY_NANOS, List.of(Decision.Window.concurrency(max, n)), 0);
        }

        @Override
        public Probe reserve(long cost, long maxWaitNanos) {
            throw new UnsupportedOperationException("a slot cannot be reserved ahead: nothing says when a call ends");
        }

        @Override
        public void refund(long cost, long receipt) {
            if (receipt != 0) {
                inFlight.computeIfPresent(
                        key,
                        (k, held) -> held.generation() != receipt
                                ? held
                                : held.count() <= 1 ? null : new Held(held.generation(), held.count() - 1));
            }
        }
    }
}
