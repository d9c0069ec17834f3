/**
 * {@code @RateLimit} on any Spring bean: the AOP advisor and its interceptor, the start-up check of every
 * annotation, SpEL keys over a call's arguments, and the {@link io.github.ratelimit.spring.boot.internal.method.MethodDecider}
 * SPI through which the web packages decide calls made inside a request (and the shared cache of handler methods'
 * rules that their filters decide with the URL rules).
 *
 * <p>May use the core (its API and its {@code internal} plumbing) and Spring's AOP and expression language; never
 * the servlet API, Reactor or the web packages, which depend on this one.
 */
@NullMarked
package io.github.ratelimit.spring.boot.internal.method;

import org.jspecify.annotations.NullMarked;
