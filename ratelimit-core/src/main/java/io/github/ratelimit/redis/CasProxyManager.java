package io.github.ratelimit.redis;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.TokensInheritanceStrategy;
import io.github.bucket4j.distributed.proxy.AbstractProxyManager;
import io.github.bucket4j.distributed.proxy.ClientSideConfig;
import io.github.bucket4j.distributed.remote.CommandResult;
import io.github.bucket4j.distributed.remote.MutableBucketEntry;
import io.github.bucket4j.distributed.remote.RemoteCommand;
import io.github.bucket4j.distributed.remote.Request;
import io.github.bucket4j.distributed.remote.commands.CreateInitialStateWithVersionOrReplaceConfigurationAndExecuteCommand;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.RateLimitStoreException;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisException;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongConsumer;

/**
 * A Bucket4j proxy manager that decides with about one Redis round trip.
 *
 * <p>Stock compare-and-swap proxy managers read the state (GET), compute, then write it with a script that
 * compares (EVAL of the whole script text): two round trips per decision, three on a key's first use. This one
 * keeps the last state it saw per bucket and computes from it at once; the script compares that with the stored
 * state and writes only on a match, and on a mismatch returns the stored state, from which the next attempt
 * computes, so a conflict costs one more round trip rather than two. The command is always wrapped in Bucket4j's
 * create-or-replace command, so a missing bucket is created, and a configuration with a newer version replaces
 * the stored one ({@link TokensInheritanceStrategy#ADDITIVE}), in the same round trip.
 *
 * <p>Attempts are bounded in number and time, with a random backoff from the second conflict on. A conflict means
 * Redis answered, so only errors and timeouts feed the circuit breaker, and an open breaker fails calls at once;
 * a decision that runs out of attempts on a contended key throws {@link BucketStore.ContentionException}, which the
 * limiter turns into a rejection, never into its failure policy.
 */
final class CasProxyManager extends AbstractProxyManager<CasProxyManager.Ref> {

    /** One bucket: its Redis key, the configuration and version this JVM wants, and the last state it saw. */
    static final class Ref {
        final byte[] key;
        final BucketConfiguration configuration;
        final long version;
        volatile byte[] lastSeen;
        /** The last state this JVM wrote itself: the only one read without checking it ({@link StoredBucketCheck}). */
        volatile byte[] lastWritten;
        /** When the key written last by this JVM expires (store clock), if it was this JVM's write; else MAX. */
        volatile long lastSeenExpiresAt = Long.MAX_VALUE;
        /** Commands of this JVM on the bucket started and not yet settled. */
        final java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();

        Ref(byte[] key, BucketConfiguration configuration, long version) {
            this.key = key;
            this.configuration = configuration;
            this.version = version;
        }
    }

    /**
     * How long a key outlives the moment its bucket is full again: covers the clock calibration's error between
     * instances, so no instance finds a key gone that it would still count as owing tokens.
     */
    static final long KEEP_AFTER_FULL_MILLIS = 1_000;

    /** The longest time to live written: a bucket of the longest allowed period, with a day to spare. */
    static final long MAX_TTL_MILLIS = java.time.Duration.ofDays(io.github.ratelimit.Limit.MAX_PERIOD_DAYS + 1).toMillis();

    private static final io.github.ratelimit.support.RateLimitedLog CORRUPT_LOG =
            new io.github.ratelimit.support.RateLimitedLog(10_000_000_000L);

    private final UnifiedJedis jedis;
    private final ScriptRunner scripts;
    private final CasScript script;
    private final CircuitBreaker breaker;
    private final TimeMeter clock;
    private final int maxAttempts;
    private final long budgetNanos;
    final LongAdder decisions = new LongAdder();
    final LongAdder roundTrips = new LongAdder();
    final LongAdder conflicts = new LongAdder();
    final LongAdder failures = new LongAdder();
    final LongAdder shortCircuited = new LongAdder();
    final LongAdder contended = new LongAdder();
    final LongAdder latencyNanos = new LongAdder();
    /** Where each operation's latency goes besides the total ({@link JedisBucketStore#latencyObserver}), or null. */
    volatile LongConsumer latencyObserver;
    final LongAdder repairs = new LongAdder();

    CasProxyManager(UnifiedJedis jedis, ScriptRunner scripts, CasScript script, CircuitBreaker breaker, TimeMeter clock, int maxAttempts,
                    long budgetNanos) {
        super(ClientSideConfig.getDefault().withClientClock(clock));
        this.jedis = jedis;
        this.scripts = scripts;
        this.script = script;
        this.breaker = breaker;
        this.clock = clock;
        this.maxAttempts = maxAttempts;
        this.budgetNanos = budgetNanos;
    }

