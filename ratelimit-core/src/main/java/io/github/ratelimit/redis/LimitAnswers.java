package io.github.ratelimit.redis;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.Limit;
import io.github.ratelimit.LimitProvider;
import io.github.ratelimit.Rule;
import io.github.ratelimit.internal.RuleChanges;
import io.github.ratelimit.support.LogText;
import io.github.ratelimit.support.RateLimitedLog;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.resps.StreamEntry;

/**
 * What one instance knows of the per-key limits in Redis: the answers it read (a bounded cache, no expiry), kept true
 * by following the stream of changes (and by applying its own changes at once), and the limiters to tell when an
 * answer may have changed. Also writes changes, entry and stream together, and replaces keys of another type. The
 * Redis half of {@link RedisLimitProvider}; thread-safe.
 */
final class LimitAnswers {

    private static final RateLimitedLog FAILURE_LOG = new RateLimitedLog(10_000_000_000L);
    private static final RateLimitedLog GARBAGE_LOG = new RateLimitedLog(10_000_000_000L);

    private static final LuaScript REPAIR_STREAM = new LuaScript(LimitScripts.REPAIR_STREAM_SOURCE);
    private static final LuaScript CHANGE = new LuaScript(LimitScripts.CHANGE_SOURCE);

    /** Changes read from the stream per refresh; when there are more, every answer is forgotten instead. */
    static final int CHANGES_PER_REFRESH = 1_000;

    private record CacheKey(String rule, String key) {}

    /** A rule's stored change as read, or none. */
    private record RuleAnswer(LimitEntries.@Nullable RuleEntry entry) {}

    /** A cached answer: the limits, or none for the rule's own. */
    private record Answer(@Nullable List<Limit> limits) {
        static final Answer NONE = new Answer(null);
    }

    private final UnifiedJedis jedis;
    private final String prefix;
    private final String stream;
    private final Map<String, List<Limit>> plans;
    private final AtomicLong repairs;
    private final Cache<CacheKey, Answer> answers;
    /** The rules' stored changes read so far, by rule name: only rules the limiters and the admin name. */
    private final Map<String, RuleAnswer> ruleAnswers = new ConcurrentHashMap<>();
    /** The plans' stored changes read so far, by plan name: only plans this store was built with. */
    private final Map<String, RuleAnswer> planAnswers = new ConcurrentHashMap<>();

    private final List<LimitProvider.Changes> listeners = new CopyOnWriteArrayList<>();
    /** Bumped on every invalidation, so a read that raced a change does not cache the old answer. */
    private final AtomicLong generation = new AtomicLong();
    /**
     * The last change read from the stream, with its fields: a replaced stream (a repair, by any instance) may give
     * another entry that very ID, so the position is checked by its content too. {@code null} until the first refresh.
     */
    private volatile @Nullable Position lastChange;

    /** A position in the stream: {@code 0-0} (and no fields) before the first entry. */
    private record Position(String id, Map<String, String> fields) {
        static final Position START = new Position("0-0", Map.of());

        static Position of(StreamEntry entry) {
            return new Position(entry.getID().toString(), entry.getFields());
        }
    }
    /**
     * Reads and refreshes that failed and that no successful refresh has settled yet; above 0, Redis is taken as
     * away. A counter, not a flag: a read failing while a refresh succeeds stays for the next refresh to settle.
     * Only failures to reach Redis count: an answer Redis gave (a key of the wrong type) is garbage of one rule, which
     * must not make every other rule's keys go without their limits.
     */
    private final AtomicInteger failures = new AtomicInteger();
    /** Refreshes run to their end, whatever they found; for tests that must not race the scheduled one. */
    private final AtomicLong refreshes = new AtomicLong();

