/**
 * Spring Boot Actuator: the {@code ratelimits} endpoint (rules, store, most-rejected keys), the
 * {@code ratelimitkeys} endpoint (per-key limits and resets, through the core's {@code LimitAdmin}), and the store's
 * health.
 *
 * <p>May use the core and Spring Boot Actuator; never the other packages of the starter.
 */
@NullMarked
package io.github.ratelimit.spring.boot.actuate;

import org.jspecify.annotations.NullMarked;
