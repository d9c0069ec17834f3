package io.github.ratelimit.store;

import java.nio.charset.StandardCharsets;

/**
 * Redis key names: {@code <prefix>:{<rule>:<key>}}. The braces make the whole bucket id the Redis Cluster hash
 * tag, so a bucket lives on one slot, and different keys of one rule spread over the cluster. The key part is
 * user input, so {@code {}, {@code }} and {@code %} in it are percent-encoded: no caller can end the tag early
 * (which would pile many buckets onto one slot) or open a tag of its own. Keys arrive at most 128 characters
 * long (the limiter hashes longer ones), and rule names cannot contain braces.
 */
final class RedisKeys {

    private RedisKeys() {
    }

    static byte[] bucketKey(String prefix, BucketKey key) {
        StringBuilder sb = new StringBuilder(prefix.length() + key.rule().length() + key.key().length() + 8);
        sb.append(prefix).append(":{").append(key.rule()).append(':');
        String k = key.key();
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

    /** The key the clock script is routed by; it is never read or written. */
    static byte[] clockKey(String prefix) {
        return (prefix + ":{clock}").getBytes(StandardCharsets.UTF_8);
    }
}
