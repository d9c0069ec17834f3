package io.github.ratelimit.testing.redis;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts one real Redis server for a test class and stops it afterwards:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final RedisServerExtension redis = new RedisServerExtension();
 * ... redis.uri() ...
 * }</pre>
 */
public final class RedisServerExtension implements BeforeAllCallback, AfterAllCallback {

    private RedisServer server;

    @Override
    public void beforeAll(ExtensionContext context) {
        server = RedisServer.start();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (server != null) {
            server.close();
            server = null;
        }
    }

    /** @return the running server */
    public RedisServer server() {
        if (server == null) {
            throw new IllegalStateException("the Redis server runs only while the test class runs");
        }
        return server;
    }

    /** @return {@code redis://127.0.0.1:<port>} */
    public String uri() {
        return server().uri().toString();
    }
}