    LimitAnswers(
            UnifiedJedis jedis,
            String prefix,
            Map<String, List<Limit>> plans,
            long maximumCachedKeys,
            AtomicLong repairs) {
        this.jedis = jedis;
        this.prefix = prefix;
        this.stream = prefix + ":{limits}:changes";
        this.plans = plans;
        this.repairs = repairs;
        this.answers = Caffeine.newBuilder().maximumSize(maximumCachedKeys).build();
    }

    /** @return the Redis key of a rule's hash of entries */
    byte[] ruleKey(String rule) {
        return utf8(prefix + ":{limits}:rule:" + rule);
    }

    /** @return the Redis key of the hash of rules changed at run time (field: the rule's name) */
    byte[] rulesKey() {
        return utf8(prefix + ":{limits}:rules");
    }

    /**
     * The rule's change as stored in Redis (read once, then kept until the stream reports it changed), or
     * {@code null} for none: also when the stored change cannot serve (garbage: logged, the rule as configured
     * decides) or Redis cannot be read now.
     *
     * @param rule the rule as built
     * @return the rule with its stored limits and mode, checked as at start-up
     */
    @Nullable
    Rule changedRule(Rule rule) {
        LimitEntries.RuleEntry entry = ruleEntry(rule.name());
        if (entry == null) {
            return null;
        }
        String problem = entry.problem();
        if (problem == null) {
            try {
                return RuleChanges.changed(rule, entry.limits(), entry.mode());
            } catch (IllegalArgumentException e) {
                problem = "the rule cannot take it: " + e.getMessage();
            }
        }
        String why = problem;
        GARBAGE_LOG.log(
                Level.WARNING,
                () -> "The change of rule '" + rule.name() + "' in Redis is ignored, the rule as configured decides: "
                        + why,
                null);
        return null;
    }

    /** @return the Redis key of the hash of plans changed at run time (field: the plan's name) */
    byte[] plansKey() {
        return utf8(prefix + ":{limits}:plans");
    }

    /** @return the plans this store was built with, each with its limits now: as changed at run time, if they are */
    Map<String, List<Limit>> plans() {
        if (planAnswers.isEmpty() && plans.isEmpty()) {
            return plans;
        }
        Map<String, List<Limit>> now = new java.util.HashMap<>(plans);
        for (String plan : plans.keySet()) {
            List<Limit> changed = changedPlan(plan);
            if (changed != null) {
                now.put(plan, changed);
            }
        }
        return Map.copyOf(now);
    }

    /**
     * The plan's change as stored in Redis (read once, then kept until the stream reports it changed), or
     * {@code null} for none: also when the stored change cannot serve (garbage: logged, the plan as configured
     * decides), Redis cannot be read now, or the plan is not one this store was built with.
     *
     * @param plan the plan's name
     * @return its limits from now on
     */
    @Nullable
    List<Limit> changedPlan(String plan) {
        LimitEntries.RuleEntry entry = planEntry(plan);
        if (entry == null) {
            return null;
        }
        String problem = entry.problem();
        if (problem == null && entry.limits() != null) {
            return entry.limits();
        }
        GARBAGE_LOG.log(
                Level.WARNING,
                () -> "The change of plan '" + plan + "' in Redis is ignored, the plan as configured decides: "
                        + problem,
                null);
        return null;
    }

    /**
     * @param plan a plan's name
     * @return its stored change, as read (from this instance's copy), or {@code null} for none, for a plan this store
     *         was not built with, or when Redis cannot be read now
     */
    LimitEntries.@Nullable RuleEntry planEntry(String plan) {
        return plans.containsKey(plan) ? stored(planAnswers, plansKey(), plan, true) : null;
    }

    /**
     * @param rule a rule's name
     * @return its stored change, as read (from this instance's copy), or {@code null} for none or when Redis cannot
     *         be read now
     */
    LimitEntries.@Nullable RuleEntry ruleEntry(String rule) {
        return stored(ruleAnswers, rulesKey(), rule, false);
    }

