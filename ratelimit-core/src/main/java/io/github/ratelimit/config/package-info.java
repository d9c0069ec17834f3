/**
 * The {@code ratelimit.*} configuration, modelled once: {@link io.github.ratelimit.config.RateLimitConfig}, plain
 * JavaBeans whose field initializers are the defaults and whose fields carry each property's description and allowed
 * values. Every face fills this one model: Spring Boot binds it directly, the servlet filter's rules file fills it
 * through a small binder of its own; both then run the same checks. Uses nothing of the project but the API's
 * constants; no framework.
 */
@NullMarked
package io.github.ratelimit.config;

import org.jspecify.annotations.NullMarked;
