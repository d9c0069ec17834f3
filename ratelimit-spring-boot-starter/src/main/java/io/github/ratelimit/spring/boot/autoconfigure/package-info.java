/**
 * Spring Boot auto-configuration of rate limiting: the {@code ratelimit.*} properties, and one auto-configuration
 * per concern, each listed in {@code META-INF/spring/...AutoConfiguration.imports} and ordered after
 * {@link io.github.ratelimit.spring.boot.autoconfigure.RateLimitAutoConfiguration} (settings, store, limiter): the
 * {@code @RateLimit} advisor, Spring MVC, Reactor and WebFlux, the per-key limit store, metrics, Actuator. Each
 * backs off when the application defines the bean it makes, and every condition is a Spring Boot condition, so the
 * conditions report ({@code --debug}) says why each applied or not. The store is not a condition: one bean chooses it
 * from the bound settings, and says which store it made, and why, in one INFO line at start-up.
 *
 * <p>May use every package of the starter, the core, and the servlet filter; nothing else in the starter uses this
 * package, so a technology's package never depends on how it is wired.
 */
@NullMarked
package io.github.ratelimit.spring.boot.autoconfigure;

import org.jspecify.annotations.NullMarked;
