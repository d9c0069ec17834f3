package io.github.ratelimit.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.RateLimitHeaders.HeaderStyle;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.internal.web.UrlRule;
import io.github.ratelimit.key.ClientIpResolver;
import io.github.ratelimit.redis.JedisBucketStore;
import io.github.ratelimit.servlet.ProblemDetailsRejectionHandler;
import io.github.ratelimit.servlet.RateLimitFilter;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.servlet.testing.TomcatServer;
import io.github.ratelimit.testing.ManualClock;
import io.github.ratelimit.testing.redis.RedisServerExtension;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.catalina.startup.Tomcat;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * A real Tomcat with the rate-limit filter (constructed programmatically) in front of a servlet that answers every
 * method with 200 and counts what reaches it, over a local or a Redis store. Time stands still (a
 * {@link ManualClock}; Redis buckets use hour-long windows), so nothing refills during a test.
 */
final class Target implements AutoCloseable {

    private static final AtomicLong PREFIXES = new AtomicLong();

    private final TomcatServer server;
    private final RateLimiter limiter;
    private final JedisBucketStore redisStore;
    private final RedisServerExtension redis;
    private final String prefix;
    private final ManualClock clock;
    /** Requests that reached the servlet, by method. */
    final Map<String, AtomicInteger> reached;

    private Target(
            TomcatServer server,
            RateLimiter limiter,
            JedisBucketStore redisStore,
            RedisServerExtension redis,
            String prefix,
            ManualClock clock,
            Map<String, AtomicInteger> reached) {
        this.server = server;
        this.clock = clock;
        this.limiter = limiter;
        this.redisStore = redisStore;
        this.redis = redis;
        this.prefix = prefix;
        this.reached = reached;
    }

    static Builder builder(StoreKind store, RedisServerExtension redis) {
        return new Builder(store, redis);
    }

    int port() {
        return server.port();
    }

    /** @return how many requests reached the servlet, all methods together */
    int reachedTotal() {
        return reached.values().stream().mapToInt(AtomicInteger::get).sum();
    }

    RawHttp.Response send(String method, String target, List<String> headerLines) throws IOException {
        return RawHttp.send(port(), method, target, headerLines);
    }

    RawHttp.Response get(String target, String... headerLines) throws IOException {
        return RawHttp.send(port(), "GET", target, headerLines);
    }

    /** @return the limiter's clock and waiter: SOFT delays end when it is advanced */
    ManualClock clock() {
        return clock;
    }

    /** @return the Redis store, or {@code null} for the local one */
    JedisBucketStore redisStore() {
        return redisStore;
    }

    String prefix() {
        return prefix;
    }

    /**
     * @return every Redis key of a rule's state under this target's prefix, {@code <prefix>:<rule>:{<key>}...} (empty
     *         for the local store); not the store's own {@code <prefix>:{layout}}
     */
    List<byte[]> redisKeys() {
        if (redisStore == null) {
            return List.of();
        }
        List<byte[]> keys = new ArrayList<>();
        try (Jedis jedis = new Jedis(redis.server().host(), redis.server().port())) {
            ScanParams params = new ScanParams()
                    .match((prefix + ":*:{*").getBytes(StandardCharsets.UTF_8))
                    .count(1000);
            byte[] cursor = ScanParams.SCAN_POINTER_START_BINARY;
            do {
                ScanResult<byte[]> page = jedis.scan(cursor, params);
                keys.addAll(page.getResult());
                cursor = page.getCursorAsBytes();
            } while (!java.util.Arrays.equals(cursor, ScanParams.SCAN_POINTER_START_BINARY));
        }
        return keys;
    }

    /** @return the key's remaining time to live in milliseconds (PTTL): -1 without TTL, -2 when absent */
    long pttl(byte[] key) {
        try (Jedis jedis = new Jedis(redis.server().host(), redis.server().port())) {
            return jedis.pttl(key);
        }
    }

    /**
     * Asserts that every Redis key this target wrote is well formed: the prefix, exactly one hash tag
     * ({@code {...}}, closing the key), and a positive TTL; and that there are exactly {@code buckets} of them.
     * Does nothing for the local store.
     */
    void assertRedisKeysWellFormed(int buckets) {
        if (redisStore == null) {
            return;
        }
        List<byte[]> keys = assertRedisKeysWellFormed();
        assertThat(keys).as("one Redis key per bucket").hasSize(buckets);
        for (byte[] key : keys) {
            assertThat(pttl(key))
                    .as("PTTL of %s", new String(key, StandardCharsets.UTF_8))
                    .isPositive();
        }
    }

    /**
     * Asserts that every Redis key under this target's prefix is well formed (see {@link #assertRedisKeysWellFormed(int)}),
     * however many there are (buckets that were only touched and refunded expire within seconds).
     *
     * @return the keys
     */
    List<byte[]> assertRedisKeysWellFormed() {
        if (redisStore == null) {
            return List.of();
        }
        List<byte[]> keys = redisKeys();
        for (byte[] raw : keys) {
            String key = new String(raw, StandardCharsets.UTF_8);
            assertThat(key).as("Redis key").startsWith(prefix + ":").endsWith("}");
            // The rule's segment holds no colon (it is percent-encoded), so the hash tag follows the first one after
            // the prefix.
            assertThat(key.indexOf(":{", prefix.length() + 1))
                    .as("hash tag in %s", key)
                    .isEqualTo(key.indexOf(':', prefix.length() + 1));
            assertThat(key.chars().filter(c -> c == '{').count())
                    .as("'{' in %s", key)
                    .isEqualTo(1);
            assertThat(key.chars().filter(c -> c == '}').count())
                    .as("'}' in %s", key)
                    .isEqualTo(1);
            // -2: expired between SCAN and PTTL (a refunded bucket lives about a second); -1 would be no TTL at all.
            assertThat(pttl(raw)).as("PTTL of %s", key).isNotEqualTo(-1L);
        }
        assertThat(redisStore.stats().failures()).as("Redis failures").isZero();
        return keys;
    }

