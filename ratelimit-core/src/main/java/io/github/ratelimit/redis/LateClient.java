package io.github.ratelimit.redis;

import io.github.ratelimit.store.RateLimitStoreException;
import java.time.Duration;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.UnifiedJedis;

/**
 * The store's connections for its calls off the request path (lease renewals, late refunds): a client of their own,
 * with the longer background timeout, opened on first use, so a store whose calls never fail never opens it; or the
 * application's own client, when the store was given one. Thread-safe.
 */
final class LateClient implements AutoCloseable {

    /** Connections per node: the renewer's thread and the late refunds' thread. */
    static final int POOL_SIZE = 2;

    private final Supplier<UnifiedJedis> connect;
    private final Duration timeout;
    private final boolean owned;
    private @Nullable UnifiedJedis client;
    private @Nullable ScriptRunner runner;
    private boolean closed;

    /**
     * @param connect opens the client
     * @param timeout how long a call may take on it
     * @param owned whether {@link #close()} closes the client
     */
    LateClient(Supplier<UnifiedJedis> connect, Duration timeout, boolean owned) {
        this.connect = connect;
        this.timeout = timeout;
        this.owned = owned;
    }

    /**
     * @return the runner of calls off the request path, its client opened on first use
     * @throws RateLimitStoreException once the store is closed
     */
    synchronized ScriptRunner runner() {
        if (closed) {
            throw RedisCallException.refusal("the Redis store is closed");
        }
        if (runner == null) {
            client = connect.get();
            runner = new DirectRunner(client, timeout.toNanos());
        }
        return runner;
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (owned && client != null) {
            client.close();
        }
    }
}
