package io.github.ratelimit.testing.redis;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Bounded polling. Nothing in the harness waits without a deadline. */
final class Waits {

    private static final long POLL_MILLIS = 50;

    private Waits() {}

    /**
     * Polls {@code condition} until it returns {@code true} or {@code timeout} elapses. A condition
     * that throws counts as "not yet"; the last such exception is reported on timeout.
     *
     * @throws RedisHarnessException on timeout, with {@code description}, the last error and the
     *     text produced by {@code diagnostics} (evaluated only on failure)
     */
    static void until(Duration timeout, String description, BooleanSupplier condition, Supplier<String> diagnostics) {
        long deadline = System.nanoTime() + timeout.toNanos();
        RuntimeException lastError = null;
        while (true) {
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
            } catch (RuntimeException e) {
                lastError = e;
            }
            if (System.nanoTime() - deadline >= 0) {
                break;
            }
            sleep(POLL_MILLIS);
        }
        StringBuilder message = new StringBuilder("Timed out after ")
                .append(timeout.toMillis())
                .append(" ms waiting for ")
                .append(description);
        if (lastError != null) {
            message.append("\nLast error: ").append(lastError);
        }
        String details = safeDiagnostics(diagnostics);
        if (!details.isEmpty()) {
            message.append('\n').append(details);
        }
        throw new RedisHarnessException(message.toString(), lastError);
    }

    static String safeDiagnostics(Supplier<String> diagnostics) {
        try {
            return diagnostics == null ? "" : diagnostics.get();
        } catch (RuntimeException e) {
            return "(diagnostics unavailable: " + e + ")";
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RedisHarnessException("Interrupted while waiting", e);
        }
    }
}
