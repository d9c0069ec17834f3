package io.github.ratelimit.internal.web;

/**
 * Where in the request's processing a URL rule decides: before the application authenticates the caller, or after.
 *
 * <p>A rule that limits <em>attempts to authenticate</em> (password guessing per address, per claimed user name)
 * must decide before authentication, or the attempts it should limit never reach it; its key cannot be
 * {@code user}, since nobody is authenticated yet ({@code ip}, {@code basic-user}, {@code param:<name>} and
 * headers work). Rules keyed by the authenticated user decide after. The Spring Boot starter places one filter on
 * each side of Spring Security's; in {@code web.xml}, declare the filter on each side of the authentication filter
 * with the init-param {@code phase} (a filter without it applies every rule).
 */
public enum Phase {

    /** Before the application's authentication: the caller is not known yet. */
    BEFORE_AUTHENTICATION,

    /** After authentication (the default): keys may use the authenticated user. */
    AFTER_AUTHENTICATION
}
