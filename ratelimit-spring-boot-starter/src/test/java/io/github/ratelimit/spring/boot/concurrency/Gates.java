package io.github.ratelimit.spring.boot.concurrency;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Holds calls until the test opens their gate, and counts the calls that reached each gate: what a test waits for
 * (Awaitility) instead of sleeping. A call that names no gate passes at once; one whose gate stays shut gives up
 * after 30 s, so a failed test leaves no thread behind for long. Thread-safe.
 */
final class Gates {

    private final Map<String, CountDownLatch> latches = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> entered = new ConcurrentHashMap<>();

    /**
     * @param gate a gate's name, or empty for none
     * @return {@code "passed"}, or {@code "passed <gate>"} once the gate is open
     */
    String pass(String gate) {
        if (gate.isEmpty()) {
            return "passed";
        }
        entered.computeIfAbsent(gate, g -> new AtomicInteger()).incrementAndGet();
        try {
            if (!latch(gate).await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("gate " + gate + " was never opened");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted at gate " + gate, e);
        }
        return "passed " + gate;
    }

    /** @return how many calls reached the gate */
    int entered(String gate) {
        AtomicInteger n = entered.get(gate);
        return n == null ? 0 : n.get();
    }

    void open(String gate) {
        latch(gate).countDown();
    }

    /** Lets every call waiting at a gate go on, and forgets the gates. */
    void openAll() {
        latches.values().forEach(CountDownLatch::countDown);
        latches.clear();
        entered.clear();
    }

    private CountDownLatch latch(String gate) {
        return latches.computeIfAbsent(gate, g -> new CountDownLatch(1));
    }
}
