/**
 * The {@code ratelimit.*} settings model, one for the servlet filter's rules file and for Spring Boot's properties:
 * defaults, checks with messages that name the property, unknown names refused with the nearest known one; Redis
 * settings and the stores they build; {@code @RateLimit} annotations read into rules. Not part of the API.
 */
package io.github.ratelimit.internal.config;
