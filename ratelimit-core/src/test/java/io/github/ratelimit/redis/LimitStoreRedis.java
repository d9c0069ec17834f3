package io.github.ratelimit.redis;

import io.github.ratelimit.Limit;
import io.github.ratelimit.testing.redis.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import redis.clients.jedis.RedisClient;

/**
 * A real Redis server for a test class of the limit store, a client on it, and limit stores on their own key
 * prefixes, with the plans {@code wide} ({@code 100/1m burst=500}), {@code tiny} ({@code 1/1h}) and {@code gold}
 * ({@code 1000/1m}), whose refreshes run by hand (the scheduled one runs once, at the start, and is awaited).
 */
final class LimitStoreRedis implements BeforeAllCallback, AfterAllCallback {

    private RedisServer server;
    private RedisClient client;

    @Override
    public void beforeAll(ExtensionContext context) {
        server = RedisServer.start();
        client = RedisClient.builder().hostAndPort(server.hostAndPort()).build();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        try {
            if (client != null) {
                client.close();
            }
        } finally {
            if (server != null) {
                server.close();
            }
        }
    }

    /** @return a client on the server, for what the tests write behind the store's back */
    RedisClient client() {
        return client;
    }

    /** @return a new key prefix */
    static String prefix() {
        return "l" + UUID.randomUUID().toString().substring(0, 8);
    }

    /**
     * @return a store on the prefix whose scheduled first refresh has run, so that it cannot race what a test writes
     *         behind the store's back (it would repair a stream the test has just broken)
     */
    RedisLimitProvider store(String prefix) {
        RedisLimitProvider store = RedisLimitProvider.builder()
                .client(client)
                .keyPrefix(prefix)
                .plan("wide", List.of(Limit.parse("100/1m burst=500")))
                .plan("tiny", List.of(Limit.parse("1/1h")))
                .plan("gold", List.of(Limit.parse("1000/1m")))
                .refreshInterval(Duration.ofHours(1))
                .build();
        Awaitility.await("the scheduled first refresh")
                .atMost(Duration.ofSeconds(10))
                .until(() -> store.refreshes() >= 1);
        return store;
    }

    /** @return calls of a command since the server started, from {@code INFO commandstats} */
    long calls(String command) {
        return server.commandCalls(command);
    }
}
