/**
 * The engine, not part of the API: the limiter and its guards ({@code DefaultRateLimiter}, {@code DefaultGuard}),
 * compiled rules, key expressions, plan names and the scheduler of SOFT delays.
 *
 * <p>The project's own modules may use it; the samples, which show what users write, never do, and no public
 * signature outside {@code internal} exposes its types (both checked by {@code ArchitectureTest}).
 */
package io.github.ratelimit.internal;
