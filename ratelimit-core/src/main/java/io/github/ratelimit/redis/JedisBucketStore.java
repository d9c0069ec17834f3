package io.github.ratelimit.redis;



import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.distributed.proxy.optimization.DelayParameters;
import io.github.bucket4j.distributed.proxy.optimization.NopeOptimizationListener;
import io.github.bucket4j.distributed.proxy.optimization.Optimizations;
import io.github.bucket4j.distributed.proxy.optimization.delay.DelayOptimization;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Rule.LocalFirst;
import io.github.ratelimit.support.RateLimitedLog;
import io.github.ratelimit.internal.bucket.BucketKeyState;
import io.github.ratelimit.store.BucketStore.KeyState;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.RateLimitStoreException;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.UnifiedJedis;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Collection;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Rate-limit state in Redis, shared by every instance that uses the same Redis and key prefix: standalone,
 * Sentinel or Cluster, through Jedis. Token-bucket and fixed-window keys are Bucket4j buckets (below); sliding
 * window logs and counters are a sorted set or a hash per key, each decision one script that reads the server's
 * time, trims, counts every window, adds and sets the key's expiry ({@code docs/redis.md}).
 *
 * <p>About one round trip per decision: the store remembers the last state it saw of each bucket, computes the
 * decision from it with Bucket4j, and one script compares and stores (see {@code docs/redis.md}). Concurrent
 * calls for one bucket in this JVM are batched into one round trip (Bucket4j's batching), so a hot key does not
 * cause a compare-and-swap retry storm; retries are bounded in number and time.
 *
 * <p>Bucket time is Redis server time (calibrated from {@code TIME} now and then, advanced by the JVM's
 * monotonic clock in between), so instances with skewed clocks still share one limit. Keys are
 * {@code <prefix>:{<rule>:<key>}}, hash-tagged to one Cluster slot per bucket, and expire once a bucket would be
 * full again, judged from its state after each write (so a reservation's debt is never forgiven).
 *
 * <p>Failures: commands time out after {@link Builder#commandTimeout} (default 50 ms); once failures have kept
 * coming for {@link Builder#breakerMinFailureStreak} (default 250 ms, at least
 * {@link Builder#breakerFailureThreshold} of them in a row) the circuit breaker opens and calls fail at once,
 * without waiting on Redis, until a probe after {@link Builder#breakerOpenDuration} succeeds. Every failure
 * surfaces as a {@link RateLimitStoreException}, on which the limiter applies the rule's failure policy.
 *
 * <p>Thread-safe. {@link #close()} closes the Jedis client if the store created it, and the clock thread.
 */
public final class JedisBucketStore implements BucketStore {

    /** The state of the store's circuit breaker. */
    public enum BreakerState {
        /** Calls go to Redis. */
        CLOSED,
        /** Redis kept failing: calls fail at once without touching it. */
        OPEN,
        /** One probe call is on its way to Redis; the others still fail at once. */
        HALF_OPEN
    }

    /**
     * Counters since the store was built.
     *
     * @param decisions bucket operations sent to Redis
     * @param roundTrips scripts run (one per attempt)
     * @param conflicts attempts whose expected state was stale (each costs one more round trip)
     * @param failures operations that failed in Redis or on the network
     * @param shortCircuited operations refused at once by the open breaker
     * @param contended operations given up because the bucket kept changing under concurrent writers beyond the
     *        retry budget (each rejected its call; none was admitted uncounted)
     * @param breaker the breaker's state now
     * @param latencyNanos the total time operations took (all attempts), for a mean latency
     * @param pipelines pipelines sent by {@link Builder#autoPipelining auto-pipelining}, each one network round
     *        trip for the scripts in it (so {@code roundTrips / pipelines} scripts shared a round trip on average);
     *        0 when scripts are sent one by one
     * @param repairs keys whose state was garbage (of another type, unreadable, out of range, without an expiry)
     *        and was replaced with fresh state instead of obeyed ({@code docs/RELIABILITY.md})
     */
    public record Stats(long decisions, long roundTrips, long conflicts, long failures, long shortCircuited,
                        long contended, BreakerState breaker, long latencyNanos, long pipelines, long repairs) {
    }

    /** A bucket's reference (its key, configuration and last seen state) and the Bucket4j proxy over it. */
    private record Entry(CasProxyManager.Ref ref, Bucket proxy, BucketKeyState state) {
    }

    /** Pipelined batches on the wire at once: one being written or read while the next one fills. */
    static final int PIPELINE_LANES = 2;

    /** The most calls in one pipelined batch. */
    static final int PIPELINE_MAX_BATCH = 64;

    private static final RateLimitedLog CLOCK_LOG = new RateLimitedLog(60_000_000_000L);

    private final UnifiedJedis jedis;
    private final boolean ownsClient;
    private final String prefix;
    private final CasScript script = new CasScript();
    private final ServerClock serverClock;
    private final TimeMeter clock;
    private final CircuitBreaker breaker;
    private final CasProxyManager proxies;
    private final AutoPipeline pipeline;
    private final boolean batching;
    private final Cache<BucketStore.Key, Entry> entries;
    private final Cache<BucketStore.Key, RedisSlidingState> sliding;
    private final RedisSlidingState.Context slidingContext;
    private final ScheduledExecutorService clockThread;
    private final AtomicBoolean closed = new AtomicBoolean();

    private JedisBucketStore(Builder b, UnifiedJedis jedis, boolean ownsClient) {
        this.jedis = jedis;
        this.ownsClient = ownsClient;
        this.prefix = b.keyPrefix;
        this.batching = b.batching;
        LongSupplier nanoTime = System::nanoTime;
        this.serverClock = b.timeMeter == null ? new ServerClock(nanoTime, b.localWallClock) : null;
        this.clock = b.timeMeter == null ? serverClock : b.timeMeter;
        this.breaker = new CircuitBreaker(b.breakerFailureThreshold, b.breakerMinFailureStreak.toNanos(),
                b.breakerOpenDuration.toNanos(), nanoTime);
        // Many threads' scripts share round trips, except on a Cluster (see AutoPipeline) or when switched off.
        boolean cluster = jedis instanceof RedisClusterClient || jedis instanceof redis.clients.jedis.JedisCluster;
        this.pipeline = b.autoPipelining && !cluster ? new AutoPipeline(jedis, PIPELINE_LANES, PIPELINE_MAX_BATCH,
                b.commandTimeout.toNanos()) : null;
        ScriptRunner scripts = pipeline != null ? pipeline : ScriptRunner.direct(jedis);
        this.proxies = new CasProxyManager(jedis, scripts, script, breaker, clock, b.maxAttempts, b.retryBudget.toNanos());
        this.entries = Caffeine.newBuilder().maximumSize(b.maximumCachedBuckets)
                .expireAfterAccess(Duration.ofMinutes(10)).build();
        this.sliding = Caffeine.newBuilder().maximumSize(b.maximumCachedBuckets)
                .expireAfterAccess(Duration.ofMinutes(10)).build();
        // Sliding windows read the server's TIME in their script, unless the store was given a clock. Log members
        // are unique across instances: a random prefix per store, then a sequence number.
        String memberPrefix = Long.toString(java.util.concurrent.ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36)
                + ".";
        this.slidingContext = new RedisSlidingState.Context(proxies, scripts, b.timeMeter, memberPrefix, new AtomicLong());
        if (serverClock != null) {
            calibrateClock();
            this.clockThread = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "ratelimit-redis-clock");
                t.setDaemon(true);
                return t;
            });
            long every = b.clockCalibrationInterval.toMillis();
            clockThread.scheduleWithFixedDelay(this::calibrateClock, every, every, TimeUnit.MILLISECONDS);
        } else {
            this.clockThread = null;
        }
    }

    /**
     * @return a builder
     */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public KeyState state(BucketStore.Key key, BucketStore.Limits limits, LocalFirst localFirst) {
        // Before any other work: during an outage the rule's failure policy decides as fast as it can.
        proxies.refuseIfOpen();
        if (!limits.algorithm().isSliding()) {
            return entry(key, limits.bucketConfiguration(), localFirst).state;
        }
        RedisSlidingState state = sliding.getIfPresent(key);
        if (state == null || (state.limits() != limits && !state.limits().equals(limits))) {
            state = new RedisSlidingState(slidingContext, RedisKeys.slidingKey(prefix, key, limits.algorithm()), limits);
            sliding.put(key, state);
        }
        return state;
    }

    /**
     * Deletes the key's state in Redis, in one command, under every algorithm's key (the bucket's, the sliding
     * log's and counter's), and forgets what this instance remembered of it. Other instances' next decision finds
     * the bucket gone and starts it full, at the cost of one more round trip.
     */
    @Override
    public void reset(BucketStore.Key key) {
        proxies.call(() -> jedis.del(RedisKeys.bucketKey(prefix, key),
                RedisKeys.slidingKey(prefix, key, io.github.ratelimit.Algorithm.SLIDING_WINDOW_LOG),
                RedisKeys.slidingKey(prefix, key, io.github.ratelimit.Algorithm.SLIDING_WINDOW_COUNTER)));
        limitsChanged(key);
    }

    /**
     * Forgets what this instance remembers of the key (its configuration's version and last state), so its next
     * write carries a new version and the configuration this instance has now wins over what another wrote before.
     */
    @Override
    public void limitsChanged(BucketStore.Key key) {
        if (key == null) {
            entries.invalidateAll();
            sliding.invalidateAll();
        } else {
            entries.invalidate(key);
            sliding.invalidate(key);
        }
    }

    /**
     * The Bucket4j bucket behind a token-bucket or fixed-window key: its operations act on the state in Redis.
     *
     * @param key the key
     * @param configuration its configuration; a bucket stored with another is replaced with
     *        {@code TokensInheritanceStrategy.ADDITIVE}
     * @return the bucket
     */
    public Bucket bucket(BucketStore.Key key, BucketConfiguration configuration) {
        return entry(key, configuration, null).proxy;
    }

    private Entry entry(BucketStore.Key key, BucketConfiguration configuration, LocalFirst localFirst) {
        Entry entry = entries.getIfPresent(key);
        if (entry == null || (entry.ref.configuration != configuration
                && !entry.ref.configuration.equals(configuration))) {
            // Two threads may both get here; each entry is valid, and the later version merely wins.
            CasProxyManager.Ref ref = newRef(key, configuration, entry == null ? Long.MIN_VALUE : entry.ref.version);
            Bucket proxy = newProxy(ref, localFirst);
            // Redis computes each write's expiry from the state it writes, so a reservation needs no second look.
            entry = new Entry(ref, proxy, new BucketKeyState(proxy));
            entries.put(key, entry);
        }
        return entry;
    }

    private CasProxyManager.Ref newRef(BucketStore.Key key, BucketConfiguration configuration, long previous) {
        // Versions are the (server) clock's milliseconds, so the newest configuration seen anywhere wins, and an
        // instance still running the old one does not switch the bucket back. A changed configuration of a key
        // this JVM already knew goes at least one past the version it replaces, even within one millisecond. No
        // counter shared by keys: versions never run ahead of the clock however many keys an instance creates.
        long now = clock.currentTimeNanos() / 1_000_000L;
        long version = previous == Long.MIN_VALUE ? now : Math.max(previous + 1, now);
        return new CasProxyManager.Ref(RedisKeys.bucketKey(prefix, key), configuration, version);
    }

    private Bucket newProxy(CasProxyManager.Ref ref, LocalFirst localFirst) {
        var builder = proxies.builder();
        if (localFirst != null) {
            // Bucket4j's delaying optimization (which batches too), on the store's clock rather than the local one.
            builder = builder.withOptimization(new DelayOptimization(
                    new DelayParameters(localFirst.maxUnsyncedTokens(), localFirst.maxUnsyncedTime()),
                    NopeOptimizationListener.INSTANCE, clock));
        } else if (batching) {
            builder = builder.withOptimization(Optimizations.batching());
        }
        return builder.build(ref, () -> ref.configuration);
    }

    /**
     * @return counters since the store was built, and the breaker's state
     */
    public Stats stats() {
        return new Stats(proxies.decisions.sum(), proxies.roundTrips.sum(), proxies.conflicts.sum(),
                proxies.failures.sum(), proxies.shortCircuited.sum(), proxies.contended.sum(), breaker.state(),
                proxies.latencyNanos.sum(), pipeline == null ? 0 : pipeline.batches.sum(), proxies.repairs.sum());
    }

    /**
     * @return the circuit breaker's state now
     */
    public BreakerState breakerState() {
        return breaker.state();
    }

    /**
     * @return the client this store talks through, to share its connections (a {@link RedisLimitProvider}, for
     *         example); the store closes it if it made it, so do not close it
     */
    public UnifiedJedis client() {
        return jedis;
    }

    /**
     * @return the Redis key prefix
     */
    public String keyPrefix() {
        return prefix;
    }

    /**
     * @param key a bucket
     * @return its Redis key, as bytes (UTF-8)
     */
    public byte[] redisKey(BucketStore.Key key) {
        return RedisKeys.bucketKey(prefix, key);
    }

    /**
     * @param key a key of a rule
     * @param algorithm the rule's algorithm
     * @return the Redis key its state lives under, as bytes (UTF-8): the bucket's for a token bucket or fixed
     *         window, the bucket's with {@code :log} or {@code :counter} after it for a sliding window
     */
    public byte[] redisKey(BucketStore.Key key, io.github.ratelimit.Algorithm algorithm) {
        return algorithm.isSliding() ? RedisKeys.slidingKey(prefix, key, algorithm) : RedisKeys.bucketKey(prefix, key);
    }

    private void calibrateClock() {
        try {
            long before = serverClock.ticks();
            long micros = script.serverTimeMicros(jedis, RedisKeys.clockKey(prefix));
            long after = serverClock.ticks();
            serverClock.calibrate(before, micros, after);
        } catch (RuntimeException e) {
            CLOCK_LOG.log(Level.WARNING, "Could not read the Redis server time" + (serverClock.isCalibrated()
                    ? "; keeping the last calibration" : "; using this JVM's clock until Redis answers") + ": " + e, null);
        }
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            if (clockThread != null) {
                clockThread.shutdownNow();
            }
            if (ownsClient) {
                jedis.close();
            }
        }
    }

    @Override
    public String toString() {
        return "JedisBucketStore[prefix=" + prefix + ", " + stats() + "]";
    }

    /**
     * Builds a {@link JedisBucketStore}. Give exactly one of {@link #url}, {@link #sentinel}, {@link #cluster} or
     * {@link #client}. Not thread-safe.
     */
    public static final class Builder {

        String url;
        String sentinelMaster;
        Set<HostAndPort> sentinels;
        Set<HostAndPort> clusterNodes;
        private UnifiedJedis client;
        String user;
        String password;
        boolean ssl;
        private String keyPrefix = "ratelimit";
        Duration commandTimeout = Duration.ofMillis(50);
        Duration connectTimeout = Duration.ofMillis(200);
        int poolSize = 16;
        private int maxAttempts = 32;
        private Duration retryBudget = Duration.ofMillis(100);
        private TimeMeter timeMeter;
        private int breakerFailureThreshold = 5;
        private Duration breakerOpenDuration = Duration.ofSeconds(1);
        private Duration breakerMinFailureStreak = Duration.ofMillis(250);
        private boolean batching = true;
        private boolean autoPipelining = true;
        private long maximumCachedBuckets = 100_000;
        private Duration clockCalibrationInterval = Duration.ofSeconds(10);
        private LongSupplier localWallClock = () -> System.currentTimeMillis() * 1_000_000L;

        private Builder() {
        }

        /**
         * @param url {@code redis://[user:password@]host:port[/db]}, or {@code rediss://} for TLS
         * @return this builder
         */
        public Builder url(String url) {
            this.url = Objects.requireNonNull(url, "url");
            return this;
        }

        /**
         * @param masterName the name the sentinels monitor
         * @param sentinels the sentinels, as {@code host:port}
         * @return this builder
         */
        public Builder sentinel(String masterName, Collection<String> sentinels) {
            this.sentinelMaster = Objects.requireNonNull(masterName, "masterName");
            this.sentinels = JedisClients.hostsAndPorts("sentinel", sentinels);
            return this;
        }

        /**
         * @param nodes some of the cluster's nodes, as {@code host:port}; the rest are discovered
         * @return this builder
         */
        public Builder cluster(Collection<String> nodes) {
            this.clusterNodes = JedisClients.hostsAndPorts("cluster", nodes);
            return this;
        }

        /**
         * @param client a Jedis client the application already has (any topology); the store does not close it,
         *        and the client's own timeouts apply
         * @return this builder
         */
        public Builder client(UnifiedJedis client) {
            this.client = Objects.requireNonNull(client, "client");
            return this;
        }

        /**
         * @param user the ACL user for Sentinel and Cluster connections (a URL carries its own)
         * @param password its password
         * @return this builder
         */
        public Builder credentials(String user, String password) {
            this.user = user;
            this.password = password;
            return this;
        }

        /**
         * @param ssl whether Sentinel and Cluster connections use TLS (a URL says so with {@code rediss://})
         * @return this builder
         */
        public Builder ssl(boolean ssl) {
            this.ssl = ssl;
            return this;
        }

        /**
         * @param keyPrefix the first part of every key (default {@code ratelimit}); instances that share limits
         *        share it
         * @return this builder
         */
        public Builder keyPrefix(String keyPrefix) {
            if (keyPrefix == null || keyPrefix.isBlank() || keyPrefix.indexOf('{') >= 0 || keyPrefix.indexOf('}') >= 0) {
                throw new InvalidRateLimitConfigurationException("redis key prefix '" + keyPrefix + "' is invalid. "
                        + "Use non-empty text without braces, e.g. 'ratelimit'.");
            }
            this.keyPrefix = keyPrefix;
            return this;
        }

        /**
         * @param timeout how long one Redis command may take before it fails (default 50 ms)
         * @return this builder
         */
        public Builder commandTimeout(Duration timeout) {
            this.commandTimeout = positive("commandTimeout", timeout);
            return this;
        }

        /**
         * @param timeout how long opening a connection, or waiting for a pooled one, may take (default 200 ms)
         * @return this builder
         */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = positive("connectTimeout", timeout);
            return this;
        }

        /**
         * @param poolSize connections per Redis node (default 16)
         * @return this builder
         */
        public Builder poolSize(int poolSize) {
            this.poolSize = atLeast("poolSize", poolSize, 1);
            return this;
        }

        /**
         * Bounds the retries of one decision on a contended bucket. A conflict costs one round trip and brings
         * the fresh state, so each instance that writes the bucket in between costs at most one retry; from the
         * second conflict on, a random backoff that doubles per attempt spreads colliding writers apart. A decision
         * that runs out of attempts or time is rejected (basis {@code CONTENTION}), never admitted uncounted.
         *
         * @param maxAttempts the most compare-and-swap attempts for one decision (default 32)
         * @param budget the longest the retries of one decision may spend besides their round trips: backoffs and
         *        computing (default 100 ms); round trips count only against {@code maxAttempts}, so a slow store
         *        does not turn ordinary conflicts into rejections
         * @return this builder
         */
        public Builder retries(int maxAttempts, Duration budget) {
            this.maxAttempts = atLeast("maxAttempts", maxAttempts, 1);
            this.retryBudget = positive("retry budget", budget);
            return this;
        }

        /**
         * Replaces Redis server time as the buckets' clock: for tests that control time, or for deployments
         * whose clocks are known to agree. Every instance sharing buckets must use the same time base.
         *
         * @param timeMeter a wall-clock based time meter
         * @return this builder
         */
        public Builder timeMeter(TimeMeter timeMeter) {
            if (!Objects.requireNonNull(timeMeter, "timeMeter").isWallClockBased()) {
                throw new InvalidRateLimitConfigurationException("redis store: the time meter must be wall-clock "
                        + "based (epoch time), since instances share buckets. Use TimeMeter.SYSTEM_MILLISECONDS.");
            }
            this.timeMeter = timeMeter;
            return this;
        }

        /**
         * @param failures failures in a row that open the breaker (default 5)
         * @return this builder
         */
        public Builder breakerFailureThreshold(int failures) {
            this.breakerFailureThreshold = atLeast("breakerFailureThreshold", failures, 1);
            return this;
        }

        /**
         * @param duration how long failures must keep coming (at least the threshold's number of them) before the
         *        breaker opens (default 250 ms): a momentary stall that fails every call in flight at once does not
         *        open it, a dead Redis does within this time
         * @return this builder
         */
        public Builder breakerMinFailureStreak(Duration duration) {
            this.breakerMinFailureStreak = positive("breakerMinFailureStreak", duration);
            return this;
        }

        /**
         * @param duration how long the breaker stays open before a probe (default 1 s)
         * @return this builder
         */
        public Builder breakerOpenDuration(Duration duration) {
            this.breakerOpenDuration = positive("breakerOpenDuration", duration);
            return this;
        }

        /**
         * @param batching whether concurrent calls for one bucket in this JVM share a round trip (default true)
         * @return this builder
         */
        public Builder batching(boolean batching) {
            this.batching = batching;
            return this;
        }

        /**
         * Whether decisions of different keys made by concurrent threads share round trips: calls made while
         * others are on the wire are sent together as one pipeline by the next thread to find a connection free,
         * at most two batches at once. A call alone is sent at once. Not used on a
         * Cluster, where each call goes to its key's node on its own.
         *
         * @param autoPipelining whether to pipeline (default true)
         * @return this builder
         */
        public Builder autoPipelining(boolean autoPipelining) {
            this.autoPipelining = autoPipelining;
            return this;
        }

        /**
         * @param maximum buckets whose last state this JVM remembers (default 100,000); a forgotten one costs
         *        one extra round trip when next used
         * @return this builder
         */
        public Builder maximumCachedBuckets(long maximum) {
            this.maximumCachedBuckets = atLeast("maximumCachedBuckets", (int) Math.min(maximum, Integer.MAX_VALUE), 1);
            return this;
        }

        /**
         * @param interval how often the Redis server time is read again (default 10 s)
         * @return this builder
         */
        public Builder clockCalibrationInterval(Duration interval) {
            this.clockCalibrationInterval = positive("clockCalibrationInterval", interval);
            return this;
        }

        /**
         * For tests: the wall clock used only until the first calibration succeeds.
         *
         * @param epochNanos this JVM's wall clock
         * @return this builder
         */
        Builder localWallClock(LongSupplier epochNanos) {
            this.localWallClock = epochNanos;
            return this;
        }

        /**
         * Connects (lazily: Redis may be down at start-up; decisions then follow the rules' failure policies).
         *
         * @return the store
         * @throws InvalidRateLimitConfigurationException when no or several connection targets are given, or one
         *         is malformed
         */
        public JedisBucketStore build() {
            int targets = (url != null ? 1 : 0) + (sentinelMaster != null ? 1 : 0) + (clusterNodes != null ? 1 : 0)
                    + (client != null ? 1 : 0);
            if (targets != 1) {
                throw new InvalidRateLimitConfigurationException("redis store: " + (targets == 0 ? "no" : targets)
                        + " connection targets given. Give exactly one: a url (redis://host:6379), sentinel master "
                        + "and nodes, cluster nodes, or an existing Jedis client.");
            }
            if (client != null) {
                return new JedisBucketStore(this, client, false);
            }
            return new JedisBucketStore(this, JedisClients.connect(this), true);
        }

        private static Duration positive(String name, Duration value) {
            if (value == null || value.isZero() || value.isNegative()) {
                throw new InvalidRateLimitConfigurationException("redis store: " + name + " must be positive, but was "
                        + value + ". Use e.g. 50ms.");
            }
            return value;
        }

        private static int atLeast(String name, int value, int min) {
            if (value < min) {
                throw new InvalidRateLimitConfigurationException("redis store: " + name + " must be at least " + min
                        + ", but was " + value + ".");
            }
            return value;
        }
    }
}
