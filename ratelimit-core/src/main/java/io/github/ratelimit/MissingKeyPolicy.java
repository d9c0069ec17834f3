package io.github.ratelimit;

/**
 * What a rule does when its key cannot be resolved for a request, for example a {@code user} rule on an
 * anonymous request, or a {@code header:X-Api-Key} rule on a request without that header.
 *
 * <p>To fall back to another key instead, write it into the key expression: {@code user|ip} limits
 * authenticated requests by user and anonymous ones by client address.
 */
public enum MissingKeyPolicy {

    /** Reject the request (the default): an unidentifiable caller gets nothing, as in Spring Cloud Gateway. */
    REJECT,

    /** Do not apply this rule to the request. */
    SKIP,

    /** Counted every such request against one shared bucket of this rule. */
    SHARED
}
