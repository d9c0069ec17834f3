/**
 * What lets the rate-limit filter see, on Tomcat, the client of a request waiting out a {@code SOFT} delay go away:
 * {@link io.github.ratelimit.servlet.tomcat.TomcatClientConnections}, a context valve. A {@code web.xml} application
 * on Tomcat declares it in its {@code META-INF/context.xml}; the Spring Boot starter installs it in Boot's embedded
 * Tomcat.
 *
 * <p>May use the servlet module's API and Tomcat's own classes (an optional dependency: the application's Tomcat
 * provides them); no Spring. Nothing else of the module uses this package, so the filter runs on any container.
 */
@NullMarked
package io.github.ratelimit.servlet.tomcat;

import org.jspecify.annotations.NullMarked;
