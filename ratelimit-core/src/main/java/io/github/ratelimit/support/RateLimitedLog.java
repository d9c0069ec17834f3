package io.github.ratelimit.support;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A log line that is written at most once per interval, with a count of the ones it held back, so a failing
 * store under load cannot flood the log. Thread-safe.
 */
public final class RateLimitedLog {

    private static final Logger LOG = System.getLogger("io.github.ratelimit");

    private final long intervalNanos;
    private final AtomicLong nextAt = new AtomicLong(Long.MIN_VALUE);
    private final AtomicLong suppressed = new AtomicLong();

    /**
     * @param intervalNanos the least time between two lines
     */
    public RateLimitedLog(long intervalNanos) {
        this.intervalNanos = intervalNanos;
    }

    /**
     * @param level the level
     * @param message the message
     * @param error the cause, or {@code null}
     */
    public void log(Level level, String message, @Nullable Throwable error) {
        if (due()) {
            write(level, message, error);
        }
    }

    /**
     * As {@link #log(Level, String, Throwable)}, building the message only when the line is written: for hot
     * paths such as a decision during a store outage.
     *
     * @param level the level
     * @param message makes the message
     * @param error the cause, or {@code null}
     */
    public void log(Level level, Supplier<String> message, @Nullable Throwable error) {
        if (due()) {
            write(level, message.get(), error);
        }
    }

    private boolean due() {
        long now = System.nanoTime();
        long next = nextAt.get();
        if ((next != Long.MIN_VALUE && now - next < 0) || !nextAt.compareAndSet(next, now + intervalNanos)) {
            suppressed.incrementAndGet();
            return false;
        }
        return true;
    }

    private void write(Level level, String message, @Nullable Throwable error) {
        long held = suppressed.getAndSet(0);
        String text = held > 0 ? message + " (" + held + " similar messages suppressed)" : message;
        if (error != null) {
            LOG.log(level, text, error);
        } else {
            LOG.log(level, text);
        }
    }
}
