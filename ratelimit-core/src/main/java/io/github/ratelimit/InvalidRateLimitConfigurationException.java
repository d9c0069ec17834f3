package io.github.ratelimit;

/**
 * Thrown when a rule, limit, key expression or store setting is invalid.
 *
 * <p>It is raised while rules are built or registered (at start-up, in {@code Filter.init}, or when a
 * {@link RateLimiter} is built), never while a request is decided. The message names where the bad value
 * came from (an annotated method, a property path, an init-param), the value, the constraint it breaks and
 * how to fix it, for example:
 *
 * <pre>{@code
 * @RateLimit on OrderController#list(): unknown key 'usr'. Available: [basic-user, form-user[:<parameter>], global, header:<name>, ip, param:<name>, user].
 * }</pre>
 */
public class InvalidRateLimitConfigurationException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message where, what value, which constraint, and what to do
     */
    public InvalidRateLimitConfigurationException(String message) {
        super(message);
    }

    /**
     * @param message where, what value, which constraint, and what to do
     * @param cause the underlying failure
     */
    public InvalidRateLimitConfigurationException(String message, Throwable cause) {
        super(message, cause);
    }
}
