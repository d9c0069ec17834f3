package io.github.ratelimit.benchmarks.http;

import jakarta.annotation.PreDestroy;
import java.net.URI;
import java.util.List;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.JedisPoolConfig;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/**
 * The yardstick of the Redis benchmarks: what a developer writes by hand without this library, one {@code EVALSHA} of
 * a token-bucket script per request through a {@link JedisPool}, on the one client key every connection shares (as
 * the library's endpoints do). It uses no code of the library. Without {@code ratelimit.redis.url} (the local-store
 * application) it is the same token bucket in this JVM, under a lock.
 */
@RestController
class HandWrittenEndpoint {

    /** A token bucket in Redis: refill by the server's time, take one token if there is one, keep the key a while. */
    static final String SCRIPT = """
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
            local rate = tonumber(ARGV[1])
            local capacity = tonumber(ARGV[2])
            local s = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
            local tokens = tonumber(s[1]) or capacity
            local ts = tonumber(s[2]) or now
            tokens = math.min(capacity, tokens + (now - ts) * rate / 1000000)
            local allowed = 0
            if tokens >= 1 then
              tokens = tokens - 1
              allowed = 1
            end
            redis.call('HSET', KEYS[1], 'tokens', tokens, 'ts', now)
            redis.call('PEXPIRE', KEYS[1], 60000)
            return allowed
            """;

    /** The limit, as the library's endpoints have it: far above any throughput here. */
    private static final List<String> ARGS = List.of("1000000000", "1000000000");

    private static final List<String> KEY = List.of("hand:{bench}");

    private final JedisPool pool;
    private final String sha;
    private double tokens = 1_000_000_000d;
    private long lastNanos = System.nanoTime();

    HandWrittenEndpoint(@Value("${ratelimit.redis.url:}") String url) {
        if (url.isBlank()) {
            this.pool = null;
            this.sha = null;
        } else {
            JedisPoolConfig config = new JedisPoolConfig();
            config.setMaxTotal(64); // as many as the benchmark's connections: no caller waits for a connection
            config.setMaxIdle(64);
            this.pool = new JedisPool(config, URI.create(url));
            this.sha = load(pool);
        }
    }

    /** @return the script's SHA, or {@code null} when Redis is not there (the application with Redis down) */
    private static String load(JedisPool pool) {
        try (Jedis jedis = pool.getResource()) {
            return jedis.scriptLoad(SCRIPT);
        } catch (JedisException e) {
            return null;
        }
    }

    @GetMapping("/hand")
    ResponseEntity<String> hand() {
        boolean allowed = pool == null ? takeLocally() : takeInRedis();
        return allowed
                ? ResponseEntity.ok("ok")
                : ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS).body("no");
    }

    private boolean takeInRedis() {
        try (Jedis jedis = pool.getResource()) {
            Object reply;
            try {
                reply = sha != null ? jedis.evalsha(sha, KEY, ARGS) : jedis.eval(SCRIPT, KEY, ARGS);
            } catch (JedisNoScriptException e) {
                reply = jedis.eval(SCRIPT, KEY, ARGS);
            }
            return Long.valueOf(1).equals(reply);
        }
    }

    private synchronized boolean takeLocally() {
        long now = System.nanoTime();
        tokens = Math.min(1_000_000_000d, tokens + (now - lastNanos)); // 1e9 per second: one per nanosecond
        lastNanos = now;
        if (tokens < 1) {
            return false;
        }
        tokens -= 1;
        return true;
    }

    @PreDestroy
    void close() {
        if (pool != null) {
            pool.close();
        }
    }
}
