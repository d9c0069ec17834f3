package io.github.ratelimit.redis;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.TokensInheritanceStrategy;
import io.github.bucket4j.distributed.proxy.AbstractProxyManager;
import io.github.bucket4j.distributed.proxy.ClientSideConfig;
import io.github.bucket4j.distributed.remote.CommandResult;
import io.github.bucket4j.distributed.remote.MutableBucketEntry;
import io.github.bucket4j.distributed.remote.RemoteBucketState;
import io.github.bucket4j.distributed.remote.RemoteCommand;
import io.github.bucket4j.distributed.remote.Request;
import io.github.bucket4j.distributed.remote.commands.AddTokensCommand;
import io.github.bucket4j.distributed.remote.commands.CreateInitialStateWithVersionOrReplaceConfigurationAndExecuteCommand;
import io.github.ratelimit.Limit;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.support.RateLimitedLog;
import java.lang.System.Logger.Level;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisException;

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
        volatile byte @Nullable [] lastSeen;
        /** The last state this JVM wrote itself: the only one read without checking it ({@link StoredBucketCheck}). */
        volatile byte @Nullable [] lastWritten;
        /** When the key written last by this JVM expires (store clock), if it was this JVM's write; else MAX. */
        volatile long lastSeenExpiresAt = Long.MAX_VALUE;
        /** This JVM's commands on the bucket, combined when they come while one is on its way. */
        final KeyQueue queue = new KeyQueue(Integer.MAX_VALUE);
        /**
         * Refunds to be tried again whose earlier write reached Redis unanswered, while they wait: a conflict that brings
         * back exactly the state such a write left shows it was done ({@link #refundLate}). Usually {@code null}.
         */
        volatile @Nullable List<Unconfirmed> unconfirmed;

        Ref(byte[] key, BucketConfiguration configuration, long version) {
            this.key = key;
            this.configuration = configuration;
            this.version = version;
        }
    }

    /** A refund whose write reached Redis unanswered: the states its writes would have left, and whether one did. */
    static final class Unconfirmed {
        final List<byte[]> updates = new CopyOnWriteArrayList<>();
        volatile boolean done;
    }

    /**
     * How long a key outlives the moment its bucket is full again: covers the clock calibration's error between
     * instances, so no instance finds a key gone that it would still count as owing tokens.
     */
    static final long KEEP_AFTER_FULL_MILLIS = 1_000;

    /** The longest time to live written: a bucket of the longest allowed period, with a day to spare. */
    static final long MAX_TTL_MILLIS =
            Duration.ofDays(Limit.MAX_PERIOD_DAYS + 1).toMillis();

    private static final RateLimitedLog CORRUPT_LOG = new RateLimitedLog(10_000_000_000L);

    private final UnifiedJedis jedis;
    private final ScriptRunner scripts;
    private final Supplier<ScriptRunner> lateScripts;
    /** What the store gives back late, after Redis failed when a call ended. */
    final LateRefunds lateRefunds = new LateRefunds();

    private final CasScript script;
    private final CircuitBreaker breaker;
    private final TimeMeter clock;
    private final int maxAttempts;
    private final long budgetNanos;
    private final boolean combining;
    /** Whether the client is a Cluster's, whose nodes each have a script cache of their own. */
    private final boolean cluster;

    final LongAdder decisions = new LongAdder();
    final LongAdder roundTrips = new LongAdder();
    final LongAdder conflicts = new LongAdder();
    final LongAdder failures = new LongAdder();
    final LongAdder shortCircuited = new LongAdder();
    final LongAdder contended = new LongAdder();
    /** Calls Redis answered later than the socket timeout, asked once more ({@link #answeredLate}). */
    final LongAdder lateAnswers = new LongAdder();

    final LongAdder latencyNanos = new LongAdder();
    /** Where each operation's latency goes besides the total ({@link JedisBucketStore#latencyObserver}), or null. */
    volatile @Nullable LongConsumer latencyObserver;

    final LongAdder repairs = new LongAdder();

    /**
     * @param lateScripts runs the store's calls off the request path (late refunds, lease renewals), with their
     *        longer timeout; asked on first use
     * @param combining whether the commands of this JVM on one bucket are combined, one compare-and-set of this JVM on
     *        its way per bucket at a time ({@link BucketCommand}); else each is computed from the state last seen and
     *        may conflict with this JVM's other commands
     * @param cluster whether the client is a Cluster's, whose nodes each have a script cache of their own
     */
    CasProxyManager(
            UnifiedJedis jedis,
            ScriptRunner scripts,
            Supplier<ScriptRunner> lateScripts,
            CasScript script,
            CircuitBreaker breaker,
            TimeMeter clock,
            int maxAttempts,
            long budgetNanos,
            boolean combining,
            boolean cluster) {
        super(ClientSideConfig.getDefault().withClientClock(clock));
        this.jedis = jedis;
        this.scripts = scripts;
        this.lateScripts = lateScripts;
        this.script = script;
        this.breaker = breaker;
        this.clock = clock;
        this.maxAttempts = maxAttempts;
        this.budgetNanos = budgetNanos;
        this.combining = combining;
        this.cluster = cluster;
    }

    /**
     * Loads scripts into Redis's script cache ahead of their first run (best effort: at the first failure it stops; the
     * next call loads them all again, as {@code SCRIPT LOAD} of a cached script changes nothing, so a cache Redis lost
     * to a restart, a failover or {@code SCRIPT FLUSH} is filled again too). A script's first run otherwise costs a
     * NOSCRIPT answer and a second call with its text; should that first answer come late, the store could not tell
     * whether the script ran, so a refund that must not be made twice would not be tried again. On a Cluster, whose
     * nodes cache scripts each, nothing is loaded ahead. Not on the request path: the store calls it at start-up and
     * with each clock calibration.
     *
     * @param key a key to route the loads by
     * @param scripts the scripts
     */
    void preload(byte[] key, List<LuaScript> scripts) {
        if (cluster) {
            return;
        }
        for (LuaScript s : scripts) {
            try {
                s.load(jedis, key);
            } catch (JedisException e) {
                return; // Redis is not there yet: the next call tries again.
            }
        }
    }

    /** Thrown at once while the breaker is open: made once, without a stack trace. */
    private static final RedisCallException BREAKER_OPEN =
            RedisCallException.refusal("Redis circuit breaker is open; not waiting on Redis");

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
    private RedisCallException failed(JedisException e, long epoch) {
        return failed(e, epoch, List.of());
    }

    /**
     * @param updates for a compare-and-set, the states its unanswered writes would have left
     * @return the exception for a failed command, counted, and reported to the breaker
     */
    private RedisCallException failed(JedisException e, long epoch, List<byte[]> updates) {
        failures.increment();
        breaker.onFailure(epoch);
        boolean sent = !RedisCallException.unsent(e);
        return new RedisCallException("Redis command failed: " + e.getMessage(), e, sent, sent ? updates : List.of());
    }

    @Override
    protected <T> CommandResult<T> execute(Ref ref, Request<T> request) {
        return send(ref, request).await();
    }

    /**
     * Starts a command on a bucket. When the bucket is free (no command of this JVM on its way or waiting), computes
     * it from the state this JVM last saw and sends the compare-and-set at once ({@link ScriptRunner#send}), so that
     * the commands a thread starts before it awaits one share a round trip; else it waits its turn and goes with the
     * bucket's next group ({@link BucketCommand}). Every command started must be {@linkplain BucketCommand#await
     * awaited}, on the thread that started it.
     *
     * @param ref the bucket
     * @param request the command
     * @return the command on its way
     * @throws RateLimitStoreException when the breaker is open
     */
    <T> BucketCommand<T> send(Ref ref, Request<T> request) {
        long epoch = acquire();
        RemoteCommand<T> command = new CreateInitialStateWithVersionOrReplaceConfigurationAndExecuteCommand<>(
                ref.configuration, request.getCommand(), ref.version, TokensInheritanceStrategy.ADDITIVE);
        BucketCommand<T> c = new BucketCommand<>(this, ref, request, command, epoch, System.nanoTime());
        if (combining && !ref.queue.goesAlone(c)) {
            return c;
        }
        List<BucketCommand<?>> group = List.of(c);
        try {
            c.sentAlone(group, attempt(ref, group, expected(ref), true));
        } catch (RuntimeException e) {
            finishAll(group, null, e);
            handOver(ref);
            throw e;
        }
        return c;
    }

    /** @return the state to expect in Redis: the last seen, or none once the key this JVM wrote has expired */
    private byte @Nullable [] expected(Ref ref) {
        byte[] expected = ref.lastSeen;
        if (expected != null && clock.currentTimeNanos() >= ref.lastSeenExpiresAt) {
            // The key this JVM wrote has expired (its bucket was full again): expect it absent, not stale.
            return null;
        }
        return expected;
    }

    /** Sends a group taken from the bucket's queue and settles it (the queue is then handed over by its leader). */
    void sendAndSettle(Ref ref, List<BucketCommand<?>> group) {
        Attempt attempt;
        try {
            if (breaker.refusesNow()) {
                // Redis failed while these waited: they fail at once, as a call started now would.
                shortCircuited.add(group.size());
                throw BREAKER_OPEN;
            }
            attempt = attempt(ref, group, expected(ref), false);
        } catch (RuntimeException e) {
            finishAll(group, null, e);
            return;
        }
        settle(ref, group, attempt);
    }

    /** Frees the bucket once a command sent alone is settled, when commands are combined. */
    void handOver(Ref ref) {
        if (combining) {
            ref.queue.handOver();
        }
    }

    /**
     * @param command a command
     * @return a request to {@link #send} it, as the proxies make them (this manager's clock and format version)
     */
    <T> Request<T> request(RemoteCommand<T> command) {
        return new Request<>(
                command, getClientSideConfig().getBackwardCompatibilityVersion(), clock.currentTimeNanos(), null);
    }

    /**
     * One attempt of a group: the time it computed at, each command's result in order, the state it expects and the
     * one it writes, sent.
     */
    record Attempt(
            long now,
            CommandResult<?>[] results,
            byte @Nullable [] expected,
            byte @Nullable [] update,
            long ttl,
            ScriptRunner.Sent sent) {}

    private Attempt attempt(Ref ref, List<BucketCommand<?>> group, byte @Nullable [] expected, boolean first) {
        // A command sent alone at once computes at the time its request was made; a group, or a retry, now.
        Long requested = group.get(0).request.getClientSideTime();
        long now = first && group.size() == 1 && requested != null ? requested : clock.currentTimeNanos();
        return attempt(ref, group, expected, expected != null && expected != ref.lastWritten, now);
    }

    private Attempt attempt(
            Ref ref, List<BucketCommand<?>> group, byte @Nullable [] expected, boolean fromRedis, long now) {
        MutableBucketEntry entry = entry(ref, expected, fromRedis, now);
        CommandResult<?>[] results = new CommandResult<?>[group.size()];
        for (int i = 0; i < results.length; i++) {
            // In the order the commands were started, each from the state the one before left.
            results[i] = group.get(i).command.execute(entry, now);
        }
        byte[] update = null;
        long ttl = 0;
        if (entry.exists()) {
            ttl = ttlMillis(entry.get(), now);
            if (entry.isStateModified()) {
                update = CompactState.encode(entry.get(), group.get(0).request.getBackwardCompatibilityVersion());
            }
        }
        roundTrips.increment();
        return new Attempt(now, results, expected, update, ttl, script.send(scripts, ref.key, expected, update, ttl));
    }

    /**
     * Awaits a group's attempt, retries it on conflicts from the state each brings back, and hands each command its
     * result (or the failure).
     */
    void settle(Ref ref, List<BucketCommand<?>> group, Attempt attempt) {
        // An attempt Redis answered later than the socket timeout: asked once more, from the same state; if its write
        // was done, the second meets exactly the state it left, and its results stand.
        Attempt late = null;
        boolean askedAgain = false;
        try {
            // The retry budget bounds the time retries spend besides their round trips (backoffs, computing): a
            // slow store (a failover, a cold connection, a distant Redis) must never turn ordinary conflicts into a
            // rejection, so the round trips count only against maxAttempts.
            long answered = 0;
            long retryRoundTrips = 0;
            for (int n = 1; ; n++) {
                long sent = System.nanoTime();
                CasScript.Reply reply;
                try {
                    reply = CasScript.reply(attempt.sent().await());
                } catch (JedisException e) {
                    if (askedAgain || !answeredLate(e)) {
                        throw e;
                    }
                    askedAgain = true;
                    late = attempt;
                    lateAnswers.increment();
                    attempt = attempt(
                            ref,
                            group,
                            late.expected(),
                            late.expected() != null && late.expected() != ref.lastWritten,
                            clock.currentTimeNanos());
                    n--;
                    continue;
                }
                if (answered != 0) {
                    retryRoundTrips += System.nanoTime() - sent;
                }
                if (reply.repaired()) {
                    repaired(
                            ref.key,
                            "a key of another type, an oversized value or a state without an expiry; " + "replaced");
                }
                if (reply.stored() == null) {
                    if (attempt.update() != null) {
                        ref.lastWritten = attempt.update();
                        ref.lastSeen = attempt.update();
                        ref.lastSeenExpiresAt = attempt.now() + attempt.ttl() * 1_000_000L;
                    } else {
                        ref.lastSeen = attempt.expected();
                    }
                    for (BucketCommand<?> c : group) {
                        breaker.onSuccess(c.epoch);
                    }
                    finishAll(group, attempt.results(), null);
                    return;
                }
                byte[] stored = reply.stored();
                if (late != null && late.update() != null && Arrays.equals(stored, late.update())) {
                    // The attempt answered late was done: its results are the commands' own.
                    ref.lastWritten = late.update();
                    ref.lastSeen = late.update();
                    ref.lastSeenExpiresAt = late.now() + late.ttl() * 1_000_000L;
                    for (BucketCommand<?> c : group) {
                        breaker.onSuccess(c.epoch);
                    }
                    finishAll(group, late.results(), null);
                    return;
                }
                late = null;
                conflicts.increment();
                confirmUnconfirmed(ref, stored);
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
                    for (BucketCommand<?> c : group) {
                        breaker.onSuccess(c.epoch); // Redis answered; the key is just too contended.
                    }
                    contended.add(group.size());
                    finishAll(
                            group,
                            null,
                            new BucketStore.ContentionException("the Redis bucket kept changing under "
                                    + "concurrent writers for " + n + " attempts ("
                                    + (System.nanoTime() - group.get(0).started) / 1_000_000 + " ms, of which "
                                    + spent / 1_000_000 + " ms besides round trips)"));
                    return;
                }
                backOff(n, budgetNanos - spent);
                attempt = attempt(ref, group, expected, true, clock.currentTimeNanos());
            }
        } catch (JedisException e) {
            RateLimitStoreException failure = null;
            for (BucketCommand<?> c : group) {
                failure = failed(e, c.epoch, late, attempt);
            }
            finishAll(group, null, failure);
        } catch (RuntimeException e) {
            // Not Redis's failure (a bug, or garbage the decoder refused): every command of the group learns of it.
            finishAll(group, null, e);
        } finally {
            // Whatever happened (an Error included), no command of the group is left for its owner to wait on.
            for (BucketCommand<?> c : group) {
                if (!c.done()) {
                    c.finish(null, new RateLimitStoreException("the Redis command did not complete", null));
                }
            }
        }
    }

    /**
     * @param late the attempt answered late and asked again, or {@code null}
     * @param attempt the attempt that failed
     * @return the exception for a failed compare-and-set, counted, and reported to the breaker: sent when either attempt
     *         was (the one answered late certainly was), with the states the sent ones would have written
     */
    private RedisCallException failed(JedisException e, long epoch, @Nullable Attempt late, Attempt attempt) {
        failures.increment();
        breaker.onFailure(epoch);
        boolean lastSent = !RedisCallException.unsent(e);
        List<byte[]> updates = new ArrayList<>(2);
        if (late != null && late.update() != null) {
            updates.add(late.update());
        }
        if (lastSent && attempt.update() != null) {
            updates.add(attempt.update());
        }
        return new RedisCallException("Redis command failed: " + e.getMessage(), e, late != null || lastSent, updates);
    }

    /** Hands each command of a group its result (or the failure), and records its latency. */
    private void finishAll(
            List<BucketCommand<?>> group, CommandResult<?> @Nullable [] results, @Nullable RuntimeException error) {
        for (int i = 0; i < group.size(); i++) {
            BucketCommand<?> c = group.get(i);
            recordLatency(c.started);
            c.finish(results == null ? null : results[i], error);
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
    ScriptRunner.Sent send(LuaScript script, List<byte[]> keys, List<byte[]> args) {
        return send(script, keys, args, 1, true);
    }

    /**
     * Starts one script that performs several operations of this JVM on a key, combined ({@link KeyQueue}): as many
     * decisions, one round trip.
     *
     * @param operations the operations the script performs
     * @param askAgain whether a late answer may be asked once more ({@link #answeredLate}): for decisions, which
     *        counted twice are only stricter; never for a refund that is not the same done twice (a counter's, a
     *        calendar's), which would be given twice
     * @return the call, to await on this thread
     * @throws RateLimitStoreException when the breaker is open
     */
    ScriptRunner.Sent send(LuaScript script, List<byte[]> keys, List<byte[]> args, int operations, boolean askAgain) {
        long epoch = acquire();
        decisions.add(operations - 1);
        roundTrips.increment();
        long started = System.nanoTime();
        ScriptRunner.Sent sent = scripts.send(script, keys, args);
        return () -> settle(
                () -> {
                    try {
                        return sent.await();
                    } catch (JedisException e) {
                        if (!askAgain || !answeredLate(e)) {
                            throw e;
                        }
                        // A stall, not an outage (the breaker is closed): asked once more before the failure policy
                        // applies.
                        lateAnswers.increment();
                        roundTrips.increment();
                        return scripts.send(script, keys, args).await();
                    }
                },
                epoch,
                started);
    }

    /**
     * @param e a failure of a call that was sent
     * @return whether Redis did not answer it within the socket timeout while the breaker is closed: a stall of a Redis
     *         that answers others (a busy machine, a long script), which a decision asks once more, rather than an
     *         outage, which the breaker answers
     */
    private boolean answeredLate(JedisException e) {
        if (RedisCallException.unsent(e) || breaker.refusesNow()) {
            return false;
        }
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SocketTimeoutException) {
                return true;
            }
        }
        return false;
    }

    /**
     * Starts one script off the request path (a lease's renewal, a refund tried again) under the same circuit breaker
     * and counters, on the store's own connections for such calls, whose timeout is the longer background timeout.
     *
     * @param script the script
     * @param keys its keys
     * @param args its arguments
     * @return the call, to await on this thread
     * @throws RateLimitStoreException when the breaker is open
     */
    ScriptRunner.Sent sendLate(LuaScript script, List<byte[]> keys, List<byte[]> args) {
        long epoch = acquire();
        roundTrips.increment();
        long started = System.nanoTime();
        ScriptRunner.Sent sent = lateScripts.get().send(script, keys, args);
        return () -> settle(sent, epoch, started);
    }

    /**
     * Gives tokens back to a bucket later, off the request path, after the refund failed: at once when Redis
     * certainly did not see it; when its write reached Redis unanswered, only once this instance has seen that the
     * write was not done. (This instance's writes to a bucket go one at a time, so its next one meets the state that
     * write left, if it was done: then the refund is not made again. Only another instance's write in between can
     * hide it, and the refund is then made again: at most the refund's tokens given twice.)
     *
     * @param ref the bucket
     * @param tokens the tokens to give back
     * @param failure why the refund failed
     */
    void refundLate(Ref ref, long tokens, RateLimitStoreException failure) {
        Unconfirmed unconfirmed = new Unconfirmed();
        if (failure instanceof RedisCallException call && call.sent()) {
            unconfirmed.updates.addAll(call.updates());
        }
        watch(ref, unconfirmed, true);
        lateRefunds.offer(
                tokens + " token(s) to " + RedisKeys.printable(ref.key),
                () -> {
                    try {
                        casLate(ref, tokens, unconfirmed);
                    } catch (RedisCallException e) {
                        if (e.sent()) {
                            unconfirmed.updates.addAll(e.updates());
                        }
                        throw e;
                    }
                },
                () -> watch(ref, unconfirmed, false));
    }

    /** Adds or removes a refund tried again from those the bucket's conflicts are checked for. */
    private static void watch(Ref ref, Unconfirmed unconfirmed, boolean add) {
        synchronized (ref) {
            List<Unconfirmed> now = ref.unconfirmed == null ? new ArrayList<>() : new ArrayList<>(ref.unconfirmed);
            if (add) {
                now.add(unconfirmed);
            } else {
                now.remove(unconfirmed);
            }
            ref.unconfirmed = now.isEmpty() ? null : List.copyOf(now);
        }
    }

    /**
     * Marks done the refunds of the bucket whose unanswered write left exactly the state a conflict brought back. One
     * state shows one write done, never more: the writes of this instance unanswered in a row were computed from the
     * same state, so at most one of them was done, and two that would have written the same bytes are the same change.
     * The write is the oldest such; every refund it carried is done (a combined write carries several, which share the
     * very array of its state); the state is struck from every other refund's writes, which are made again.
     */
    private static void confirmUnconfirmed(Ref ref, byte[] stored) {
        if (ref.unconfirmed == null) {
            return;
        }
        synchronized (ref) {
            List<Unconfirmed> watched = ref.unconfirmed == null ? List.of() : ref.unconfirmed;
            byte[] done = null;
            for (Unconfirmed u : watched) {
                for (byte[] update : u.updates) {
                    if (done == null && Arrays.equals(update, stored)) {
                        done = update;
                    }
                }
            }
            if (done == null) {
                return;
            }
            for (Unconfirmed u : watched) {
                if (u.updates.contains(done)) {
                    u.done = true;
                }
                byte[] write = done;
                u.updates.removeIf(update -> update != write && Arrays.equals(update, stored));
            }
        }
    }

    /**
     * One late refund of a bucket: a compare-and-set of its own on the calls off the request path, retried on
     * conflicts, unless a write of the refund's is seen done meanwhile.
     */
    private void casLate(Ref ref, long tokens, Unconfirmed unconfirmed) {
        if (unconfirmed.done) {
            return;
        }
        long epoch = acquire();
        long started = System.nanoTime();
        RemoteCommand<?> command = new CreateInitialStateWithVersionOrReplaceConfigurationAndExecuteCommand<>(
                ref.configuration, new AddTokensCommand(tokens), ref.version, TokensInheritanceStrategy.ADDITIVE);
        byte[] expected = expected(ref);
        byte[] update = null;
        try {
            for (int n = 1; ; n++) {
                long now = clock.currentTimeNanos();
                MutableBucketEntry entry = entry(ref, expected, expected != null && expected != ref.lastWritten, now);
                command.execute(entry, now);
                update = entry.isStateModified()
                        ? CompactState.encode(entry.get(), getClientSideConfig().getBackwardCompatibilityVersion())
                        : null;
                long ttl = entry.exists() ? ttlMillis(entry.get(), now) : 0;
                roundTrips.increment();
                CasScript.Reply reply = CasScript.reply(script.send(lateScripts.get(), ref.key, expected, update, ttl)
                        .await());
                if (reply.stored() == null) {
                    if (update != null) {
                        ref.lastWritten = update;
                        ref.lastSeen = update;
                        ref.lastSeenExpiresAt = now + ttl * 1_000_000L;
                    }
                    breaker.onSuccess(epoch);
                    return;
                }
                conflicts.increment();
                confirmUnconfirmed(ref, reply.stored());
                expected = reply.stored().length == 0 ? null : reply.stored();
                // What this instance decides next starts from the state Redis holds: the state that showed a write done
                // is not met again as a conflict, so it shows no other.
                ref.lastSeen = expected;
                ref.lastSeenExpiresAt = Long.MAX_VALUE;
                if (unconfirmed.done) {
                    breaker.onSuccess(epoch);
                    return;
                }
                if (n >= maxAttempts) {
                    breaker.onSuccess(epoch);
                    throw new BucketStore.ContentionException("the Redis bucket kept changing under concurrent "
                            + "writers for " + n + " attempts of a late refund");
                }
            }
        } catch (JedisException e) {
            throw failed(e, epoch, update == null ? List.of() : List.of(update));
        } finally {
            recordLatency(started);
        }
    }

    /**
     * Runs a call of another kind (a reset's {@code DEL}) under the same circuit breaker and counters as the
     * bucket operations: one decision, one round trip.
     *
     * @param call the call
     * @return its reply
     * @throws RateLimitStoreException when the breaker is open or Redis fails
     */
    Object call(Supplier<Object> call) {
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
        return new JedisBucketStore.Stats(
                decisions.sum(),
                roundTrips.sum(),
                conflicts.sum(),
                failures.sum(),
                shortCircuited.sum(),
                contended.sum(),
                breaker,
                latencyNanos.sum(),
                pipelines,
                repairs.sum(),
                lateRefunds.late.sum(),
                lateRefunds.lost.sum(),
                lateRefunds.unconfirmed.sum(),
                lateAnswers.sum());
    }

    /**
     * The time to live of a bucket's key from its state right after an operation: until every window is full
     * again (a reservation that took it below zero included), plus {@link #KEEP_AFTER_FULL_MILLIS}. Expiring a
     * full bucket loses nothing; expiring one that still owes tokens would forgive the debt.
     */
    static long ttlMillis(RemoteBucketState state, long nowNanos) {
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
        LockSupport.parkNanos(Math.min(nanosLeft, ThreadLocalRandom.current().nextLong(bound)));
    }

    /**
     * Reads stored state ({@link CompactState}, or Bucket4j's format written before it). State read from Redis that
     * cannot be read, or that no rule could have written ({@link StoredBucketCheck}), is replaced, not obeyed: the
     * decision starts a new bucket, and the compare-and-set, which expects the garbage, overwrites it.
     */
    private MutableBucketEntry entry(Ref ref, byte @Nullable [] state, boolean fromRedis, long nowNanos) {
        if (state == null) {
            return new MutableBucketEntry((byte[]) null);
        }
        String problem;
        try {
            RemoteBucketState decoded = CompactState.decode(state);
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
        CORRUPT_LOG.log(Level.WARNING, () -> "Garbage in Redis at " + RedisKeys.printable(key) + ": " + what, null);
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
