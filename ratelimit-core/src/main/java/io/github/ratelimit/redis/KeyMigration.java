package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.commands.KeyBinaryCommands;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.params.SetParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * Moves the keys of the earlier layout, {@code <prefix>:{<rule>:<key>}} and its suffixes, to this one,
 * {@code <prefix>:<rule>:{<key>}} ({@link RedisKeys#fromEarlierLayout}), off the request path, so that counts, debts,
 * calendar quotas and blocks written by an earlier version carry over an upgrade.
 *
 * <p>A pass scans the keys under the prefix ({@code SCAN MATCH <prefix>:{*}}, on each primary of a Cluster) and moves
 * each key of the earlier layout: on a standalone Redis or through Sentinel with {@code RENAMENX} (atomic, the expiry
 * kept); on a Cluster, where the two names live on different slots, with {@code DUMP}, {@code PTTL}, {@code RESTORE}
 * and {@code DEL}. Where the new name already exists (an instance of this version has counted the key since), the new
 * state wins and the earlier one is deleted. A pass that moved keys is followed by another a minute later (instances
 * of the earlier version may still be writing during a rolling upgrade); the first pass that finds none writes
 * {@code <prefix>:{layout}} (for 30 days, as every key of the store expires), so that later starts send one
 * {@code GET} and nothing else. Commands go one at a time, on
 * one connection. A failure (Redis down) is tried again a minute later; a refusal by Redis's ACL (no {@code SCAN},
 * {@code RENAMENX} or {@code RESTORE} for the user) stops the migration, logged once: the earlier keys then expire as
 * they would have.
 *
 * <p>On a Cluster, a key an earlier instance writes between its {@code DUMP} and its {@code DEL} loses that write (the
 * migration is not atomic across slots); so upgrade instances together where that matters, as for any change of
 * stored state ({@code docs/versioning.md}).
 */
final class KeyMigration implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(KeyMigration.class.getName());

    /** What {@code <prefix>:{layout}} holds once no key of the earlier layout is left. */
    static final String DONE = "2";

    /** How long the mark that no key of the earlier layout is left lasts: a start after that scans once more. */
    static final Duration DONE_FOR = Duration.ofDays(30);

    /** Keys a {@code SCAN} looks at per call. */
    private static final int PAGE = 1_000;

    /** How long after a pass that moved keys, or failed, the next one starts, unless told otherwise. */
    static final Duration AGAIN = Duration.ofMinutes(1);

    private final UnifiedJedis jedis;
    private final String prefix;
    private final @Nullable Supplier<Map<String, ConnectionPool>> clusterNodes;
    private final Duration again;
    private final ScheduledExecutorService thread;

    /** Keys of the earlier layout moved so far, or dropped where their current name held newer state. */
    final AtomicLong moved = new AtomicLong();

    /** Passes that failed (Redis down, slow or paused), each tried again later. */
    final AtomicLong failures = new AtomicLong();

    /**
     * Starts the migration, on a daemon thread of its own.
     *
     * @param jedis the store's client
     * @param prefix the store's key prefix
     * @param clusterNodes on a Cluster, its nodes' connection pools; {@code null} for a standalone Redis or Sentinel
     * @param again how long after a pass that moved keys, or failed, the next one starts ({@link #AGAIN})
     */
    KeyMigration(
            UnifiedJedis jedis,
            String prefix,
            @Nullable Supplier<Map<String, ConnectionPool>> clusterNodes,
            Duration again) {
        this.jedis = jedis;
        this.again = again;
        this.prefix = prefix;
        this.clusterNodes = clusterNodes;
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "ratelimit-key-migration");
            t.setDaemon(true);
            return t;
        });
        thread.execute(this::run);
    }

    /** @return the key that says no key of the earlier layout is left under the prefix */
    static byte[] doneKey(String prefix) {
        return (prefix + ":{layout}").getBytes(StandardCharsets.UTF_8);
    }

    private void run() {
        try {
            if (DONE.equals(string(jedis.get(doneKey(prefix))))) {
                thread.shutdown();
                return;
            }
            long before = moved.get();
            pass();
            if (thread.isShutdown()) {
                return; // closed during the pass, which stopped part-way: nothing says no earlier key is left
            }
            if (moved.get() == before) {
                jedis.set(
                        doneKey(prefix),
                        DONE.getBytes(StandardCharsets.US_ASCII),
                        SetParams.setParams().px(DONE_FOR.toMillis()));
                thread.shutdown();
                return;
            }
            LOG.log(
                    System.Logger.Level.INFO,
                    () -> "Moved " + (moved.get() - before) + " rate-limit key(s) of the earlier layout under '"
                            + prefix + ":' to the current one (or dropped them where the current name held newer"
                            + " state); looking again in " + again.toSeconds() + " s");
        } catch (JedisDataException e) {
            if (String.valueOf(e.getMessage()).startsWith("NOPERM")) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        () -> "Rate-limit keys of the earlier layout under '" + prefix + ":' are not moved to the"
                                + " current one: Redis refused (" + e.getMessage() + "). They expire as they would"
                                + " have; allow SCAN, RENAMENX, DUMP, RESTORE and DEL to the store's user to keep them.");
                thread.shutdown();
                return;
            }
            failed(e);
        } catch (JedisException e) {
            failed(e);
        } catch (RuntimeException e) {
            // A reply this code did not expect: logged, and tried again like a failure, never lost in the executor.
            failed(new JedisException("unexpected: " + e, e));
        }
        if (!thread.isShutdown()) {
            thread.schedule(this::run, again.toNanos(), TimeUnit.NANOSECONDS);
        }
    }

    private void failed(JedisException e) {
        failures.incrementAndGet();
        LOG.log(
                System.Logger.Level.DEBUG,
                () -> "Moving rate-limit keys of the earlier layout failed; trying again in " + again.toSeconds()
                        + " s: " + e.getMessage());
    }

    /** Scans every node that holds keys, and moves each key of the earlier layout it finds. */
    private void pass() {
        if (clusterNodes == null) {
            scan(jedis);
            return;
        }
        for (ConnectionPool pool : clusterNodes.get().values()) {
            if (thread.isShutdown()) {
                return;
            }
            try (Jedis node = new Jedis(pool.getResource())) {
                List<Object> role = node.role();
                if (!role.isEmpty() && "master".equals(string(role.get(0)))) {
                    scan(node);
                }
            }
        }
    }

    private void scan(KeyBinaryCommands node) {
        ScanParams match = new ScanParams()
                .match((glob(prefix) + ":{*").getBytes(StandardCharsets.UTF_8))
                .count(PAGE);
        byte[] cursor = ScanParams.SCAN_POINTER_START_BINARY;
        String latinPrefix = new String(prefix.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
        do {
            ScanResult<byte[]> page = node.scan(cursor, match);
            for (byte[] name : page.getResult()) {
                // Latin-1 keeps every byte, so a name that is not UTF-8 (not ours) comes back unchanged.
                String next = RedisKeys.fromEarlierLayout(latinPrefix, new String(name, StandardCharsets.ISO_8859_1));
                if (next != null) {
                    move(name, next.getBytes(StandardCharsets.ISO_8859_1));
                }
            }
            cursor = page.getCursorAsBytes();
        } while (!thread.isShutdown() && !ScanParams.SCAN_POINTER_START.equals(string(cursor)));
    }

    private void move(byte[] from, byte[] to) {
        if (clusterNodes == null) {
            if (jedis.renamenx(from, to) == 0) {
                jedis.del(from); // the key was counted under its new name since: that state wins
            }
            moved.incrementAndGet();
            return;
        }
        byte[] state = jedis.dump(from);
        long ttl = jedis.pttl(from);
        if (state == null || ttl == -2) {
            return; // gone meanwhile
        }
        try {
            // No expiry (-1) restores without one: the store replaces such garbage when it reads it.
            jedis.restore(to, Math.max(ttl, 0), state);
        } catch (JedisDataException e) {
            if (!String.valueOf(e.getMessage()).startsWith("BUSYKEY")) {
                throw e;
            }
            // The key was counted under its new name since: that state wins.
        }
        jedis.del(from);
        moved.incrementAndGet();
    }

    /** @return the text with the glob characters of {@code SCAN MATCH} escaped */
    static String glob(String text) {
        StringBuilder sb = new StringBuilder(text.length() + 4);
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
                sb.append('\\');
            }
            sb.append(c);
        }
        return sb.toString();
    }

    private static @Nullable String string(@Nullable Object value) {
        return value instanceof byte[] bytes
                ? new String(bytes, StandardCharsets.UTF_8)
                : value == null ? null : value.toString();
    }

    /** @return whether the migration has ended: nothing was left to move, Redis refused it, or it was closed */
    boolean finished() {
        return thread.isTerminated();
    }

    /** Stops the migration; a pass under way ends at its next page. */
    @Override
    public void close() {
        thread.shutdownNow();
    }
}
