package io.github.ratelimit.redis;

import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.TimeMeter;
import io.github.ratelimit.Algorithm;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Rule.LocalFirst;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.BucketStore.KeyState;
import io.github.ratelimit.store.RateLimitStoreException;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocketFactory;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.UnifiedJedis;

/**
 * Rate-limit state in Redis, shared by every instance that uses the same Redis and key prefix: standalone,
 * Sentinel or Cluster, through Jedis. Token-bucket and fixed-window keys are Bucket4j buckets (below); sliding
 * window logs and counters are a sorted set or a hash per key, each decision one script that reads the server's
 * time, trims, counts every window, adds and sets the key's expiry ({@code docs/redis.md}).
 *
 * <p>About one round trip per decision: the store remembers the last state it saw of each bucket, computes the
 * decision from it with Bucket4j, and one script compares and stores (see {@code docs/redis.md}). Concurrent
 * calls for one bucket in this JVM are combined into one compare-and-set, one of this JVM's on its way per bucket at a
 * time, so a hot key causes no conflict within an instance and no retry storm; retries (after another instance's
 * write) are bounded in number and time.
 *
 * <p>Bucket time is Redis server time (calibrated from {@code TIME} now and then, advanced by the JVM's
 * monotonic clock in between), so instances with skewed clocks still share one limit. Keys are
 * {@code <prefix>:<rule>:{<key>}}, hash-tagged by the client key, so on a Cluster a request's rules that count by the
 * same key live on one slot and are sent together, one round trip; they expire once a bucket would be full again,
 * judged from its state after each write (so a reservation's debt is never forgiven). Keys an earlier version wrote
 * under the earlier layout, {@code <prefix>:{<rule>:<key>}}, are moved to this one in the background at start-up
 * ({@code docs/redis.md}).
 *
 * <p>Failures: commands time out after {@link Builder#commandTimeout} (default 50 ms); a decision answered later
 * than that while the breaker is closed (a stall, not an outage) is asked once more; once failures have kept
 * coming for {@link Builder#breakerMinFailureStreak} (default 250 ms, at least
 * {@link Builder#breakerFailureThreshold} of them in a row) the circuit breaker opens and calls fail at once,
 * without waiting on Redis, until a probe after {@link Builder#breakerOpenDuration} succeeds. Every failure
 * surfaces as a {@link RateLimitStoreException}, on which the limiter applies the rule's failure policy. Waiting for
 * this instance's own pipelines or pooled connections is not a failure. What a call gives back when it ends, when
 * Redis fails just then, is given back later, off the request path ({@link Stats#lateRefunds()}).
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
     * @param pipelines pipelines sent by {@link Builder#autoPipelining auto-pipelining}, or on a Cluster the
     *        round trips of each request's scripts, one per hash slot; each one network round trip for the scripts in
     *        it (so {@code roundTrips / pipelines} scripts shared a round trip on average); 0 when scripts are sent
     *        one by one (auto-pipelining off, on a standalone Redis or through Sentinel)
     * @param repairs keys whose state was garbage (of another type, unreadable, out of range, without an expiry)
     *        and was replaced with fresh state instead of obeyed ({@code docs/RELIABILITY.md})
     * @param lateRefunds refunds (tokens, or a concurrency rule's slot) that failed when a call ended, because Redis
     *        did, and were given back later, off the request path
     * @param lostRefunds refunds given up: Redis kept failing for 15 s after the call ended (a slot not given back
     *        runs out by then anyway), or 10,000 already waited
     * @param unconfirmedRefunds refunds of a sliding counter or a calendar quota whose call reached Redis but was not
     *        answered in time: Redis that is slow rather than gone runs them late, and they are not tried again, since
     *        Redis might have run them (their count would be given back twice)
     * @param lateAnswers operations Redis answered later than the command timeout while the breaker was closed (a
     *        stall), asked once more before their rule's failure policy would apply
     */
    public record Stats(
            long decisions,
            long roundTrips,
            long conflicts,
            long failures,
            long shortCircuited,
            long contended,
            BreakerState breaker,
            long latencyNanos,
            long pipelines,
            long repairs,
            long lateRefunds,
            long lostRefunds,
            long unconfirmedRefunds,
            long lateAnswers) {
        // Wide on purpose: users, the metrics and the admin views read these counters by name, so they stay one public
        // record;
        // only the store's proxy manager builds it, in one place.
    }

    private final UnifiedJedis jedis;
    private final boolean ownsClient;
    private final String prefix;
    private final CasScript script = new CasScript();
    private final @Nullable ServerClock serverClock;
    private final TimeMeter clock;
    private final CircuitBreaker breaker;
    private final CasProxyManager proxies;
    private final @Nullable AutoPipeline pipeline;
    private final @Nullable SlotBatches slotBatches;
    private final @Nullable KeyMigration migration;
    private final KeyStates keys;
    private final RedisBlocks blocks;
    private final @Nullable ScheduledExecutorService clockThread;
    /** The calls off the request path: their own connections, with the longer timeout; made on first use. */
    private final LateClient late;

    private final AtomicBoolean closed = new AtomicBoolean();

    @SuppressWarnings("NullAway") // the clock is the time meter given or, without one, the server clock made here
    private JedisBucketStore(JedisStoreOptions b, UnifiedJedis jedis, boolean ownsClient) {
        this.jedis = jedis;
        this.ownsClient = ownsClient;
        this.prefix = b.keyPrefix;
        LongSupplier nanoTime = System::nanoTime;
        this.serverClock = b.timeMeter == null ? new ServerClock(nanoTime, b.localWallClock) : null;
        this.clock = b.timeMeter == null ? serverClock : b.timeMeter;
        this.breaker = new CircuitBreaker(
                b.breakerFailureThreshold,
                b.breakerMinFailureStreak.toNanos(),
                b.breakerOpenDuration.toNanos(),
                nanoTime);
        // Many threads' scripts share round trips, except on a Cluster (see AutoPipeline) or when switched off.
        boolean cluster = jedis instanceof RedisClusterClient || jedis instanceof JedisCluster;
        this.pipeline = b.autoPipelining && !cluster
                ? new AutoPipeline(
                        jedis,
                        AutoPipeline.LANES,
                        AutoPipeline.MAX_BATCH,
                        b.commandTimeout.toNanos(),
                        breaker::refusesNow)
                : null;
        // On a Cluster, the scripts of one request go together per slot: the key layout puts a client key's rules on
        // one slot (see SlotBatches).
        this.slotBatches = cluster
                ? new SlotBatches(
                        jedis,
                        jedis instanceof RedisClusterClient c
                                ? c::getConnectionFromSlot
                                : ((JedisCluster) jedis)::getConnectionFromSlot,
                        b.commandTimeout.toNanos())
                : null;
        ScriptRunner scripts = pipeline != null
                ? pipeline
                : slotBatches != null ? slotBatches : new DirectRunner(jedis, b.commandTimeout.toNanos());
        // Renewals and late refunds wait as long as a slow Redis takes (the background timeout), on connections of
        // their own, so the request path's short timeout never loses them. An application's own client keeps its
        // timeouts.
        this.late = ownsClient
                ? new LateClient(
                        () -> JedisClients.connect(b, b.backgroundTimeout, LateClient.POOL_SIZE),
                        b.backgroundTimeout,
                        true)
                : new LateClient(() -> jedis, b.commandTimeout, false);
        this.proxies = new CasProxyManager(
                jedis,
                scripts,
                late::runner,
                script,
                breaker,
                clock,
                b.maxAttempts,
                b.retryBudget.toNanos(),
                b.batching,
                cluster);
        this.keys = new KeyStates(proxies, clock, b.timeMeter, prefix, b.batching, b.maximumCachedBuckets);
        this.blocks = new RedisBlocks(jedis, proxies, prefix, b.maximumCachedBuckets, nanoTime);
        this.clockThread = serverClock == null
                ? null
                : serverClock.startCalibrating(
                        () -> script.serverTimeMicros(jedis, RedisKeys.clockKey(prefix)), b.clockCalibrationInterval);
        // The sliding windows' and calendar quotas' scripts, loaded ahead at start-up and again with each calibration
        // (a Redis that restarted or failed over has lost them): their first run is then never a NOSCRIPT answered
        // late, which would leave a refund unconfirmed. Off the request path, so that no call waits for a load. With a
        // given TimeMeter there is no calibration: they are loaded at start-up only, and else when first run.
        // Keys an earlier version wrote under the earlier layout move to this one, off the request path.
        this.migration = !b.migrateKeys
                ? null
                : new KeyMigration(
                        jedis,
                        prefix,
                        !cluster
                                ? null
                                : jedis instanceof RedisClusterClient c
                                        ? c::getClusterNodes
                                        : ((JedisCluster) jedis)::getClusterNodes,
                        b.keyMigrationAgain);
        byte[] routing = RedisKeys.clockKey(prefix);
        List<LuaScript> ahead = List.of(
                RedisSlidingState.COUNTER_RUN,
                RedisSlidingState.LOG,
                RedisSlidingState.LOG_COMBINED,
                RedisCalendarState.SCRIPT);
        proxies.preload(routing, ahead);
        if (clockThread != null) {
            long every = b.clockCalibrationInterval.toMillis();
            clockThread.scheduleWithFixedDelay(
                    () -> {
                        try {
                            proxies.preload(routing, ahead);
                        } catch (RuntimeException e) {
                            // Tried again next time; a script Redis lacks is loaded when it is run anyway.
                        }
                    },
                    every,
                    every,
                    TimeUnit.MILLISECONDS);
        }
    }

    /** @return the migration of keys of the earlier layout this store started (for tests) */
    @SuppressWarnings("NullAway") // the tests that ask build stores that migrate
    KeyMigration keyMigration() {
        return migration;
    }

    /** @return a builder */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The key's state, as this instance remembers it: no call to Redis. Its operations go to Redis, and fail at once
     * while the circuit breaker is open; its {@code refund} never throws for Redis's failure: what cannot be given back
     * at once is given back later, off the request path ({@link Stats#lateRefunds()}), and a concurrency rule's lease
     * is never renewed again once given back, whatever Redis does.
     */
    @Override
    public KeyState state(BucketStore.Key key, BucketStore.Limits limits, LocalFirst localFirst) {
        return keys.state(key, limits, localFirst);
    }

    /**
     * Deletes the key's state in Redis in one command, under every algorithm's key (a concurrency rule's leases and the
     * key's block too), and forgets what this instance remembered of it: every instance's next decision finds the key
     * fresh (another instance that knew of the block asks Redis again within a second, see {@link #blockedNanos}).
     */
    @Override
    public void reset(BucketStore.Key key) {
        proxies.call(() -> jedis.del(RedisKeys.allKeys(prefix, key)));
        blocks.forget(key);
        limitsChanged(key);
    }

    /** Keeps blocks in Redis, shared by every instance: {@link #blockedNanos}, {@link #block}. */
    @Override
    public boolean keepsBlocks() {
        return true;
    }

    /**
     * Says how long the key stays blocked. One command to Redis (through the breaker, within the command timeout),
     * unless this instance learned of a running block less than a second ago: it then answers itself until the block
     * ends, asking Redis again once a second, so a blocked key's flood does not reach Redis and a reset through another
     * instance is seen here within a second. Garbage under the block key (another type, no expiry, an expiry later than
     * {@link io.github.ratelimit.Rule#MAX_BLOCK_FOR}) is deleted and counted as a repair, never obeyed.
     *
     * @param key the key
     * @return nanoseconds left of the key's block, 0 when it has none
     * @throws RateLimitStoreException when Redis failed or the breaker is open
     */
    @Override
    public long blockedNanos(BucketStore.Key key) {
        return blocks.blockedNanos(key);
    }

    /**
     * Blocks the key in Redis, for every instance, unless it is blocked already: one script that writes the block key
     * with its expiry only if none is running (a block is never made longer by the calls it refuses).
     *
     * @param key the key
     * @param nanos how long to block it (rounded up to whole milliseconds, at most
     *        {@link io.github.ratelimit.Rule#MAX_BLOCK_FOR})
     * @return nanoseconds left of the key's block afterwards
     * @throws RateLimitStoreException when Redis failed or the breaker is open
     */
    @Override
    public long block(BucketStore.Key key, long nanos) {
        return blocks.block(key, nanos);
    }

    /**
     * Forgets what this instance remembers of the key (its configuration's version and last state), so its next
     * write carries a new version and the configuration this instance has now wins over what another wrote before.
     */
    @Override
    public void limitsChanged(BucketStore.Key key) {
        keys.forget(key);
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
        return keys.entry(key, configuration, null).proxy();
    }

    /** @return counters since the store was built, and the breaker's state */
    public Stats stats() {
        long pipelines =
                pipeline != null ? pipeline.batches.sum() : slotBatches != null ? slotBatches.roundTrips.sum() : 0;
        return proxies.stats(breaker.state(), pipelines);
    }

    /**
     * @param observer where the latency of each operation goes (nanoseconds, retries included), on the thread that
     *        made it, for a histogram such as the metric {@code ratelimit.store.latency}; one at a time, thread-safe
     *        and cheap; {@code null} for nowhere
     */
    public void latencyObserver(LongConsumer observer) {
        proxies.latencyObserver = observer;
    }

    /** @return refunds waiting to be tried again, off the request path (for tests) */
    int lateRefundsWaiting() {
        return proxies.lateRefunds.waiting();
    }

    /** @return the leases of calls in flight this instance renews (for tests) */
    int leasesRenewed() {
        return keys.leasesRenewed();
    }

    /** @return the circuit breaker's state now */
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

    /** @return the Redis key prefix */
    public String keyPrefix() {
        return prefix;
    }

    /**
     * @param key a key of a rule
     * @param algorithm the rule's algorithm
     * @return the Redis key its state lives under, as bytes (UTF-8): the bucket's for a token bucket or fixed
     *         window, with {@code :log}, {@code :counter} or ({@code :calendar}, a calendar quota's) after it
     */
    public byte[] redisKey(BucketStore.Key key, Algorithm algorithm) {
        return algorithm.isSliding() ? RedisKeys.slidingKey(prefix, key, algorithm) : RedisKeys.bucketKey(prefix, key);
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            if (migration != null) {
                migration.close();
            }
            keys.close();
            proxies.lateRefunds.close();
            late.close();
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

        private final JedisStoreOptions options = new JedisStoreOptions();

        private Builder() {}

        /**
         * @param url {@code redis://[user:password@]host:port[/db]}, or {@code rediss://} for TLS
         * @return this builder
         */
        public Builder url(String url) {
            options.url = Objects.requireNonNull(url, "url");
            return this;
        }

        /**
         * @param masterName the name the sentinels monitor
         * @param sentinels the sentinels, as {@code host:port}
         * @return this builder
         */
        public Builder sentinel(String masterName, Collection<String> sentinels) {
            options.sentinelMaster = Objects.requireNonNull(masterName, "masterName");
            options.sentinels = JedisClients.hostsAndPorts("sentinel", sentinels);
            return this;
        }

        /**
         * @param nodes some of the cluster's nodes, as {@code host:port}; the rest are discovered
         * @return this builder
         */
        public Builder cluster(Collection<String> nodes) {
            options.clusterNodes = JedisClients.hostsAndPorts("cluster", nodes);
            return this;
        }

        /**
         * @param client a Jedis client the application already has (any topology); the store does not close it,
         *        and the client's own timeouts apply
         * @return this builder
         */
        public Builder client(UnifiedJedis client) {
            options.client = Objects.requireNonNull(client, "client");
            return this;
        }

        /**
         * @param user the ACL user for Sentinel and Cluster connections (a URL carries its own), or {@code null} for
         *        the default user
         * @param password its password, or {@code null}
         * @return this builder
         */
        public Builder credentials(@Nullable String user, @Nullable String password) {
            options.user = user;
            options.password = password;
            return this;
        }

        /**
         * @param ssl whether Sentinel and Cluster connections use TLS (a URL says so with {@code rediss://})
         * @return this builder
         */
        public Builder ssl(boolean ssl) {
            options.ssl = ssl;
            return this;
        }

        /**
         * TLS on every connection the store makes (a URL's, whatever its scheme, and Sentinel's and Cluster's), with
         * sockets from this factory: for a server whose certificate the JVM's default trust store does not hold, or
         * that asks for a client certificate. Without it, TLS ({@code rediss://}, {@link #ssl(boolean)}) uses the
         * JVM's default factory.
         *
         * @param socketFactory makes the TLS sockets, e.g. {@code sslContext.getSocketFactory()}
         * @param parameters the protocols and cipher suites to enable, or {@code null} for the factory's own
         * @return this builder
         */
        public Builder ssl(SSLSocketFactory socketFactory, @Nullable SSLParameters parameters) {
            options.sslSocketFactory = Objects.requireNonNull(socketFactory, "socketFactory");
            options.sslParameters = parameters;
            return this;
        }

        /**
         * @param keyPrefix the first part of every key (default {@code ratelimit}); instances that share limits
         *        share it
         * @return this builder
         */
        public Builder keyPrefix(String keyPrefix) {
            options.keyPrefix = JedisStoreOptions.keyPrefix(keyPrefix);
            return this;
        }

        /**
         * @param timeout how long one Redis command may take before it fails (default 50 ms)
         * @return this builder
         */
        public Builder commandTimeout(Duration timeout) {
            options.commandTimeout = JedisStoreOptions.positive("commandTimeout", timeout);
            return this;
        }

        /**
         * @param timeout how long opening a connection, or waiting for a pooled one, may take (default 200 ms)
         * @return this builder
         */
        public Builder connectTimeout(Duration timeout) {
            options.connectTimeout = JedisStoreOptions.positive("connectTimeout", timeout);
            return this;
        }

        /**
         * How long Redis may take to answer the store's calls off the request path, on connections of their own (two
         * per node, opened on first use): renewing the leases of calls in flight, and giving back tokens and slots that
         * could not be given back when a call ended because Redis failed then. Longer than the command timeout, so a
         * Redis that is slow but answers loses none of them. With an application's own {@link #client}, its timeouts
         * apply instead.
         *
         * @param timeout the timeout (default 2 s)
         * @return this builder
         */
        public Builder backgroundTimeout(Duration timeout) {
            options.backgroundTimeout = JedisStoreOptions.positive("backgroundTimeout", timeout);
            return this;
        }

        /**
         * @param poolSize connections per Redis node (default 16)
         * @return this builder
         */
        public Builder poolSize(int poolSize) {
            options.poolSize = JedisStoreOptions.atLeast("poolSize", poolSize, 1);
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
            options.maxAttempts = JedisStoreOptions.atLeast("maxAttempts", maxAttempts, 1);
            options.retryBudget = JedisStoreOptions.positive("retry budget", budget);
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
            options.timeMeter = JedisStoreOptions.wallClock(timeMeter);
            return this;
        }

        /**
         * @param failures failures in a row that open the breaker (default 5)
         * @return this builder
         */
        public Builder breakerFailureThreshold(int failures) {
            options.breakerFailureThreshold = JedisStoreOptions.atLeast("breakerFailureThreshold", failures, 1);
            return this;
        }

        /**
         * @param duration how long failures must keep coming (at least the threshold's number of them) before the
         *        breaker opens (default 250 ms): a momentary stall that fails every call in flight at once does not
         *        open it, a dead Redis does within this time
         * @return this builder
         */
        public Builder breakerMinFailureStreak(Duration duration) {
            options.breakerMinFailureStreak = JedisStoreOptions.positive("breakerMinFailureStreak", duration);
            return this;
        }

        /**
         * @param duration how long the breaker stays open before a probe (default 1 s)
         * @return this builder
         */
        public Builder breakerOpenDuration(Duration duration) {
            options.breakerOpenDuration = JedisStoreOptions.positive("breakerOpenDuration", duration);
            return this;
        }

        /**
         * @param batching whether concurrent calls for one bucket in this JVM are combined (default true): one
         *        compare-and-set of this JVM on its way per bucket at a time, the calls that come meanwhile computed in
         *        order from the state it wrote and sent together as the next one, so they never conflict with each
         *        other; {@code false} sends each at once, computed from the state last seen (calls then conflict, and
         *        retry, as instances do)
         * @return this builder
         */
        public Builder batching(boolean batching) {
            options.batching = batching;
            return this;
        }

        /**
         * Whether decisions of different keys made by concurrent threads share round trips: calls made while
         * others are on the wire are sent together as one pipeline by the next thread to find a connection free,
         * at most two batches at once. A call alone is sent at once. Not used on a Cluster, where different threads'
         * calls go to their nodes on their own, and one request's calls go to each slot's node together whatever this
         * says ({@code docs/redis.md}).
         *
         * @param autoPipelining whether to pipeline (default true)
         * @return this builder
         */
        public Builder autoPipelining(boolean autoPipelining) {
            options.autoPipelining = autoPipelining;
            return this;
        }

        /**
         * Whether the store, as it starts, moves the keys an earlier version wrote under the earlier key layout,
         * {@code <prefix>:{<rule>:<key>}}, to the current one, {@code <prefix>:<rule>:{<key>}}, in the background, so
         * their counts, debts, calendar quotas and blocks carry over an upgrade ({@code docs/redis.md}, "Keys and
         * expiry"). It scans the keys under the prefix until a pass finds none, then marks {@code <prefix>:{layout}};
         * turn it off for a Redis that never held the earlier layout, or whose keyspace you would not have scanned.
         *
         * @param migrateKeys whether to move them (default true)
         * @return this builder
         */
        public Builder migrateKeys(boolean migrateKeys) {
            options.migrateKeys = migrateKeys;
            return this;
        }

        /**
         * @param again how long after a pass of the key migration that moved keys, or failed, the next one starts
         *        (tests; a minute otherwise)
         * @return this builder
         */
        Builder keyMigrationAgain(Duration again) {
            options.keyMigrationAgain = again;
            return this;
        }

        /**
         * @param maximum buckets whose last state this JVM remembers (default 100,000); a forgotten one costs
         *        one extra round trip when next used
         * @return this builder
         */
        public Builder maximumCachedBuckets(long maximum) {
            options.maximumCachedBuckets =
                    JedisStoreOptions.atLeast("maximumCachedBuckets", (int) Math.min(maximum, Integer.MAX_VALUE), 1);
            return this;
        }

        /**
         * @param interval how often the Redis server time is read again (default 10 s)
         * @return this builder
         */
        public Builder clockCalibrationInterval(Duration interval) {
            options.clockCalibrationInterval = JedisStoreOptions.positive("clockCalibrationInterval", interval);
            return this;
        }

        /**
         * For tests: the wall clock used only until the first calibration succeeds.
         *
         * @param epochNanos this JVM's wall clock
         * @return this builder
         */
        Builder localWallClock(LongSupplier epochNanos) {
            options.localWallClock = epochNanos;
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
            UnifiedJedis client = options.client();
            return client != null
                    ? new JedisBucketStore(options, client, false)
                    : new JedisBucketStore(options, JedisClients.connect(options), true);
        }
    }
}
