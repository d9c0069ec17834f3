package io.github.ratelimit;

import org.jspecify.annotations.Nullable;

/**
 * Thrown when a rule, limit, key expression or store setting is invalid.
 *
 * <p>It is raised while rules are built or registered (at start-up, in {@code Filter.init}, or when a
 * {@link RateLimiter} is built), never while a request is decided. It says where the bad value came from (an
 * annotated method, a property path, an init-param), the value, the constraint it breaks and what to do, as
 * separate fields ({@link #where()}, {@link #value()}, {@link #constraint()}, {@link #action()}) and together as
 * the message, for example:
 *
 * <pre>{@code
 * @RateLimit on OrderController#list(): unknown key 'usr'. Available: [basic-user, ..., user]. Register custom keys with a KeyResolver.
 * }</pre>
 */
public class InvalidRateLimitConfigurationException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    /** Where the bad value is, or {@code null}. */
    private final @Nullable String where;
    /** The bad value as written, or {@code null}. */
    private final @Nullable String value;
    /** What is wrong, naming the value. */
    private final String constraint;
    /** What to do about it, or {@code null}. */
    private final @Nullable String action;

    /**
     * @param where where the bad value is (a property path, {@code @RateLimit on Type#method()}), or {@code null}
     * @param value the bad value as written, or {@code null} when the problem is not one value
     * @param constraint what is wrong, naming the value: {@code "limits[0] '100/x' is not a limit"}
     * @param action what to do about it, or {@code null}: {@code "Write '<permits>/<period>', e.g. '5/1s'."}
     */
    public InvalidRateLimitConfigurationException(
            @Nullable String where, @Nullable String value, String constraint, @Nullable String action) {
        super(compose(where, constraint, action));
        this.where = where;
        this.value = value;
        this.constraint = constraint;
        this.action = action;
    }

    /**
     * @param message where, what value, which constraint, and what to do, in one text
     */
    public InvalidRateLimitConfigurationException(String message) {
        this(message, (Throwable) null);
    }

    /**
     * @param message where, what value, which constraint, and what to do, in one text
     * @param cause the underlying failure
     */
    public InvalidRateLimitConfigurationException(String message, @Nullable Throwable cause) {
        super(message, cause);
        this.where = null;
        this.value = null;
        this.constraint = message;
        this.action = null;
    }

    private InvalidRateLimitConfigurationException(
            @Nullable String where,
            @Nullable String value,
            String constraint,
            @Nullable String action,
            Throwable cause) {
        super(compose(where, constraint, action), cause);
        this.where = where;
        this.value = value;
        this.constraint = constraint;
        this.action = action;
    }

    private static String compose(@Nullable String where, String constraint, @Nullable String action) {
        StringBuilder sb = new StringBuilder();
        if (where != null && !where.isEmpty()) {
            sb.append(where).append(": ");
        }
        sb.append(constraint);
        if (!constraint.endsWith(".")) {
            sb.append('.');
        }
        if (action != null && !action.isEmpty()) {
            sb.append(' ').append(action);
        }
        return sb.toString();
    }

    /**
     * @param outer where the place this exception names sits, e.g. {@code /WEB-INF/ratelimit.properties} or
     *        {@code ratelimit.rules[2]}
     * @return the same error, located within {@code outer}
     */
    public InvalidRateLimitConfigurationException within(String outer) {
        if (outer == null || outer.isEmpty()) {
            return this;
        }
        String w = where == null || where.isEmpty() ? outer : outer + ": " + where;
        InvalidRateLimitConfigurationException located =
                new InvalidRateLimitConfigurationException(w, value, constraint, action, this);
        located.setStackTrace(getStackTrace());
        return located;
    }

    /** @return where the bad value is (a property path, an annotated method), or {@code null} */
    public @Nullable String where() {
        return where;
    }

    /** @return the bad value as written, or {@code null} when the problem is not one value */
    public @Nullable String value() {
        return value;
    }

    /** @return what is wrong (the whole message when the thrower gave only a message) */
    public String constraint() {
        return constraint;
    }

    /** @return what to do about it, or {@code null} when the thrower gave none */
    public @Nullable String action() {
        return action;
    }
}
