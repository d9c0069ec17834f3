/**
 * Spring MVC on a servlet container: the handler's {@code @RateLimit} rules decided by the servlet filter with the
 * URL rules, calls inside a request decided with it ({@code ServletMethodRateLimit}, a
 * {@link io.github.ratelimit.spring.boot.internal.method.MethodDecider}), the 429 for an exception thrown at a call, failed
 * logins marked for rules that count failures, and Tomcat's view of a client that leaves during a SOFT wait.
 *
 * <p>May use the core, the servlet filter ({@code ratelimit-servlet}), the {@code method} package, the servlet API
 * and Spring MVC; never Reactor or {@code web.reactive}.
 */
package io.github.ratelimit.spring.boot.internal.web.servlet;