    @Override
    public void close() throws Exception {
        try {
            server.close();
        } finally {
            limiter.close();
        }
    }

    /** Answers every method (it overrides {@code service}) with 200 and counts it. */
    static final class CountingServlet extends HttpServlet {
        private final Map<String, AtomicInteger> reached;

        CountingServlet(Map<String, AtomicInteger> reached) {
            this.reached = reached;
        }

        @Override
        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            reached.computeIfAbsent(req.getMethod(), m -> new AtomicInteger()).incrementAndGet();
            resp.setContentType("text/plain");
            resp.getWriter().write("ok");
        }
    }

    static final class Builder {
        private final StoreKind store;
        private final RedisServerExtension redis;
        private ClientIpResolver clientIp = ClientIpResolver.direct();
        private final List<UrlRule> rules = new ArrayList<>();
        private final List<UrlRule> beforeRules = new ArrayList<>();
        private final Map<String, Filter> before = new LinkedHashMap<>();
        private final Map<String, Filter> between = new LinkedHashMap<>();
        private final List<Consumer<Tomcat>> tomcat = new ArrayList<>();
        private final Map<String, HttpServlet> servlets = new LinkedHashMap<>();
        private final Map<String, String[]> mappings = new LinkedHashMap<>();
        private Consumer<RateLimiter.Builder> limiterOptions = b -> {};

        private Builder(StoreKind store, RedisServerExtension redis) {
            this.store = store;
            this.redis = redis;
        }

        Builder clientIp(ClientIpResolver resolver) {
            this.clientIp = resolver;
            return this;
        }

        Builder rule(UrlRule rule) {
            rules.add(rule);
            return this;
        }

        /** A rule decided by a second filter instance ahead of the {@link #authentication} filters. */
        Builder ruleBeforeAuthentication(UrlRule rule) {
            beforeRules.add(rule);
            return this;
        }

        /** A filter that runs before every rate-limit filter (e.g. one that sets a principal). */
        Builder before(String name, Filter filter) {
            before.put(name, filter);
            return this;
        }

        /** A filter between the before-authentication rate-limit filter and the main one. */
        Builder authentication(String name, Filter filter) {
            between.put(name, filter);
            return this;
        }

        /** Further options of the limiter (exemptions, plans from the request). */
        Builder limiter(Consumer<RateLimiter.Builder> options) {
            this.limiterOptions = options;
            return this;
        }

        Builder tomcat(Consumer<Tomcat> customizer) {
            tomcat.add(customizer);
            return this;
        }

        Builder servlet(String name, HttpServlet servlet, String... mapping) {
            servlets.put(name, servlet);
            mappings.put(name, mapping);
            return this;
        }

        /** A filter deciding the URL rules the way the Spring Boot starter registers them: in code, answering 429. */
        private static RateLimitFilter.Builder filter(
                RateLimiter limiter, List<UrlRule> urlRules, Set<HeaderStyle> headers) {
            RateLimitFilter.Builder builder = RateLimitFilter.builder(limiter)
                    .headers(headers)
                    .rejectionHandler(new ProblemDetailsRejectionHandler(429));
            urlRules.forEach(r -> builder.urlRule(r.rule(), r.methods(), r.paths()));
            return builder;
        }

        Target start() throws Exception {
            ManualClock clock = new ManualClock();
            RateLimiter.Builder lb =
                    RateLimiter.builder().timeMeter(clock).waiter(clock).clientIpResolver(clientIp);
            JedisBucketStore redisStore = null;
            String prefix = "adv" + PREFIXES.incrementAndGet() + "x"
                    + ProcessHandle.current().pid();
            if (store == StoreKind.REDIS) {
                // Generous timeouts: a slow machine must not turn into fail-open admissions.
                redisStore = JedisBucketStore.builder()
                        .url(redis.uri())
                        .keyPrefix(prefix)
                        .commandTimeout(Duration.ofSeconds(2))
                        .connectTimeout(Duration.ofSeconds(2))
                        .build();
                lb.store(redisStore);
            }
            limiterOptions.accept(lb);
            RateLimiter limiter = lb.build();
            Map<String, AtomicInteger> reached = new ConcurrentHashMap<>();
            Set<HeaderStyle> headers = EnumSet.of(HeaderStyle.X_RATELIMIT, HeaderStyle.IETF_DRAFT_09);
            try {
                TomcatServer.Builder b = TomcatServer.builder();
                before.forEach(b::filterBefore);
                if (!beforeRules.isEmpty()) {
                    b.filterBefore(
                            "rateLimitBeforeAuthentication",
                            filter(limiter, beforeRules, headers)
                                    .beforeAuthentication()
                                    .build());
                }
                between.forEach(b::filterBefore);
                b.filter(filter(limiter, rules, headers).build());
                // The counting servlet takes whatever the other servlets' (more specific) mappings leave.
                b.servlet("counting", new CountingServlet(reached), "/*");
                servlets.forEach((name, s) -> b.servlet(name, s, mappings.get(name)));
                tomcat.forEach(b::server);
                return new Target(b.start(), limiter, redisStore, redis, prefix, clock, reached);
            } catch (Exception | Error e) {
                limiter.close();
                throw e;
            }
        }
    }
}