    /** Thrown at once while the breaker is open: made once, without a stack trace. */
    private static final RateLimitStoreException BREAKER_OPEN = new RateLimitStoreException(
            "Redis circuit breaker is open; not waiting on Redis", null, false) {
        private static final long serialVersionUID = 1L;
    };

    /**
     * Fails at once, before any other work, while the breaker is open (and it is not yet time for a probe).
     *
     * @throws RateLimitStoreException when it is open
     */
    void refuseIfOpen() {
        if (breaker.refusesNow()) {
            shortCircuited.increment();
            throw BREAKER_OPEN;
        }
    }

    /** @return the breaker's epoch for one operation on Redis, counted as a decision */
    private long acquire() {
        long epoch = breaker.tryAcquire();
        if (epoch == CircuitBreaker.REFUSED) {
            shortCircuited.increment();
            throw BREAKER_OPEN;
        }
        decisions.increment();
        return epoch;
    }

    /** @return the exception for a failed command, counted, and reported to the breaker */
    private RateLimitStoreException failed(JedisException e, long epoch) {
        failures.increment();
        breaker.onFailure(epoch);
        return new RateLimitStoreException("Redis command failed: " + e.getMessage(), e);
    }

    @Override
    protected <T> CommandResult<T> execute(Ref ref, Request<T> request) {
        return send(ref, request).await();
    }

    /**
     * Starts a command on a bucket: computes it from the state this JVM last saw and sends the compare-and-set
     * ({@link ScriptRunner#send}), so that the commands a thread starts before it awaits one share a round trip.
     * Every command started must be {@linkplain Command#await awaited}, on the thread that started it.
     *
     * @param ref the bucket
     * @param request the command
     * @return the command on its way
     * @throws RateLimitStoreException when the breaker is open
     */
    <T> Command<T> send(Ref ref, Request<T> request) {
        long epoch = acquire();
        RemoteCommand<T> command = new CreateInitialStateWithVersionOrReplaceConfigurationAndExecuteCommand<>(
                ref.configuration, request.getCommand(), ref.version, TokensInheritanceStrategy.ADDITIVE);
        byte[] expected = ref.lastSeen;
        if (expected != null && clock.currentTimeNanos() >= ref.lastSeenExpiresAt) {
            // The key this JVM wrote has expired (its bucket was full again): expect it absent, not stale.
            expected = null;
        }
        long started = System.nanoTime();
        ref.inFlight.incrementAndGet();
        try {
            Attempt<T> first = attempt(ref, request, command, expected, expected != null && expected != ref.lastWritten,
                    true);
            return new Command<>(this, ref, request, command, first, started, epoch);
        } catch (RuntimeException e) {
            ref.inFlight.decrementAndGet();
            recordLatency(started);
            throw e;
        }
    }

    /**
     * @param command a command
     * @return a request to {@link #send} it, as the proxies make them (this manager's clock and format version)
     */
    <T> Request<T> request(RemoteCommand<T> command) {
        return new Request<>(command, getClientSideConfig().getBackwardCompatibilityVersion(),
                clock.currentTimeNanos(), null);
    }

    /** @return whether a command of this JVM on the bucket is on its way (its state may change under a new one) */
    static boolean busy(Ref ref) {
        return ref.inFlight.get() > 0;
    }

    /** A command started by {@link #send}: its first attempt on the wire, to await. */
    record Command<T>(CasProxyManager manager, Ref ref, Request<T> request, RemoteCommand<T> command,
                      Attempt<T> first, long started, long epoch) {

        /**
         * @return the command's result, once Redis took its state (after retries on conflicts)
         * @throws RateLimitStoreException when Redis fails
         * @throws BucketStore.ContentionException when the bucket kept changing
         */
        CommandResult<T> await() {
            return manager.settle(ref, request, command, first, started, epoch);
        }
    }

    /**
     * One attempt: the time it computed at, its result, the state it expects and the one it writes, sent.
     */
    record Attempt<T>(long now, CommandResult<T> result, byte[] expected, byte[] update, long ttl,
                              ScriptRunner.Sent sent) {
    }

