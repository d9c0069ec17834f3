package io.github.ratelimit.servlet;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

/**
 * Tells whether the client of a request that waits out a {@code SOFT} delay has closed its connection, so that
 * {@link RateLimitFilter} can end the wait and return the tokens the request reserved (the way a cancelled wait
 * returns them on Spring WebFlux). The Servlet API has no such signal: Tomcat 11 raises no {@code AsyncListener}
 * or {@code ReadListener} event when an HTTP/1.x client closes during an asynchronous wait (over HTTP/2, a reset
 * stream is reported on the {@code AsyncContext}, which ends the wait without a probe). A container integration that
 * can look at the connection supplies one: on Tomcat, the valve
 * {@link io.github.ratelimit.servlet.tomcat.TomcatClientConnections}, which a {@code web.xml} application declares in
 * its {@code context.xml} and the Spring Boot starter installs in its embedded Tomcat; on Jetty 12 (ee11),
 * {@link io.github.ratelimit.servlet.jetty.JettyClientConnections}, which an embedded Jetty's application adds to its
 * context (Jetty, too, reports nothing when an HTTP/1.1 client closes during a wait).
 *
 * <p>Without one, or when it answers {@code null}, the wait runs to its end, as long as the
 * rule's {@code max-delay} at most, and the limiter's {@code max-waiting} caps bound how many requests wait.
 *
 * <p>Implementations must be thread-safe.
 */
@FunctionalInterface
public interface ClientConnections {

    /**
     * Checks one request's connection. Must not block; called by the filter's watcher while the request waits,
     * never concurrently with itself, never once the wait has ended (when the container may already reuse the
     * request's objects for another), and not before the wait has lasted {@link RateLimitFilter#CONNECTION_CHECK_INTERVAL}.
     */
    @FunctionalInterface
    interface Probe {

        /**
         * @return whether the client has closed its side of the connection (or it failed); {@code false} when it is
         *         open or this cannot tell
         */
        boolean clientGone();
    }

    /**
     * Called on the request's own thread, inside the filter, when the request starts to wait.
     *
     * @param request the request as the filter sees it (possibly wrapped by earlier filters)
     * @return the probe of its connection, or {@code null} when this request's connection cannot be checked (another
     *         container, another protocol, a body that has not been read)
     */
    @Nullable
    Probe watch(HttpServletRequest request);
}