    /** @return the stored change of a rule or a plan, from the cache or read now */
    private LimitEntries.@Nullable RuleEntry stored(
            Map<String, RuleAnswer> cache, byte[] hash, String rule, boolean plan) {
        RuleAnswer cached = cache.get(rule);
        if (cached != null) {
            return cached.entry();
        }
        if (failures.get() > 0) {
            return null; // Redis failed since the last refresh that succeeded: the refresh reads it again
        }
        long seen = generation.get();
        RuleAnswer answer;
        try {
            answer = new RuleAnswer(readStored(hash, rule, plan));
        } catch (JedisException e) {
            if (!wrongType(e)) {
                failures.incrementAndGet();
                FAILURE_LOG.log(
                        Level.WARNING,
                        () -> "Could not read the change of " + (plan ? "plan '" : "rule '") + rule
                                + "' from Redis; it decides as configured until Redis answers: " + e,
                        null);
                return null;
            }
            if (plan) {
                garbagePlans();
            } else {
                garbageRules();
            }
            answer = new RuleAnswer(null);
        }
        if (generation.get() == seen) {
            cache.put(rule, answer);
            if (generation.get() != seen) {
                cache.remove(rule);
            }
        }
        return answer.entry();
    }

    /** @return the stored change, read now; one too long to be one is garbage, not read whole */
    private LimitEntries.@Nullable RuleEntry readStored(byte[] hash, String name, boolean plan) {
        byte[] field = utf8(name);
        long length = jedis.hstrlen(hash, field);
        if (length == 0) {
            return null;
        }
        if (length > LimitEntries.MAX_RULE_VALUE) {
            return LimitEntries.RuleEntry.unreadable(
                    null, null, "the stored value has " + length + " bytes, more than any change takes");
        }
        byte[] value = jedis.hget(hash, field);
        return value == null ? null : plan ? LimitEntries.readPlan(value) : LimitEntries.readRule(value);
    }

    /** Warns (at most every 10 s) that the hash of changed rules holds another type. */
    void garbageRules() {
        GARBAGE_LOG.log(
                Level.WARNING,
                () -> "The changed rules in Redis, " + LogText.escape(prefix) + ":{limits}:rules, hold another type "
                        + "than a hash: ignored (every rule decides as configured); the next change of a rule "
                        + "replaces them",
                null);
    }

    /** Warns (at most every 10 s) that the hash of changed plans holds another type. */
    void garbagePlans() {
        GARBAGE_LOG.log(
                Level.WARNING,
                () -> "The changed plans in Redis, " + LogText.escape(prefix) + ":{limits}:plans, hold another type "
                        + "than a hash: ignored (every plan decides as configured); the next change of a plan "
                        + "replaces them",
                null);
    }

    /** @return the Redis key of the stream of changes */
    byte[] stream() {
        return utf8(stream);
    }

    void onChange(LimitProvider.Changes changes) {
        listeners.add(Objects.requireNonNull(changes, "changes"));
    }

    /** The limits of the key's entry in Redis (cached), or {@code null} for none (or none usable, or readable now). */
    @Nullable
    List<Limit> limitsFor(Rule rule, String key) {
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
        Answer answer;
        try {
            byte[] value = jedis.hget(ruleKey(rule.name()), utf8(key));
            answer = value == null
                    ? Answer.NONE
                    : answer(rule, LimitEntries.read(rule.name(), key, LimitAdmin.address(key), value, plans()));
        } catch (JedisException e) {
            if (!wrongType(e)) {
                failures.incrementAndGet();
                FAILURE_LOG.log(
                        Level.WARNING,
                        () -> "Could not read the limits of rule '" + rule.name()
                                + "' from Redis; the rule's own limits apply to keys not read before: " + e,
                        null);
                return null;
            }
            garbage(rule.name());
            answer = Answer.NONE;
        }
        if (generation.get() == seen) {
            answers.put(cacheKey, answer);
            if (generation.get() != seen) {
                // A refresh forgot answers between the check and the put: this one may be among them.
                answers.invalidate(cacheKey);
            }
        }
        return answer.limits();
    }

