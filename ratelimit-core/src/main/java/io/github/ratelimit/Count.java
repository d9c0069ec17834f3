package io.github.ratelimit;

/**
 * Which calls a rule's tokens pay for.
 */
public enum Count {

    /** Every call the rule admits takes its tokens (the default). */
    ALL,

    /**
     * Only calls that fail keep their tokens: a call still needs a token to go ahead (so at most the limit's
     * worth of attempts are under way or failed in a window), and gets it back when it ends without failing. For
     * limiting guesses: failed logins per address or per user name, wrong API keys. The entry point says how a
     * call ended ({@link Guard#completed}): the servlet filter calls a response with status 401, or a request an
     * authentication failure was recorded for, a failure; the method advisor, a call that throws.
     */
    FAILURES
}
