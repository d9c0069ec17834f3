/**
 * Project Reactor and Spring WebFlux: a {@code WebFilter} that decides URL rules and the handler's rules in one
 * decision per request without blocking an event loop, methods returning a publisher decided when subscribed to
 * ({@code ReactiveMethodRateLimit}, a {@link io.github.ratelimit.spring.boot.internal.method.MethodDecider}), the scheduler
 * that runs decisions waiting on I/O, and the 429 response; and Spring Cloud Gateway's {@code RateLimiter} backed by
 * the engine ({@code GatewayRuleLimiter}), which only its auto-configuration loads, when the gateway is present.
 *
 * <p>May use the core, the {@code method} package, Reactor, Spring WebFlux and Spring Cloud Gateway (server WebFlux,
 * from {@code GatewayRuleLimiter} only); never the servlet API or {@code web.servlet}.
 */
package io.github.ratelimit.spring.boot.internal.web.reactive;