    /** The answer an entry gives: its limits, or none when it has a problem or the rule cannot use them. */
    private static Answer answer(Rule rule, RedisLimitProvider.Entry entry) {
        String problem = entry.problem();
        if (problem == null) {
            try {
                rule.withLimits(entry.limits());
                return new Answer(entry.limits());
            } catch (InvalidRateLimitConfigurationException e) {
                problem = "the rule cannot use its limits " + entry.limits() + ": " + e.constraint();
            }
        }
        String why = problem;
        GARBAGE_LOG.log(
                Level.WARNING,
                () -> "Per-key limits of rule '" + rule.name() + "' key " + LogText.quote(entry.key())
                        + " in Redis are ignored, the rule's own apply: " + why,
                null);
        return Answer.NONE;
    }

    /**
     * Reads the changes made since the last refresh and forgets the answers they change; replaces a stream of another
     * type. Run by the refresh thread; synchronized so a test may run it too.
     */
    synchronized void refresh() {
        try {
            refreshOnce();
        } finally {
            refreshes.incrementAndGet();
        }
    }

    /** @return refreshes run to their end since this was built */
    long refreshes() {
        return refreshes.get();
    }

    private void refreshOnce() {
        // Failures seen now are the ones a successful refresh settles; a read failing meanwhile counts for the next.
        int failed = failures.get();
        try {
            boolean forgetAll = readChanges() || failed > 0;
            failures.addAndGet(-failed);
            if (forgetAll) {
                forgetAll();
            }
        } catch (JedisException | IllegalArgumentException e) {
            // WRONGTYPE, or an ID the client cannot read (a part of 2^63 or more: NumberFormatException): the stream
            // cannot serve, and is replaced. Anything else is Redis being away.
            if (!(e instanceof JedisException j) || wrongType(j)) {
                repairStream(failed);
                return;
            }
            failures.incrementAndGet();
            FAILURE_LOG.log(
                    Level.WARNING,
                    () -> "Could not read the changes of per-key limits from Redis; keeping the "
                            + "last known limits: " + e,
                    null);
        }
    }

    /**
     * @return whether every answer must be forgotten: the first read, a stream trimmed or started again, or more
     *         changes than one refresh reads ({@value #CHANGES_PER_REFRESH}; the position then moves to the newest)
     */
    private boolean readChanges() {
        Position at = lastChange;
        if (at == null) {
            lastChange = newest();
            // Answers read before this first position (a change may have come in between) are not trusted.
            return true;
        }
        boolean forgetAll = false;
        if (!at.equals(Position.START)) {
            // Still there as read? If not, the stream was trimmed past it or replaced (whose IDs may go back, even
            // to this very ID): changes may have been missed, so forget all and read what the stream holds.
            List<StreamEntry> same = jedis.xrange(stream, at.id(), at.id(), 1);
            if (same.isEmpty() || !same.get(0).getFields().equals(at.fields())) {
                forgetAll = true;
                at = Position.START;
            }
        }
        List<StreamEntry> changes =
                jedis.xrange(stream, at.equals(Position.START) ? "-" : "(" + at.id(), "+", CHANGES_PER_REFRESH);
        if (changes.size() == CHANGES_PER_REFRESH) {
            // Perhaps more than one refresh reads: rather than answer from stale limits until later refreshes catch
            // up (or never, once the stream is trimmed past them), forget every answer and go on from the newest.
            // Taken before the answers are forgotten, so a change after it is read by the next refresh.
            lastChange = newest();
            return true;
        }
        for (StreamEntry change : changes) {
            Map<String, String> fields = change.getFields();
            if ("repair".equals(fields.get("op"))) {
                forgetAll = true; // the stream, or a rule's hash, was replaced: changes may have been lost with it
            } else if ("rule".equals(fields.get("op"))) {
                forgetRule(fields.get("rule"));
            } else if ("plan".equals(fields.get("op"))) {
                forgetPlan(fields.get("rule")); // the plan's name, in the field every change record has
            } else {
                forget(fields.get("rule"), fields.get("key"));
            }
            at = Position.of(change);
        }
        lastChange = at;
        return forgetAll;
    }

