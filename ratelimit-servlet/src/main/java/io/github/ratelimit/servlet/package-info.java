/**
 * A plain Jakarta Servlet filter ({@link io.github.ratelimit.servlet.RateLimitFilter}) that a {@code web.xml}
 * registers: URL rules from a rules file, {@code @RateLimit} on servlets, headers, the 429 response, SOFT delays as
 * async waits that end when the client leaves, and the operations on live keys for the application's own admin
 * pages. Uses the core and the servlet API; no Spring (checked by {@code ServletArchitectureTest}).
 */
@NullMarked
package io.github.ratelimit.servlet;

import org.jspecify.annotations.NullMarked;
