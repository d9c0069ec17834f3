package io.github.ratelimit.redishttp;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;

/**
 * Holds requests in their handler until the test opens their gate, and counts the requests that reached each gate:
 * what a test waits for (Awaitility) instead of sleeping. A Spring MVC handler blocks its thread ({@link #pass}); a
 * WebFlux handler returns a publisher that completes when the gate opens ({@link #later}), holding no thread, and a
 * client that goes away meanwhile cancels only its own wait. A gate that stays shut gives up after 30 s, so a failed
 * test leaves nothing behind for long. Thread-safe.
 */
final class Gates {

    private static final Duration GIVE_UP = Duration.ofSeconds(30);

    private final Map<String, CompletableFuture<Void>> gates = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> entered = new ConcurrentHashMap<>();

    /**
     * Blocks the calling thread until the gate opens.
     *
     * @param gate a gate's name, or empty for none (passes at once)
     */
    void pass(String gate) {
        if (gate.isEmpty()) {
            return;
        }
        enter(gate);
        try {
            gate(gate).get(GIVE_UP.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted at gate " + gate, e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("gate " + gate + " was never opened", e);
        }
    }

    /**
     * @param gate a gate's name, or empty for none
     * @return completes once the gate is open; cancelling it leaves the gate as it is
     */
    Mono<Void> later(String gate) {
        if (gate.isEmpty()) {
            return Mono.empty();
        }
        enter(gate);
        return Mono.fromFuture(gate(gate), true).timeout(GIVE_UP);
    }

    /** @return how many requests reached the gate */
    int entered(String gate) {
        AtomicInteger n = entered.get(gate);
        return n == null ? 0 : n.get();
    }

    /** Lets every request waiting at the gate, and every later one, go on. */
    void open(String gate) {
        gate(gate).complete(null);
    }

    /** Opens every gate. */
    void openAll() {
        gates.values().forEach(g -> g.complete(null));
    }

    private void enter(String gate) {
        entered.computeIfAbsent(gate, g -> new AtomicInteger()).incrementAndGet();
    }

    private CompletableFuture<Void> gate(String gate) {
        return gates.computeIfAbsent(gate, g -> new CompletableFuture<>());
    }
}
