package io.github.ratelimit.servlet;

import io.github.ratelimit.support.LogText;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * Who may call {@link RateLimitAdminServlet}, and who sees the keys of its most-rejected list, from its init-params:
 * {@code require-authentication} ({@code true} by default), {@code role} (default {@value #DEFAULT_ROLE}; {@code **}
 * for any authenticated caller, as the Servlet specification names that role), {@code show-values} ({@code never} by
 * default, {@code when-authorized} or {@code always}) and {@code show-values-roles} (for {@code when-authorized}: the
 * roles that see keys, comma-separated; none for any authenticated caller). The last two mean what the starter's
 * {@code management.endpoint.ratelimits.show-values} and {@code roles} mean. Immutable.
 *
 * @param requireAuthentication whether a caller the container has not authenticated is refused
 * @param role the role a caller must be in, or {@code null} for any authenticated caller (or when authentication is
 *     not required)
 * @param showValues when keys are shown
 * @param showValuesRoles the roles that see keys with {@link ShowValues#WHEN_AUTHORIZED}; empty for any
 *     authenticated caller
 */
record AdminAccess(
        boolean requireAuthentication, @Nullable String role, ShowValues showValues, List<String> showValuesRoles) {

    /** The role a caller must be in when init-param {@code role} is not given. */
    static final String DEFAULT_ROLE = "ratelimit-admin";

    /** The value of init-param {@code role} that lets in any authenticated caller. */
    static final String ANY_AUTHENTICATED = "**";

    /** What a key reads when values are not shown, as the starter's {@code ratelimits} endpoint shows it. */
    static final String MASK = "******";

    /** The access with no init-param given. */
    static final AdminAccess DEFAULTS = new AdminAccess(true, DEFAULT_ROLE, ShowValues.NEVER, List.of());

    /** When the keys of the most-rejected list are shown. */
    enum ShowValues {
        /** Never: each key reads {@value #MASK}. */
        NEVER,
        /** To an authenticated caller in one of the roles, or any authenticated caller without roles. */
        WHEN_AUTHORIZED,
        /** To every caller the servlet answers. */
        ALWAYS
    }

    AdminAccess {
        showValuesRoles = List.copyOf(showValuesRoles);
    }

    /**
     * @param initParameters the servlet's init-params, by name ({@code null} when not given)
     * @return the access they configure
     * @throws IllegalArgumentException when one has a value it cannot take, naming it, the value and how to fix it
     */
    static AdminAccess of(UnaryOperator<@Nullable String> initParameters) {
        String require = initParameters.apply("require-authentication");
        boolean requireAuthentication = true;
        if (require != null) {
            String value = require.trim().toLowerCase(Locale.ROOT);
            if (!value.equals("true") && !value.equals("false")) {
                throw new IllegalArgumentException(
                        "init-param require-authentication = " + LogText.quote(require) + " is neither true nor false");
            }
            requireAuthentication = value.equals("true");
        }
        String roleParam = initParameters.apply("role");
        String role = DEFAULT_ROLE;
        if (roleParam != null) {
            if (roleParam.isBlank()) {
                throw new IllegalArgumentException("init-param role is blank: name the role a caller must be in "
                        + "(default " + DEFAULT_ROLE + "), or " + ANY_AUTHENTICATED
                        + " for any caller the container authenticated");
            }
            if (!requireAuthentication) {
                throw new IllegalArgumentException("init-param role = " + LogText.quote(roleParam)
                        + " cannot be combined with require-authentication = false, which serves callers the "
                        + "container has not authenticated (and so are in no role): remove one of them");
            }
            role = roleParam.trim().equals(ANY_AUTHENTICATED) ? null : roleParam.trim();
        }
        String show = initParameters.apply("show-values");
        ShowValues showValues = ShowValues.NEVER;
        if (show != null) {
            try {
                showValues =
                        ShowValues.valueOf(show.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("init-param show-values = " + LogText.quote(show)
                        + " is not one of never, when-authorized, always (default never: keys read " + MASK + ")");
            }
        }
        String roles = initParameters.apply("show-values-roles");
        List<String> showValuesRoles = roles == null
                ? List.of()
                : Arrays.stream(roles.split(","))
                        .map(String::trim)
                        .filter(r -> !r.isEmpty())
                        .toList();
        if (!showValuesRoles.isEmpty() && showValues != ShowValues.WHEN_AUTHORIZED) {
            throw new IllegalArgumentException("init-param show-values-roles = " + LogText.quote(roles)
                    + " is read only with show-values = when-authorized, but show-values is "
                    + showValues.name().toLowerCase(Locale.ROOT).replace('_', '-')
                    + ": set show-values to when-authorized, or remove show-values-roles");
        }
        return new AdminAccess(requireAuthentication, requireAuthentication ? role : null, showValues, showValuesRoles);
    }

    /**
     * @param request a call
     * @return why it is refused (with 403), or {@code null} when it may be answered
     */
    @Nullable
    String refusal(HttpServletRequest request) {
        if (!requireAuthentication) {
            return null;
        }
        if (request.getUserPrincipal() == null) {
            return "the rate-limit admin answers authenticated callers only: protect its mapping "
                    + "with a security-constraint (or set its init-param require-authentication=false)";
        }
        if (role != null && !request.isUserInRole(role)) {
            return "the rate-limit admin answers callers in role '" + role + "' only (its init-param role; "
                    + ANY_AUTHENTICATED + " for any authenticated caller)";
        }
        return null;
    }

    /**
     * @param request a call the servlet answers
     * @return whether it is shown the keys of the most-rejected list
     */
    boolean showsKeys(HttpServletRequest request) {
        return switch (showValues) {
            case NEVER -> false;
            case ALWAYS -> true;
            case WHEN_AUTHORIZED ->
                request.getUserPrincipal() != null
                        && (showValuesRoles.isEmpty()
                                || showValuesRoles.stream().anyMatch(request::isUserInRole));
        };
    }
}