    private <T> Attempt<T> attempt(Ref ref, Request<T> request, RemoteCommand<T> command, byte[] expected,
                                   boolean fromRedis, boolean first) {
        long now = first && request.getClientSideTime() != null
                ? request.getClientSideTime() : clock.currentTimeNanos();
        MutableBucketEntry entry = entry(ref, expected, fromRedis, now);
        CommandResult<T> result = command.execute(entry, now);
        byte[] update = null;
        long ttl = 0;
        if (entry.exists()) {
            ttl = ttlMillis(entry.get(), now);
            if (entry.isStateModified()) {
                update = CompactState.encode(entry.get(), request.getBackwardCompatibilityVersion());
            }
        }
        roundTrips.increment();
        return new Attempt<>(now, result, expected, update, ttl, script.send(scripts, ref.key, expected, update, ttl));
    }

    private <T> CommandResult<T> settle(Ref ref, Request<T> request, RemoteCommand<T> command, Attempt<T> attempt,
                                        long started, long epoch) {
        try {
            // The retry budget bounds the time retries spend besides their round trips (backoffs, computing): a
            // slow store (a failover, a cold connection, a distant Redis) must never turn ordinary conflicts into a
            // rejection, so the round trips count only against maxAttempts.
            long answered = 0;
            long retryRoundTrips = 0;
            for (int n = 1; ; n++) {
                long sent = System.nanoTime();
                CasScript.Reply reply = CasScript.reply(attempt.sent().await());
                if (answered != 0) {
                    retryRoundTrips += System.nanoTime() - sent;
                }
                if (reply.repaired()) {
                    repaired(ref.key, "a key of another type, an oversized value or a state without an expiry; "
                            + "replaced");
                }
                if (reply.stored() == null) {
                    if (attempt.update() != null) {
                        ref.lastWritten = attempt.update();
                        ref.lastSeen = attempt.update();
                        ref.lastSeenExpiresAt = attempt.now() + attempt.ttl() * 1_000_000L;
                    } else {
                        ref.lastSeen = attempt.expected();
                    }
                    breaker.onSuccess(epoch);
                    return attempt.result();
                }
                byte[] stored = reply.stored();
                conflicts.increment();
                byte[] expected = stored.length == 0 ? null : stored;
                ref.lastSeen = expected;
                ref.lastSeenExpiresAt = Long.MAX_VALUE;
                if (answered == 0) {
                    answered = System.nanoTime();
                }
                long spent = System.nanoTime() - answered - retryRoundTrips;
                // The first retry runs at once whatever the first round trip took: it carries the state the
                // conflict brought back.
                if (n >= maxAttempts || (n > 1 && spent > budgetNanos)) {
                    breaker.onSuccess(epoch); // Redis answered; the key is just too contended.
                    contended.increment();
                    throw new BucketStore.ContentionException("the Redis bucket kept changing under concurrent writers "
                            + "for " + n + " attempts (" + (System.nanoTime() - started) / 1_000_000
                            + " ms, of which " + spent / 1_000_000 + " ms besides round trips)");
                }
                backOff(n, budgetNanos - spent);
                attempt = attempt(ref, request, command, expected, true, false);
            }
        } catch (JedisException e) {
            throw failed(e, epoch);
        } finally {
            ref.inFlight.decrementAndGet();
            recordLatency(started);
        }
    }

    /**
     * Starts one script of another kind (the sliding windows') under the same circuit breaker and counters as the
     * bucket operations: one decision, one round trip (shared with the other calls the thread starts before it
     * awaits this one).
     *
     * @param script the script
     * @param keys its keys
     * @param args its arguments
     * @return the call, to await on this thread; its {@code await} throws {@link RateLimitStoreException} when
     *         Redis fails
     * @throws RateLimitStoreException when the breaker is open
     */
    ScriptRunner.Sent send(LuaScript script, java.util.List<byte[]> keys, java.util.List<byte[]> args) {
        long epoch = acquire();
        roundTrips.increment();
        long started = System.nanoTime();
        ScriptRunner.Sent sent = scripts.send(script, keys, args);
        return () -> settle(sent, epoch, started);
    }

    /**
     * Runs a call of another kind (a reset's {@code DEL}) under the same circuit breaker and counters as the
     * bucket operations: one decision, one round trip.
     *
     * @param call the call
     * @return its reply
     * @throws RateLimitStoreException when the breaker is open or Redis fails
     */
    Object call(java.util.function.Supplier<Object> call) {
        long epoch = acquire();
        roundTrips.increment();
        return settle(call::get, epoch, System.nanoTime());
    }

    private Object settle(ScriptRunner.Sent sent, long epoch, long started) {
        try {
            Object reply = sent.await();
            breaker.onSuccess(epoch);
            return reply;
        } catch (JedisException e) {
            throw failed(e, epoch);
        } finally {
            recordLatency(started);
        }
    }

