package io.github.ratelimit;

/**
 * Thrown by {@link Guard#acquire(RequestContext, long)} (and raised by the entry points) for a call that counts as
 * more permits than a window of a rule could ever hold: it would be rejected forever, so waiting cannot help. Web
 * layers answer it with HTTP 413 (Content Too Large) and a body that names the rule as clients see it; no store was
 * asked and no token taken.
 */
public class CallTooLargeException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    /** The rule as clients see it. */
    private final String publicName;
    /** The permits the call counts as. */
    private final long permits;
    /** The most permits one call may count as under the rule, for its key. */
    private final long most;

    /**
     * @param message what is wrong and what to do, for logs and developers
     * @param publicName the rule as clients see it ({@link Rule#publicName()})
     * @param permits the permits the call counts as
     * @param most the most permits one call may count as under the rule's limits for its key, 0 when not even one
     *        fits (the permits overflowed)
     */
    public CallTooLargeException(String message, String publicName, long permits, long most) {
        super(message);
        this.publicName = publicName;
        this.permits = permits;
        this.most = most;
    }

    /** @return the rule as clients see it */
    public String publicName() {
        return publicName;
    }

    /** @return the permits the call counts as */
    public long permits() {
        return permits;
    }

    /** @return the most permits one call may count as under the rule, for its key */
    public long most() {
        return most;
    }

    /** @return a message a client may be shown: the rule's public name and the bound, nothing of its key */
    public String describe() {
        return "This request counts as " + permits + " under rate limit '" + publicName + "', which allows at most "
                + most + " per request.";
    }
}
