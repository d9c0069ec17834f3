package io.github.ratelimit.testing.redis;

/**
 * Thrown by the Redis test harness when a Redis process cannot be located, started, reached,
 * signalled or brought into the expected state within its time bound.
 *
 * <p>The message always says what was being attempted and, where a server process was involved,
 * ends with the tail of that server's log file so a failing test explains itself.
 */
public class RedisHarnessException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what failed, including any diagnostics (never {@code null})
     */
    public RedisHarnessException(String message) {
        super(message);
    }

    /**
     * @param message what failed, including any diagnostics (never {@code null})
     * @param cause the underlying failure
     */
    public RedisHarnessException(String message, Throwable cause) {
        super(message, cause);
    }
}