    private void recordLatency(long started) {
        long nanos = System.nanoTime() - started;
        latencyNanos.add(nanos);
        LongConsumer observer = latencyObserver;
        if (observer != null) {
            observer.accept(nanos);
        }
    }

    /**
     * @param breaker the breaker's state now
     * @param pipelines pipelines sent so far
     * @return the counters since the store was built
     */
    JedisBucketStore.Stats stats(JedisBucketStore.BreakerState breaker, long pipelines) {
        return new JedisBucketStore.Stats(decisions.sum(), roundTrips.sum(), conflicts.sum(), failures.sum(),
                shortCircuited.sum(), contended.sum(), breaker, latencyNanos.sum(), pipelines, repairs.sum());
    }

    /**
     * The time to live of a bucket's key from its state right after an operation: until every window is full
     * again (a reservation that took it below zero included), plus {@link #KEEP_AFTER_FULL_MILLIS}. Expiring a
     * full bucket loses nothing; expiring one that still owes tokens would forgive the debt.
     */
    static long ttlMillis(io.github.bucket4j.distributed.remote.RemoteBucketState state, long nowNanos) {
        long full = state.calculateFullRefillingTime(nowNanos);
        long millis = full >= MAX_TTL_MILLIS * 1_000_000L ? MAX_TTL_MILLIS : (full + 999_999) / 1_000_000;
        return Math.min(MAX_TTL_MILLIS, millis + KEEP_AFTER_FULL_MILLIS);
    }

    /** The first backoff's upper bound: about a loopback round trip. */
    static final long BACKOFF_BASE_NANOS = 50_000;

    /** The largest backoff's upper bound. */
    static final long BACKOFF_CAP_NANOS = 5_000_000;

    /**
     * Waits before the next attempt after repeated conflicts: nothing after the first (it brought the fresh state,
     * and usually succeeds), then a random time up to a bound that doubles per attempt, so writers that keep
     * colliding on one key spread out instead of colliding in step.
     */
    private static void backOff(int attempt, long nanosLeft) {
        if (attempt < 2 || nanosLeft <= 0) {
            return;
        }
        long bound = Math.min(BACKOFF_CAP_NANOS, BACKOFF_BASE_NANOS << Math.min(attempt - 2, 16));
        java.util.concurrent.locks.LockSupport.parkNanos(
                Math.min(nanosLeft, java.util.concurrent.ThreadLocalRandom.current().nextLong(bound)));
    }

    /**
     * Reads stored state ({@link CompactState}, or Bucket4j's format written before it). State read from Redis that
     * cannot be read, or that no rule could have written ({@link StoredBucketCheck}), is replaced, not obeyed: the
     * decision starts a new bucket, and the compare-and-set, which expects the garbage, overwrites it.
     */
    private MutableBucketEntry entry(Ref ref, byte[] state, boolean fromRedis, long nowNanos) {
        if (state == null) {
            return new MutableBucketEntry((byte[]) null);
        }
        String problem;
        try {
            io.github.bucket4j.distributed.remote.RemoteBucketState decoded = CompactState.decode(state);
            problem = fromRedis ? StoredBucketCheck.problem(decoded, nowNanos) : null;
            if (problem == null) {
                return new MutableBucketEntry(decoded);
            }
        } catch (RuntimeException e) {
            problem = e.toString();
        }
        repaired(ref.key, "unreadable bucket state (" + problem + "); replacing it with a new bucket");
        return new MutableBucketEntry((byte[]) null);
    }

    /**
     * Counts and logs (at most one line per ten seconds) one repair of garbage found under a key, by a script or
     * by this JVM when it could not read what a script returned.
     *
     * @param key the Redis key
     * @param what what was found and done
     */
    void repaired(byte[] key, String what) {
        repairs.increment();
        CORRUPT_LOG.log(System.Logger.Level.WARNING, () -> "Garbage in Redis at " + RedisKeys.printable(key) + ": "
                + what, null);
    }

    @Override
    protected <T> CompletableFuture<CommandResult<T>> executeAsync(Ref ref, Request<T> request) {
        throw new UnsupportedOperationException("the limiter uses the synchronous API");
    }

    @Override
    protected CompletableFuture<Void> removeAsync(Ref ref) {
        throw new UnsupportedOperationException("the limiter uses the synchronous API");
    }

    @Override
    public void removeProxy(Ref ref) {
        jedis.del(ref.key);
        ref.lastSeen = null;
    }

    @Override
    public boolean isAsyncModeSupported() {
        return false;
    }
}
