package io.github.ratelimit.servlet.tomcat;

import io.github.ratelimit.servlet.ClientConnections;
import io.github.ratelimit.servlet.RateLimitFilter;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletRequestWrapper;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;
import org.apache.coyote.ActionCode;
import org.jspecify.annotations.Nullable;

/**
 * Tells the rate-limit filters when the client of a request waiting out a {@code SOFT} delay on Tomcat has closed its
 * connection, so the wait ends and its tokens come back. A {@code web.xml} application declares it in its
 * {@code META-INF/context.xml} (or the server's {@code context.xml}):
 *
 * <pre>{@code
 * <Context>
 *   <Valve className="io.github.ratelimit.servlet.tomcat.TomcatClientConnections"/>
 * </Context>
 * }</pre>
 *
 * As it starts, the valve publishes itself in its context's servlet-context attribute
 * {@link RateLimitFilter#CLIENT_CONNECTIONS_ATTRIBUTE}, where the application's filters find it. Tomcat loads a
 * valve of {@code context.xml} from its own {@code lib} folder, not from the application: copy the
 * {@code ratelimit-servlet} jar there too (the valve needs nothing else of the library). The Spring Boot starter
 * installs it in Boot's embedded Tomcat and hands it to its filters. Tomcat raises no Servlet API event
 * for it (no {@code AsyncListener} or {@code ReadListener} call while a request waits asynchronously), but a
 * non-blocking read on Tomcat's own request sees the end of the stream.
 *
 * <p>As a context valve it holds Tomcat's request on the thread that serves it, so the filter, when a request starts
 * to wait, gets a probe bound to that request. Which requests can be checked: HTTP/1.x requests without a body
 * (a body that may still be arriving cannot be told from a close without reading it); HTTP/2 streams, and requests
 * with a body, wait to their end as on other containers.
 *
 * <p>The probe asks Tomcat how many bytes it could read now, reading from the socket without blocking: after the
 * request's end, nothing arrives from an open client's connection, while a closed (or reset) one fails the read,
 * which Tomcat reports as one readable byte, on every ask. Bytes of a next request pipelined behind this one are
 * kept by Tomcat for that request and reported once, then no more; the probe asks twice, and a "readable" that
 * stays "readable" while nothing is buffered is a close. A client that only half-closes (shuts down its output and
 * still reads) counts as gone, as on Reactor Netty.
 */
public final class TomcatClientConnections extends ValveBase implements ClientConnections {

    /** Tomcat's request on the thread that runs the valves below this one and the filters. */
    private final ThreadLocal<Request> current = new ThreadLocal<>();

    /** Creates the valve; Tomcat does, from its class name in {@code context.xml}. */
    public TomcatClientConnections() {
        super(true);
    }

    /**
     * Publishes this valve to the filters of its context, when it is a context's valve.
     *
     * @throws LifecycleException as {@link ValveBase#startInternal()}
     */
    @Override
    protected synchronized void startInternal() throws LifecycleException {
        if (getContainer() instanceof Context context) {
            // As JDK types, which the web application's class loader shares with Tomcat's: a valve declared in
            // context.xml comes from Tomcat's lib, the filter from the application's WEB-INF/lib.
            Function<HttpServletRequest, @Nullable BooleanSupplier> probes = request -> {
                Probe probe = watch(request);
                return probe == null ? null : probe::clientGone;
            };
            context.getServletContext().setAttribute(RateLimitFilter.CLIENT_CONNECTIONS_ATTRIBUTE, probes);
        }
        super.startInternal();
    }

    /**
     * Holds Tomcat's request for the filters below, while they run on this thread.
     *
     * @param request Tomcat's request
     * @param response Tomcat's response
     * @throws IOException as the valves and filters below throw it
     * @throws ServletException as the valves and filters below throw it
     */
    @Override
    public void invoke(Request request, Response response) throws IOException, ServletException {
        Request outer = current.get();
        current.set(request);
        try {
            getNext().invoke(request, response);
        } finally {
            if (outer == null) {
                current.remove();
            } else {
                current.set(outer);
            }
        }
    }

    @Override
    public @Nullable Probe watch(HttpServletRequest request) {
        Request tomcat = current.get();
        if (tomcat == null || unwrap(request) != unwrap(tomcat.getRequest()) || !watchable(tomcat)) {
            return null;
        }
        org.apache.coyote.Request coyote = tomcat.getCoyoteRequest();
        return () -> clientGone(coyote);
    }

    /** HTTP/1.x without a body: nothing but a close or a next request can arrive while it waits. */
    private static boolean watchable(Request request) {
        String protocol = request.getProtocol();
        return protocol != null
                && protocol.startsWith("HTTP/1.")
                && request.getContentLengthLong() <= 0
                && request.getHeader("Transfer-Encoding") == null;
    }

    static boolean clientGone(org.apache.coyote.Request coyote) {
        if (available(coyote, true) == 0) {
            return false; // open, nothing sent
        }
        if (available(coyote, false) > 0) {
            return false; // bytes buffered: a next request, pipelined
        }
        // Readable with nothing buffered: either the read failed (a close, a reset), or a pipelined request's bytes
        // arrived and the filter in front of the buffer does not count them. Asked again, a failed read fails again
        // and pipelined bytes, now buffered, are not read again.
        return available(coyote, true) > 0;
    }

    private static int available(org.apache.coyote.Request coyote, boolean read) {
        coyote.action(ActionCode.AVAILABLE, read);
        return coyote.getAvailable();
    }

    private static ServletRequest unwrap(ServletRequest request) {
        ServletRequest r = request;
        while (r instanceof ServletRequestWrapper wrapper) {
            r = wrapper.getRequest();
        }
        return r;
    }
}
