/** The Spring WebFlux sample: the WebFilter, {@code @RateLimit} on Mono and Flux methods, no blocking of event loops. See the README for how to run it. */
package io.github.ratelimit.samples.webflux;
