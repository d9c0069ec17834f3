/**
 * Rate limiting for Java applications: what users touch. Build a {@link io.github.ratelimit.RateLimiter}, describe
 * {@link io.github.ratelimit.Rule}s (or annotate methods with {@link io.github.ratelimit.RateLimit}), and ask a
 * {@link io.github.ratelimit.Guard} for a {@link io.github.ratelimit.Decision} per call; the response's headers come
 * from {@link io.github.ratelimit.RateLimitHeaders}.
 *
 * <p>Framework-free: no Spring, no servlet API. Uses {@code key} and {@code store}, and {@code internal} for the
 * engine behind the builders' factory methods and for shared helpers (docs/architecture.md).
 */
@NullMarked
package io.github.ratelimit;

import org.jspecify.annotations.NullMarked;
