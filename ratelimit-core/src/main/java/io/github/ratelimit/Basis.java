package io.github.ratelimit;

/**
 * What a rule's verdict rests on.
 */
public enum Basis {

    /** The rule's bucket in the configured store. */
    BUCKET,

    /** A bucket in this JVM's memory, because the store failed ({@link StoreFailurePolicy#LOCAL_FALLBACK}). */
    FALLBACK_BUCKET,

    /** The store failed and the rule lets requests through ({@link StoreFailurePolicy#FAIL_OPEN}). */
    FAIL_OPEN,

    /** The store failed and the rule rejects requests ({@link StoreFailurePolicy#FAIL_CLOSED}). */
    FAIL_CLOSED,

    /**
     * The store answered, but the bucket kept changing under concurrent writers beyond its retry budget: the
     * request is rejected (never admitted uncounted), whatever the rule's failure policy.
     */
    CONTENTION,

    /** The key could not be resolved; see the rule's {@link MissingKeyPolicy}. */
    KEY_MISSING,

    /** A {@link Mode#SOFT} rule would have delayed the request, but the cap on waiting requests was reached. */
    WAITERS_FULL,

    /** The thread was interrupted while a {@link Mode#SOFT} delay was under way; the tokens were returned. */
    INTERRUPTED
}
