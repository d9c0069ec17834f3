package io.github.ratelimit.redis;

import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.support.LogText;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * Reads of per-key entries for operators ({@link RedisLimitProvider#get}, {@link RedisLimitProvider#list}): straight from
 * Redis, never cached, a rule's hash of another type read as empty. Takes stored keys as they are (the caller hashes
 * a long key first, or not, for an entry an older version stored under the key in full). Thread-safe.
 */
final class LimitReads {

    private final UnifiedJedis jedis;
    private final LimitAnswers answers;

    LimitReads(UnifiedJedis jedis, LimitAnswers answers) {
        this.jedis = jedis;
        this.answers = answers;
    }

    /**
     * @param rule the rule's name
     * @param field the field exactly as stored
     * @return its entry
     * @throws RateLimitStoreException when Redis fails
     */
    Optional<RedisLimitProvider.Entry> get(String rule, byte[] field) {
        try {
            byte[] value = jedis.hget(answers.ruleKey(rule), field);
            return value == null ? Optional.empty() : Optional.of(read(rule, field, value));
        } catch (JedisException e) {
            if (LimitAnswers.wrongType(e)) {
                answers.garbage(rule);
                return Optional.empty();
            }
            throw RedisLimitProvider.failed(e);
        }
    }

    /**
     * @param rule the rule's name
     * @param cursor {@code null} for the first page, else the previous page's {@code next}
     * @param count about how many entries per page, 1 to 1,000
     * @return the page, without entries under fields of over {@value LimitAdmin#MAX_FIELD} bytes: it removes those
     * @throws IllegalArgumentException when the count is out of range or the cursor is not one a page gave
     * @throws RateLimitStoreException when Redis fails
     */
    RedisLimitProvider.Page list(String rule, String cursor, int count) {
        if (count < 1 || count > 1_000) {
            throw new IllegalArgumentException("count " + count + " is out of range; use 1 to 1000");
        }
        String from = cursor == null ? ScanParams.SCAN_POINTER_START : cursor;
        if (!from.matches("[0-9]{1,20}") || new BigInteger(from).bitLength() > 64) {
            throw new IllegalArgumentException("cursor " + LogText.quote(cursor) + " is not one a page returned (an "
                    + "unsigned 64-bit number); start again without a cursor");
        }
        try {
            ScanResult<Map.Entry<byte[], byte[]>> page = jedis.hscan(
                    answers.ruleKey(rule), from.getBytes(StandardCharsets.UTF_8), new ScanParams().count(count));
            List<RedisLimitProvider.Entry> entries = new ArrayList<>();
            List<byte[]> unaddressable = new ArrayList<>();
            for (Map.Entry<byte[], byte[]> e : page.getResult()) {
                if (e.getKey().length > LimitAdmin.MAX_FIELD) {
                    unaddressable.add(e.getKey());
                } else {
                    entries.add(read(rule, e.getKey(), e.getValue()));
                }
            }
            if (!unaddressable.isEmpty()) {
                answers.removeUnaddressable(rule, unaddressable);
            }
            return new RedisLimitProvider.Page(entries, page.isCompleteIteration() ? null : page.getCursor());
        } catch (JedisException e) {
            if (LimitAnswers.wrongType(e)) {
                answers.garbage(rule);
                return new RedisLimitProvider.Page(List.of(), null);
            }
            throw RedisLimitProvider.failed(e);
        }
    }

    /** @return the entry stored under the field, shown as text and addressed by its bytes */
    private RedisLimitProvider.Entry read(String rule, byte[] field, byte[] value) {
        return LimitEntries.read(rule, LimitAdmin.shown(field), LimitAdmin.address(field), value, answers.plans());
    }
}
