package io.github.ratelimit.redis;

import io.github.ratelimit.store.RateLimitStoreException;
import java.net.ConnectException;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.exceptions.JedisException;

/**
 * A Redis call of the store that failed, with what is known of its effect, which decides whether giving back tokens or
 * a slot may be tried again without counting twice ({@link LateRefunds}):
 * <ul>
 *   <li>{@linkplain #sent() not sent}: refused by the open circuit breaker, given up while it waited for one of this
 *       instance's own lanes or connections, or no connection could be opened: Redis saw nothing of it;</li>
 *   <li>sent and unanswered (a timeout, a connection lost on the way): Redis may have run it or not. For a
 *       compare-and-set, {@link #updates()} are the states it would have written, by which a later look at the key
 *       can tell whether it did.</li>
 * </ul>
 */
final class RedisCallException extends RateLimitStoreException {

    private static final long serialVersionUID = 1L;

    private final boolean sent;
    private final transient List<byte[]> updates;

    /**
     * @param message what failed
     * @param cause the underlying failure, or {@code null}
     * @param sent whether the call may have reached Redis
     * @param updates for a compare-and-set that may have reached Redis, the states its unanswered writes would have
     *        left (its first ask's and, when it was asked again, the second's: at most one of them was done); else empty
     */
    RedisCallException(String message, @Nullable Throwable cause, boolean sent, List<byte[]> updates) {
        super(message, cause);
        this.sent = sent;
        this.updates = List.copyOf(updates);
    }

    /** A refusal thrown often during an outage: made once, without a stack trace. */
    private RedisCallException(String message) {
        super(message, null, false);
        this.sent = false;
        this.updates = List.of();
    }

    /** @return a refusal that never reaches Redis, made once without a stack trace */
    static RedisCallException refusal(String message) {
        return new RedisCallException(message);
    }

    /**
     * @param e a failure of Jedis's
     * @return whether the call certainly did not reach Redis: its wait for a lane or a pooled connection gave up, or
     *         a new connection could not be opened or set up (the commands Jedis sends first on a new connection, such
     *         as {@code CLIENT SETINFO}, were not answered in time: the call itself was never written)
     */
    static boolean unsent(JedisException e) {
        if (e instanceof AutoPipeline.NotSentException || e.getCause() instanceof NoSuchElementException) {
            return true;
        }
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof ConnectException) {
                return true;
            }
            for (StackTraceElement frame : t.getStackTrace()) {
                if (frame.getClassName().startsWith("redis.clients.jedis.")
                        && CONNECTING.contains(frame.getMethodName())) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The methods of Jedis's that open and set up a connection, before any command of the store is written on it. */
    private static final Set<String> CONNECTING = Set.of("initializeFromClientConfig", "makeObject", "connect");

    /** @return whether the call may have reached Redis (and so may have taken effect) */
    boolean sent() {
        return sent;
    }

    /**
     * @return for a compare-and-set that may have reached Redis, the states its unanswered writes would have left;
     *         else empty
     */
    List<byte[]> updates() {
        return updates;
    }
}
