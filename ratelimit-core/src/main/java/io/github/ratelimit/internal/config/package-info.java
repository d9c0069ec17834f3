/**
 * Reading the {@code ratelimit.*} configuration model ({@code io.github.ratelimit.config}) into settings, one reader
 * for the servlet filter's rules file and for Spring Boot's properties: the catalog of properties derived from the
 * model, the rules file's binder, every check with messages that name the property, unknown names refused with the
 * nearest known one; Redis settings and the stores they build; {@code @RateLimit} annotations read into rules. Not
 * part of the API.
 */
package io.github.ratelimit.internal.config;
