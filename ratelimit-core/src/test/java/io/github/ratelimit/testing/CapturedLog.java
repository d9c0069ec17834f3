package io.github.ratelimit.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The messages one logger writes while it is open, as {@code java.util.logging} receives them (the JDK's
 * {@code System.Logger} writes there unless an application routes it elsewhere): for tests of what a log line says.
 * Thread-safe; {@link #close()} stops capturing and restores the logger's level.
 *
 * <pre>{@code
 * try (CapturedLog audit = CapturedLog.of("io.github.ratelimit.limits")) {
 *     ...
 *     assertThat(audit.messages()).singleElement()...
 * }
 * }</pre>
 */
public final class CapturedLog extends Handler implements AutoCloseable {

    private final Logger logger;
    private final Level level;
    private final List<String> messages = new CopyOnWriteArrayList<>();

    private CapturedLog(Logger logger) {
        this.logger = logger;
        this.level = logger.getLevel();
        logger.setLevel(Level.INFO);
        logger.addHandler(this);
    }

    /**
     * @param name the logger's name
     * @return a capture of its messages at INFO and above, from now on
     */
    public static CapturedLog of(String name) {
        return new CapturedLog(Logger.getLogger(name));
    }

    /** @return the messages captured so far, in order */
    public List<String> messages() {
        return List.copyOf(messages);
    }

    @Override
    public void publish(LogRecord record) {
        messages.add(record.getMessage());
    }

    @Override
    public void flush() {}

    @Override
    public void close() {
        logger.removeHandler(this);
        logger.setLevel(level);
    }
}
