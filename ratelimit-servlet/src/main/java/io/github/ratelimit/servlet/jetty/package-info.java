/**
 * What lets the rate-limit filter see, on Jetty 12 (the Servlet 6.1 environment, ee11), the client of an HTTP/1.1
 * request waiting out a {@code SOFT} delay go away: {@link io.github.ratelimit.servlet.jetty.JettyClientConnections},
 * which an embedded Jetty's application adds to its {@code ServletContextHandler}.
 *
 * <p>May use the servlet module's API and Jetty's public classes (an optional dependency: the application's Jetty
 * provides them), never a package of Jetty's named {@code internal} (checked by {@code ServletArchitectureTest}); no
 * Spring. Nothing else of the module uses this package, so the filter runs on any container.
 */
@NullMarked
package io.github.ratelimit.servlet.jetty;

import org.jspecify.annotations.NullMarked;
