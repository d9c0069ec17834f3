package io.github.ratelimit.store;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Limit;
import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.RateLimitedLog;
import redis.clients.jedis.StreamEntryID;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;
import redis.clients.jedis.resps.StreamEntry;

import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Per-key limits kept in Redis, changed at run time, and served to every instance's limiter (the design's
 * configuration store: {@code user:241531} → {@code 5/1s}). A key of a rule gets limits of its own or a plan; keys
 * without an entry keep the rule's limits.
 *
 * <p><b>Layout</b> (all on one Cluster slot, hash tag {@code {limits}}; configuration, so nothing expires):
 * a hash per rule, {@code <prefix>:{limits}:rule:<rule>}, field = the key as the rule counts by it, value = the
 * entry (limits or plan, who set it, when); and a stream of changes, {@code <prefix>:{limits}:changes} (rule, key,
 * operation, who), capped at about {@value #MAX_CHANGES} entries. A change writes both in one script.
 *
 * <p><b>Consistency</b>: each instance caches answers (a bounded map, no expiry) and reads the stream of changes
 * every {@link Builder#refreshInterval} (default 1 s): a change made anywhere applies on every instance within that
 * interval plus one round trip, on its next call for the key (the limiter's bucket then takes the new limits the
 * way configuration changes do: tokens spent stay spent). The instance that makes a change applies it at once. An
 * instance that finds the stream trimmed past what it had read, or that recovers from an outage, forgets every
 * answer and asks again.
 *
 * <p><b>Failures</b>: while Redis cannot be read, cached answers stay (the last known limits); a key not cached
 * gets the rule's own limits, never no limit, without waiting on Redis once a read or refresh has failed, and is
 * asked again once a refresh succeeds. Changes fail with {@link RateLimitStoreException}.
 *
 * <p>Every change is logged (logger {@code io.github.ratelimit.limits}, INFO) with who made it. Thread-safe;
 * {@link #close()} stops the refresh thread (the client is the caller's).
 */
public final class RedisLimitStore implements LimitProvider, AutoCloseable {

    /** About how many changes the stream keeps. */
    public static final int MAX_CHANGES = 10_000;

    private static final System.Logger AUDIT = System.getLogger("io.github.ratelimit.limits");
    private static final RateLimitedLog FAILURE_LOG = new RateLimitedLog(10_000_000_000L);

    /** KEYS[1] the rule's hash, KEYS[2] the stream; ARGV: op (set|del), key, value, rule, actor, max changes. */
    static final String CHANGE_SOURCE = """
            local changed
            if ARGV[1] == 'set' then
              redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
              changed = 1
            else
              changed = redis.call('HDEL', KEYS[1], ARGV[2])
            end
            if changed == 1 then
              redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[6], '*', 'rule', ARGV[4], 'key', ARGV[2],
                'op', ARGV[1], 'by', ARGV[5])
            end
            return changed
            """;

    private static final LuaScript CHANGE = new LuaScript(CHANGE_SOURCE);

    /**
     * One key's entry.
     *
     * @param rule the rule's name
     * @param key the key, as the rule counts by it
     * @param limits the limits that apply (a plan's, for a plan), or empty when the plan is not known here
     * @param plan the plan's name, or {@code null} for limits of the key's own
     * @param changedBy who made the change, as given
     * @param changedAt when
     */
    public record Entry(String rule, String key, List<Limit> limits, String plan, String changedBy, Instant changedAt) {
    }

    /**
     * One page of a rule's entries.
     *
     * @param entries the entries, in no particular order
     * @param next the cursor for the next page, or {@code null} after the last
     */
    public record Page(List<Entry> entries, String next) {
    }

    private record CacheKey(String rule, String key) {
    }

    /** A cached answer: the limits, or none for the rule's own. */
    private record Answer(List<Limit> limits) {
        static final Answer NONE = new Answer(null);
    }

    private final UnifiedJedis jedis;
    private final String prefix;
    private final String stream;
    private final Map<String, List<Limit>> plans;
    private final LimitProvider defaults;
    private final Clock clock;
    private final Cache<CacheKey, Answer> answers;
    private final List<Changes> listeners = new CopyOnWriteArrayList<>();
    /** Bumped on every invalidation, so a read that raced a change does not cache the old answer. */
    private final AtomicLong generation = new AtomicLong();
    private final ScheduledExecutorService refresher;
    /** The last change read from the stream; {@code null} until the first refresh. */
    private volatile String lastChange;
    /**
     * Reads and refreshes that failed and that no successful refresh has settled yet; above 0, Redis is taken as
     * away. A counter, not a flag: a read failing while a refresh succeeds stays for the next refresh to settle.
     */
    private final java.util.concurrent.atomic.AtomicInteger failures = new java.util.concurrent.atomic.AtomicInteger();

    private RedisLimitStore(Builder b) {
        this.jedis = b.client;
        this.prefix = b.keyPrefix;
        this.stream = prefix + ":{limits}:changes";
        this.plans = Map.copyOf(b.plans);
        this.defaults = b.defaults;
        this.clock = b.clock;
        this.answers = Caffeine.newBuilder().maximumSize(b.maximumCachedKeys).build();
        long every = b.refreshInterval.toMillis();
        this.refresher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "ratelimit-limits-refresh");
            t.setDaemon(true);
            return t;
        });
        refresher.scheduleWithFixedDelay(this::refresh, 0, every, TimeUnit.MILLISECONDS);
    }

    /**
     * @return a builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Gives a key of a rule limits of its own.
     *
     * @param rule the rule's name
     * @param key the key, as the rule counts by it
     * @param limits the limits, at least one
     * @param actor who makes the change (for the log and the entry), or {@code null} when not known
     * @throws IllegalArgumentException when an argument is missing or empty
     * @throws RateLimitStoreException when Redis fails
     */
    public void setLimits(String rule, String key, List<Limit> limits, String actor) {
        check(rule, key);
        if (limits == null || limits.isEmpty()) {
            throw new IllegalArgumentException("limits for rule '" + rule + "' key '" + key + "' are empty; give at "
                    + "least one, e.g. 100/1m, or remove the entry to go back to the rule's limits");
        }
        String text = String.join(",", limits.stream().map(Limit::toString).toList());
        change("set", rule, key, "limits\t" + text, actor);
        AUDIT.log(Level.INFO, () -> "Limits of rule '" + rule + "' key '" + key + "' set to " + text + " by " + who(actor));
    }

    /**
     * Puts a key of a rule on a plan.
     *
     * @param rule the rule's name
     * @param key the key, as the rule counts by it
     * @param plan a plan this store was built with
     * @param actor who makes the change, or {@code null} when not known
     * @throws IllegalArgumentException when the plan is not known, or an argument is missing
     * @throws RateLimitStoreException when Redis fails
     */
    public void assignPlan(String rule, String key, String plan, String actor) {
        check(rule, key);
        if (plan == null || !plans.containsKey(plan)) {
            throw new IllegalArgumentException("plan '" + plan + "' is not known; known plans: "
                    + new java.util.TreeSet<>(plans.keySet()));
        }
        change("set", rule, key, "plan\t" + plan, actor);
        AUDIT.log(Level.INFO, () -> "Rule '" + rule + "' key '" + key + "' put on plan '" + plan + "' by " + who(actor));
    }

    /**
     * Takes a key back to its rule's limits.
     *
     * @param rule the rule's name
     * @param key the key
     * @param actor who makes the change, or {@code null} when not known
     * @return whether the key had an entry
     * @throws RateLimitStoreException when Redis fails
     */
    public boolean remove(String rule, String key, String actor) {
        check(rule, key);
        boolean removed = change("del", rule, key, "", actor);
        if (removed) {
            AUDIT.log(Level.INFO, () -> "Rule '" + rule + "' key '" + key + "' back to the rule's limits by " + who(actor));
        }
        return removed;
    }

    /**
     * @param rule the rule's name
     * @param key the key
     * @return the key's entry, read from Redis now
     * @throws RateLimitStoreException when Redis fails
     */
    public Optional<Entry> get(String rule, String key) {
        check(rule, key);
        try {
            byte[] value = jedis.hget(ruleKey(rule), utf8(key));
            return value == null ? Optional.empty() : Optional.of(entry(rule, key, value));
        } catch (JedisException e) {
            throw failed(e);
        }
    }

    /**
     * One page of a rule's entries ({@code HSCAN}: an entry present for the whole listing appears at least once).
     *
     * @param rule the rule's name
     * @param cursor {@code null} for the first page, else the previous page's {@link Page#next}
     * @param count about how many entries per page, 1 to 1,000
     * @return the page
     * @throws IllegalArgumentException when the count is out of range or the cursor is not one
     * @throws RateLimitStoreException when Redis fails
     */
    public Page list(String rule, String cursor, int count) {
        check(rule, "");
        if (count < 1 || count > 1_000) {
            throw new IllegalArgumentException("count " + count + " is out of range; use 1 to 1000");
        }
        String from = cursor == null ? ScanParams.SCAN_POINTER_START : cursor;
        if (!from.chars().allMatch(Character::isDigit) || from.isEmpty()) {
            throw new IllegalArgumentException("cursor '" + cursor + "' is not one a page returned");
        }
        try {
            ScanResult<Map.Entry<byte[], byte[]>> page = jedis.hscan(ruleKey(rule), utf8(from),
                    new ScanParams().count(count));
            List<Entry> entries = new ArrayList<>();
            for (Map.Entry<byte[], byte[]> e : page.getResult()) {
                entries.add(entry(rule, new String(e.getKey(), StandardCharsets.UTF_8), e.getValue()));
            }
            return new Page(entries, page.isCompleteIteration() ? null : page.getCursor());
        } catch (JedisException e) {
            throw failed(e);
        }
    }

    @Override
    public List<Limit> limitsFor(Rule rule, String key) {
        List<Limit> own = entryLimits(rule, key);
        return own != null || defaults == null ? own : defaults.limitsFor(rule, key);
    }

    /** The limits of the key's entry in Redis (cached), or {@code null} for none (or none readable now). */
    private List<Limit> entryLimits(Rule rule, String key) {
        CacheKey cacheKey = new CacheKey(rule.name(), key);
        Answer cached = answers.getIfPresent(cacheKey);
        if (cached != null) {
            return cached.limits();
        }
        if (failures.get() > 0) {
            // Redis failed since the last refresh that succeeded: do not make every call wait out a timeout. The
            // refresh clears this once Redis answers, and then every answer is asked again.
            return null;
        }
        long seen = generation.get();
        byte[] value;
        try {
            value = jedis.hget(ruleKey(rule.name()), utf8(key));
        } catch (JedisException e) {
            failures.incrementAndGet();
            FAILURE_LOG.log(Level.WARNING, () -> "Could not read the limits of rule '" + rule.name()
                    + "' from Redis; the rule's own limits apply to keys not read before: " + e, null);
            return null;
        }
        Answer answer = value == null ? Answer.NONE : new Answer(emptyToNull(entry(rule.name(), key, value).limits()));
        if (generation.get() == seen) {
            answers.put(cacheKey, answer);
            if (generation.get() != seen) {
                // A refresh forgot answers between the check and the put: this one may be among them.
                answers.invalidate(cacheKey);
            }
        }
        return answer.limits();
    }

    @Override
    public void onChange(Changes changes) {
        listeners.add(Objects.requireNonNull(changes, "changes"));
    }

    /**
     * Reads the changes made since the last refresh and forgets the answers they change. Run by the refresh
     * thread; synchronized so a test may run it too.
     */
    synchronized void refresh() {
        // Failures seen now are the ones a successful refresh settles; a read failing meanwhile counts for the next.
        int failed = failures.get();
        try {
            String from = lastChange;
            if (from == null) {
                List<StreamEntry> newest = jedis.xrevrange(stream, "+", "-", 1);
                lastChange = newest.isEmpty() ? "0-0" : newest.get(0).getID().toString();
                failures.addAndGet(-failed);
                // Answers read before this first position (a change may have come in between) are not trusted.
                forgetAll();
                return;
            }
            List<StreamEntry> oldest = jedis.xrange(stream, "-", "+", 1);
            boolean trimmed = !oldest.isEmpty() && !from.equals("0-0")
                    && oldest.get(0).getID().compareTo(new StreamEntryID(from)) > 0;
            List<StreamEntry> changes = jedis.xrange(stream, "(" + from, "+", 1_000);
            for (StreamEntry change : changes) {
                forget(change.getFields().get("rule"), change.getFields().get("key"));
                from = change.getID().toString();
            }
            lastChange = from;
            failures.addAndGet(-failed);
            if (trimmed || failed > 0) {
                forgetAll();
            }
        } catch (JedisException | IllegalArgumentException e) {
            failures.incrementAndGet();
            FAILURE_LOG.log(Level.WARNING, () -> "Could not read the changes of per-key limits from Redis; keeping the "
                    + "last known limits: " + e, null);
        }
    }

    private void forget(String rule, String key) {
        if (rule == null || key == null) {
            return;
        }
        generation.incrementAndGet();
        answers.invalidate(new CacheKey(rule, key));
        for (Changes l : listeners) {
            l.keyChanged(rule, key);
        }
    }

    private void forgetAll() {
        generation.incrementAndGet();
        answers.invalidateAll();
        for (Changes l : listeners) {
            l.allChanged();
        }
    }

    private boolean change(String op, String rule, String key, String value, String actor) {
        String by = actor == null || actor.isBlank() ? "unknown" : actor.replaceAll("\\p{Cntrl}", " ");
        String stored = op.equals("set") ? value + "\t" + by + "\t" + clock.millis() : "";
        Object reply;
        try {
            reply = CHANGE.run(jedis, List.of(ruleKey(rule), utf8(stream)), List.of(utf8(op), utf8(key), utf8(stored),
                    utf8(rule), utf8(by), utf8(Integer.toString(MAX_CHANGES))));
        } catch (JedisException e) {
            throw failed(e);
        }
        forget(rule, key); // this instance applies its own change at once
        return Long.valueOf(1).equals(reply);
    }

    private Entry entry(String rule, String key, byte[] value) {
        String[] parts = new String(value, StandardCharsets.UTF_8).split("\t", -1);
        String by = parts.length > 2 ? parts[2] : "unknown";
        Instant at = null;
        if (parts.length > 3) {
            try {
                at = Instant.ofEpochMilli(Long.parseLong(parts[3]));
            } catch (NumberFormatException e) {
                at = null;
            }
        }
        try {
            if (parts.length >= 2 && parts[0].equals("limits")) {
                List<Limit> limits = Arrays.stream(parts[1].split(",")).map(String::trim).map(Limit::parse).toList();
                return new Entry(rule, key, limits, null, by, at);
            }
            if (parts.length >= 2 && parts[0].equals("plan")) {
                List<Limit> limits = plans.get(parts[1]);
                if (limits == null) {
                    FAILURE_LOG.log(Level.WARNING, () -> "Rule '" + rule + "' key '" + key + "' is on plan '" + parts[1]
                            + "', which this instance does not know; the rule's own limits apply", null);
                }
                return new Entry(rule, key, limits == null ? List.of() : limits, parts[1], by, at);
            }
        } catch (InvalidRateLimitConfigurationException e) {
            // fall through: unreadable
        }
        FAILURE_LOG.log(Level.WARNING, () -> "Unreadable per-key limits for rule '" + rule + "' key '" + key
                + "' in Redis; the rule's own limits apply", null);
        return new Entry(rule, key, List.of(), null, by, at);
    }

    private static RateLimitStoreException failed(JedisException e) {
        return new RateLimitStoreException("Redis command failed: " + e.getMessage(), e);
    }

    private static List<Limit> emptyToNull(List<Limit> limits) {
        return limits.isEmpty() ? null : limits;
    }

    private byte[] ruleKey(String rule) {
        return utf8(prefix + ":{limits}:rule:" + rule);
    }

    private static void check(String rule, String key) {
        if (rule == null || rule.isBlank()) {
            throw new IllegalArgumentException("rule name is missing");
        }
        if (key == null) {
            throw new IllegalArgumentException("key is missing for rule '" + rule + "'");
        }
    }

    private static String who(String actor) {
        return actor == null || actor.isBlank() ? "an unknown caller" : "'" + actor + "'";
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        refresher.shutdownNow();
    }

    @Override
    public String toString() {
        return "RedisLimitStore[prefix=" + prefix + ", plans=" + plans.keySet() + "]";
    }

    /** Builds a {@link RedisLimitStore}. Not thread-safe. */
    public static final class Builder {

        private UnifiedJedis client;
        private String keyPrefix = "ratelimit";
        private final Map<String, List<Limit>> plans = new LinkedHashMap<>();
        private Duration refreshInterval = Duration.ofSeconds(1);
        private long maximumCachedKeys = 100_000;
        private Clock clock = Clock.systemUTC();
        private LimitProvider defaults;

        private Builder() {
        }

        /**
         * @param defaults answers for keys without an entry of their own in Redis (a {@code MapLimitProvider} from
         *        configuration, for example); without it, such keys have their rule's limits
         * @return this builder
         */
        public Builder defaults(LimitProvider defaults) {
            this.defaults = Objects.requireNonNull(defaults, "defaults");
            return this;
        }

        /**
         * @param client the Redis client (the bucket store's, or another); this store does not close it
         * @return this builder
         */
        public Builder client(UnifiedJedis client) {
            this.client = Objects.requireNonNull(client, "client");
            return this;
        }

        /**
         * @param prefix the first part of every key (default {@code ratelimit}), without braces
         * @return this builder
         */
        public Builder keyPrefix(String prefix) {
            if (prefix == null || prefix.isEmpty() || prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
                throw new InvalidRateLimitConfigurationException("limit store key prefix '" + prefix + "' is empty "
                        + "or contains a brace. Use text without braces, e.g. 'ratelimit'.");
            }
            this.keyPrefix = prefix;
            return this;
        }

        /**
         * @param name a plan keys can be put on
         * @param limits its limits
         * @return this builder
         */
        public Builder plan(String name, List<Limit> limits) {
            if (name == null || name.isBlank() || limits == null || limits.isEmpty()) {
                throw new InvalidRateLimitConfigurationException("limit store plan '" + name + "' needs a name and "
                        + "at least one limit, e.g. plan(\"gold\", List.of(Limit.parse(\"1000/1m\"))).");
            }
            plans.put(name, List.copyOf(limits));
            return this;
        }

        /**
         * @param interval how often the changes made elsewhere are read (default 1 s): the bound on how long
         *        another instance keeps a key's old limits
         * @return this builder
         */
        public Builder refreshInterval(Duration interval) {
            if (interval == null || interval.compareTo(Duration.ofMillis(10)) < 0) {
                throw new InvalidRateLimitConfigurationException("limit store refresh interval " + interval
                        + " is below 10ms. Use e.g. 1s.");
            }
            this.refreshInterval = interval;
            return this;
        }

        /**
         * @param maximum answers kept in this instance (default 100,000)
         * @return this builder
         */
        public Builder maximumCachedKeys(long maximum) {
            if (maximum < 1) {
                throw new InvalidRateLimitConfigurationException("limit store maximum cached keys " + maximum
                        + " must be at least 1.");
            }
            this.maximumCachedKeys = maximum;
            return this;
        }

        /**
         * For tests: the clock that stamps entries.
         *
         * @param clock the clock
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * @return the store, whose refresh thread runs from now on
         * @throws InvalidRateLimitConfigurationException when no client is given
         */
        public RedisLimitStore build() {
            if (client == null) {
                throw new InvalidRateLimitConfigurationException("limit store: no Redis client given. Pass the "
                        + "one the bucket store uses, or another, with client(...).");
            }
            return new RedisLimitStore(this);
        }
    }
}