    /** @return the newest change, or the start for none */
    private Position newest() {
        List<StreamEntry> newest = jedis.xrevrange(stream, "+", "-", 1);
        return newest.isEmpty() ? Position.START : Position.of(newest.get(0));
    }

    /**
     * The stream cannot serve (another type, or IDs clients cannot read): replace it (unless another instance has:
     * then it serves already, from its start), read it from its start, forget all.
     */
    private void repairStream(int failed) {
        try {
            Object replaced = REPAIR_STREAM.run(
                    jedis,
                    List.of(stream()),
                    List.of(utf8(Integer.toString(RedisLimitProvider.MAX_CHANGES)), utf8(token())));
            if (Long.valueOf(1).equals(replaced)) {
                repairs.incrementAndGet();
                GARBAGE_LOG.log(
                        Level.WARNING,
                        () -> "The stream of changes of per-key limits, " + LogText.quote(stream)
                                + ", held another type or IDs of 2^63 or more; it was replaced, and every instance reads "
                                + "per-key limits again",
                        null);
            }
            lastChange = Position.START;
            failures.addAndGet(-failed);
            forgetAll();
        } catch (JedisException e) {
            failures.incrementAndGet();
            FAILURE_LOG.log(
                    Level.WARNING, () -> "Could not replace the stream of changes of per-key limits: " + e, null);
        }
    }

    /**
     * Writes a change (the entry and its record in the stream, or neither, replacing keys of another type) and forgets
     * what it changes here: this instance applies its own changes at once.
     *
     * @param op {@code set} or {@code del}
     * @param value the entry's value, for {@code set}
     * @param by who makes it, without control characters
     * @return whether the key's entry changed (a {@code del} of no entry does not)
     * @throws JedisException when Redis fails
     */
    boolean change(String op, String rule, byte[] field, String value, String by) {
        List<?> result = write(op, op, ruleKey(rule), rule, field, value, by);
        if ((Long) result.get(1) == 0) {
            forget(rule, new String(field, StandardCharsets.UTF_8)); // not UTF-8: no key, no answer of the limiter
        }
        return Long.valueOf(1).equals(result.get(0));
    }

    /**
     * Writes a change of a rule's own limits or mode (its field in the hash of changed rules, and its record in the
     * stream, or neither) and applies it here at once.
     *
     * @param op {@code set} or {@code del}
     * @param value the stored value, for {@code set}
     * @return whether the rule's stored change changed (a {@code del} of none does not)
     * @throws JedisException when Redis fails
     */
    boolean changeRule(String op, String rule, String value, String by) {
        List<?> result = write(op, "rule", rulesKey(), rule, utf8(rule), value, by);
        if ((Long) result.get(1) == 0) {
            forgetRule(rule);
        }
        return Long.valueOf(1).equals(result.get(0));
    }

    /**
     * Writes a change of a plan's limits (its field in the hash of changed plans, and its record in the stream, or
     * neither) and applies it here at once.
     *
     * @param op {@code set} or {@code del}
     * @param value the stored value, for {@code set}
     * @return whether the plan's stored change changed (a {@code del} of none does not)
     * @throws JedisException when Redis fails
     */
    boolean changePlan(String op, String plan, String value, String by) {
        List<?> result = write(op, "plan", plansKey(), plan, utf8(plan), value, by);
        if ((Long) result.get(1) == 0) {
            forgetPlan(plan);
        }
        return Long.valueOf(1).equals(result.get(0));
    }

