package io.github.ratelimit.redis;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.BucketStore;
import io.github.ratelimit.support.LogText;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Redis key names: {@code <prefix>:<rule>:{<key>}} for a bucket, with {@code :log}, {@code :counter},
 * {@code :calendar}, {@code :slots} or {@code :block} after the closing brace for a sliding window, calendar quotas, a
 * concurrency rule's leases or a key's block (so never equal to a bucket's key, and on the same slot).
 *
 * <p>The braces make the client key the Redis Cluster hash tag: every rule's state for one client key (a user, an
 * address) lives on one slot, so the rules a request meets that count by the same key reach one node, in one round
 * trip ({@link SlotBatches}); different keys spread over the cluster. (In the earlier layout the tag was the rule and
 * the key together, {@code <prefix>:{<rule>:<key>}}: {@link #fromEarlierLayout} names such a key's successor, for
 * {@link KeyMigration}.)
 *
 * <p>The map from (prefix, rule, key) to a Redis key is injective, so no rule or key can reach another's bucket: in
 * the rule name {@code :} and {@code %} are percent-encoded and rule names cannot contain braces, so the segment before
 * the {@code :{} is the rule (rule {@code api} with key {@code login:x} is {@code api:{login:x}}, rule
 * {@code api:login} with key {@code x} is {@code api%3Alogin:{x}}); in the key {@code {}, {@code }} and {@code %} are
 * percent-encoded, so the first {@code }} ends it, and no caller can end the hash tag early (which would pile many
 * keys onto one slot) or open one of its own. Keys arrive at most 128 characters long (the limiter hashes longer
 * ones). A key of this layout never equals one of the earlier layout: there, {@code {} follows the prefix's colon;
 * here, the rule does.
 */
final class RedisKeys {

    /** What may follow a key's hash tag, in either layout: nothing (a bucket), or one of the other states' suffixes. */
    private static final List<String> SUFFIXES = List.of("", ":log", ":counter", ":calendar", ":slots", ":block");

    private RedisKeys() {}

    static byte[] bucketKey(String prefix, BucketStore.Key key) {
        String rule = key.rule();
        String k = key.key();
        StringBuilder sb = new StringBuilder(prefix.length() + rule.length() + k.length() + 8);
        sb.append(prefix).append(':');
        for (int i = 0; i < rule.length(); i++) {
            char c = rule.charAt(i);
            switch (c) {
                case ':' -> sb.append("%3A");
                case '%' -> sb.append("%25");
                default -> sb.append(c);
            }
        }
        sb.append(":{");
        for (int i = 0; i < k.length(); i++) {
            char c = k.charAt(i);
            switch (c) {
                case '{' -> sb.append("%7B");
                case '}' -> sb.append("%7D");
                case '%' -> sb.append("%25");
                default -> sb.append(c);
            }
        }
        return sb.append('}').toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The name a key of the earlier layout, {@code <prefix>:{<rule>:<key>}} and its suffixes, has in this one,
     * {@code <prefix>:<rule>:{<key>}}: the rule and the key keep their encoding, only the brace moves.
     *
     * @param prefix the store's key prefix
     * @param name a Redis key name
     * @return its name in this layout, or {@code null} when it is not a key of the earlier layout under this prefix
     *         (a key of this layout, the limit store's {@code {limits}} keys, anything else)
     */
    static @Nullable String fromEarlierLayout(String prefix, String name) {
        String head = prefix + ":{";
        if (!name.startsWith(head)) {
            return null;
        }
        int close = name.indexOf('}', head.length());
        int colon = name.indexOf(':', head.length());
        if (close < 0 || colon < 0 || colon > close || colon == head.length()) {
            return null;
        }
        String rule = name.substring(head.length(), colon);
        if (rule.indexOf('{') >= 0 || !SUFFIXES.contains(name.substring(close + 1))) {
            return null;
        }
        return prefix + ":" + rule + ":{" + name.substring(colon + 1, close) + "}" + name.substring(close + 1);
    }

    /**
     * @return the keys a key's state may live under, whatever its algorithm: its bucket's, log's, counters',
     *         calendar quotas', leases' and block's
     */
    static byte[][] allKeys(String prefix, BucketStore.Key key) {
        return new byte[][] {
            bucketKey(prefix, key),
            slidingKey(prefix, key, Algorithm.SLIDING_WINDOW_LOG),
            slidingKey(prefix, key, Algorithm.SLIDING_WINDOW_COUNTER),
            calendarKey(prefix, key),
            slotsKey(prefix, key),
            blockKey(prefix, key)
        };
    }

    /** The key of a concurrency rule's key's leases: the bucket key with {@code :slots} after its hash tag. */
    static byte[] slotsKey(String prefix, BucketStore.Key key) {
        return suffixed(bucketKey(prefix, key), ":slots");
    }

    /** The key of a key's block ({@link RedisBlocks}): the bucket key with {@code :block} after its hash tag. */
    static byte[] blockKey(String prefix, BucketStore.Key key) {
        return suffixed(bucketKey(prefix, key), ":block");
    }

    private static byte[] suffixed(byte[] base, String suffix) {
        byte[] tail = suffix.getBytes(StandardCharsets.US_ASCII);
        byte[] result = Arrays.copyOf(base, base.length + tail.length);
        System.arraycopy(tail, 0, result, base.length, tail.length);
        return result;
    }

    /** The key of a key's calendar quotas: the bucket key with {@code :calendar} after its hash tag. */
    static byte[] calendarKey(String prefix, BucketStore.Key key) {
        return suffixed(bucketKey(prefix, key), ":calendar");
    }

    /**
     * The key of a sliding log or counters: the bucket key with a suffix after its hash tag, so it lives on the
     * bucket's slot and never equals a bucket key (those end with the closing brace).
     */
    static byte[] slidingKey(String prefix, BucketStore.Key key, Algorithm algorithm) {
        return suffixed(bucketKey(prefix, key), algorithm == Algorithm.SLIDING_WINDOW_LOG ? ":log" : ":counter");
    }

    /** The key the clock script is routed by; it is never read or written. */
    static byte[] clockKey(String prefix) {
        return (prefix + ":{clock}").getBytes(StandardCharsets.UTF_8);
    }

    /**
     * @param key a Redis key
     * @return it quoted for a log line ({@link io.github.ratelimit.support.LogText#quote}), so no key can forge
     *         or flood a log line
     */
    static String printable(byte[] key) {
        return LogText.quote(new String(key, StandardCharsets.UTF_8));
    }
}
