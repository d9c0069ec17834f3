package io.github.ratelimit.store;

import java.util.Objects;

/**
 * Identifies one bucket: a rule and a key under it.
 *
 * @param rule the rule's name (printable ASCII, at most 200 characters, no braces)
 * @param key the resolved key, at most 128 characters (longer keys are hashed before they get here); may
 *        hold any characters, including braces, so stores must escape it where that matters
 */
public record BucketKey(String rule, String key) {

    /**
     * @throws NullPointerException when a component is null
     */
    public BucketKey {
        Objects.requireNonNull(rule, "rule");
        Objects.requireNonNull(key, "key");
    }
}