    private List<?> write(String op, String streamOp, byte[] hash, String rule, byte[] field, String value, String by) {
        List<byte[]> args = List.of(
                utf8(op),
                field,
                utf8(value),
                utf8(rule),
                utf8(by),
                utf8(Integer.toString(RedisLimitProvider.MAX_CHANGES)),
                utf8(token()),
                utf8(streamOp));
        List<?> result = (List<?>) CHANGE.run(jedis, List.of(hash, stream()), args);
        long repaired = (Long) result.get(1);
        if (repaired > 0) {
            repairs.addAndGet(repaired);
            GARBAGE_LOG.log(
                    Level.WARNING,
                    () -> "A change of rule " + LogText.quote(rule) + " replaced " + repaired
                            + " key(s) of per-key limits that held another type",
                    null);
            forgetAll(); // what this instance knew may have come from what the garbage replaced
        }
        return result;
    }

    /** @return a random token for a stream entry: what tells it from another entry given the same ID */
    private static String token() {
        return Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Forgets one answer, here and in every limiter. */
    void forget(@Nullable String rule, @Nullable String key) {
        if (rule == null || key == null) {
            return;
        }
        generation.incrementAndGet();
        answers.invalidate(new CacheKey(rule, key));
        for (LimitProvider.Changes l : listeners) {
            l.keyChanged(rule, key);
        }
    }

    /** Forgets what this instance read of a rule's own change, and tells every limiter to ask again. */
    void forgetRule(@Nullable String rule) {
        if (rule == null) {
            return;
        }
        generation.incrementAndGet();
        ruleAnswers.remove(rule);
        for (LimitProvider.Changes l : listeners) {
            l.ruleChanged(rule);
        }
    }

    /**
     * Forgets what this instance read of a plan's change and every key's answer (any may be on the plan), and tells
     * every limiter.
     */
    void forgetPlan(@Nullable String plan) {
        if (plan == null) {
            return;
        }
        generation.incrementAndGet();
        planAnswers.remove(plan);
        answers.invalidateAll();
        for (LimitProvider.Changes l : listeners) {
            l.planChanged(plan);
        }
    }

    /** Forgets every answer, here and in every limiter. */
    void forgetAll() {
        generation.incrementAndGet();
        answers.invalidateAll();
        ruleAnswers.clear();
        planAnswers.clear();
        for (LimitProvider.Changes l : listeners) {
            l.allChanged();
        }
    }

    /** @return whether Redis answered that a key holds another type than the command works on */
    static boolean wrongType(JedisException e) {
        return e instanceof JedisDataException
                && e.getMessage() != null
                && e.getMessage().startsWith("WRONGTYPE");
    }

    /** Warns (at most every 10 s) that a rule's hash holds another type. */
    /**
     * Removes entries stored under fields no key is and no address could carry in a URL (over
     * {@value LimitAdmin#MAX_FIELD} bytes), which the limiter never reads: a listing that finds them repairs them.
     *
     * @param rule the rule's name
     * @param fields the fields
     * @throws JedisException when Redis fails
     */
    void removeUnaddressable(String rule, List<byte[]> fields) {
        long removed = jedis.hdel(ruleKey(rule), fields.toArray(new byte[0][]));
        repairs.addAndGet(removed);
        GARBAGE_LOG.log(
                Level.WARNING,
                () -> "Removed " + removed + " per-key entries of rule " + LogText.quote(rule)
                        + " stored under fields of over " + LimitAdmin.MAX_FIELD + " bytes, which no key is",
                null);
    }

    void garbage(String rule) {
        GARBAGE_LOG.log(
                Level.WARNING,
                () -> "The per-key limits of rule " + LogText.quote(rule) + " in Redis, "
                        + LogText.escape(prefix) + ":{limits}:rule:" + LogText.escape(rule)
                        + ", hold another type than a "
                        + "hash: ignored (the rule's own limits apply); the next change of the rule replaces them",
                null);
    }
}
