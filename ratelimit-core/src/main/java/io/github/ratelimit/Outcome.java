package io.github.ratelimit;

/**
 * The outcome of a decision, from the least to the most restrictive. When several rules decide on one
 * request, the most restrictive outcome is the request's.
 */
public enum Outcome {

    /** The request may go on now. */
    ALLOWED,

    /** A {@link Mode#SHADOW} rule would have rejected the request; it goes on, and the event is reported. */
    SHADOW_REJECTED,

    /** A {@link Mode#SOFT} rule reserved tokens; the request goes on after the decision's delay. */
    DELAYED,

    /** The request must not go on. */
    REJECTED;

    /**
     * @return whether the request may go on (possibly after a delay)
     */
    public boolean permits() {
        return this != REJECTED;
    }
}
