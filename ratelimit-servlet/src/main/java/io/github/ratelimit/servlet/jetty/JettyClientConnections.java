package io.github.ratelimit.servlet.jetty;

import io.github.ratelimit.servlet.ClientConnections;
import io.github.ratelimit.servlet.RateLimitFilter;
import jakarta.servlet.ServletContainerInitializer;
import jakarta.servlet.ServletContext;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.eclipse.jetty.ee11.servlet.ServletContextRequest;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.jspecify.annotations.Nullable;

/**
 * Tells the rate-limit filters when the client of an HTTP/1.1 request waiting out a {@code SOFT} delay on Jetty 12
 * (ee11) has closed its connection, so the wait ends and its tokens come back. Jetty reports nothing for it: while a
 * request is being handled, Jetty does not read its connection (it reads the next request once this one has ended),
 * so neither an {@code AsyncListener} nor a failure listener hears of the close. An embedded Jetty's application adds
 * it to its context, as a {@link ServletContainerInitializer}:
 *
 * <pre>{@code
 * ServletContextHandler context = new ServletContextHandler("/");
 * context.addServletContainerInitializer(new JettyClientConnections());
 * }</pre>
 *
 * As the context starts, it publishes itself in the servlet-context attribute
 * {@link RateLimitFilter#CLIENT_CONNECTIONS_ATTRIBUTE} as JDK types (a {@code Function<HttpServletRequest,
 * BooleanSupplier>}), where the application's filters find it. A filter built in code can take it directly instead:
 * {@code filter.clientConnections(new JettyClientConnections())}.
 *
 * <p>Which requests can be checked: HTTP/1.x requests without a body (a body that may still be arriving cannot be told
 * from a close without reading it) on a plain TCP connection of Jetty's {@code ServerConnector}. HTTP/2 streams (which
 * Jetty reports itself, on the {@code AsyncContext}), TLS connections, connections behind the PROXY protocol, Unix
 * domain sockets and requests with a body wait to their end, as on other containers.
 *
 * <p>The probe reads nothing: Jetty's connection keeps every byte of a next request pipelined behind this one, and
 * serves the connection as before once the wait has ended. It asks the operating system, without blocking, whether
 * the socket under Jetty's end point is readable (a short-lived {@link Selector} of its own, registered beside Jetty's,
 * which the JDK allows), and if so, how many bytes it holds ({@link java.io.InputStream#available()} of the channel's
 * socket): a socket that is readable with no byte to read has reached the end of its stream or failed, which is a
 * close (or a reset); readable bytes are a next request, pipelined, and the client is still there. A client that only
 * half-closes (shuts down its output and still reads) counts as gone, as on Tomcat. Each check costs a few system
 * calls (open a selector, register, select, close) and allocates no buffer.
 *
 * <p>Uses only Jetty's public API ({@link ServletContextRequest#getServletContextRequest}, the request's
 * {@code ConnectionMetaData}, {@link SocketChannelEndPoint#getChannel()}) and the JDK's. Thread-safe; stateless.
 */
public final class JettyClientConnections implements ClientConnections, ServletContainerInitializer {

    /** Creates the probes; the application adds them to its context, or gives them to its filters. */
    public JettyClientConnections() {
        // Stateless: each probe holds its request's end point.
    }

    /**
     * Publishes this object's probes to the filters of the starting context, in
     * {@link RateLimitFilter#CLIENT_CONNECTIONS_ATTRIBUTE}.
     *
     * @param classes ignored (nothing is scanned for)
     * @param context the starting context
     */
    @Override
    public void onStartup(@Nullable Set<Class<?>> classes, ServletContext context) {
        // As JDK types, which a web application's class loader shares with Jetty's: this class may come from the
        // server's class path while the filter comes from the application's WEB-INF/lib.
        Function<HttpServletRequest, @Nullable BooleanSupplier> probes = request -> {
            Probe probe = watch(request);
            return probe == null ? null : probe::clientGone;
        };
        context.setAttribute(RateLimitFilter.CLIENT_CONNECTIONS_ATTRIBUTE, probes);
    }

    @Override
    public @Nullable Probe watch(HttpServletRequest request) {
        if (!withoutBodyOverHttp1(request)) {
            return null;
        }
        ServletContextRequest jetty;
        try {
            jetty = ServletContextRequest.getServletContextRequest(request);
        } catch (IllegalStateException e) {
            return null; // not a request of Jetty's ee11 environment
        }
        EndPoint endPoint = jetty.getConnectionMetaData().getConnection().getEndPoint();
        if (!(endPoint instanceof SocketChannelEndPoint plain)) {
            return null; // TLS, the PROXY protocol, or another transport: the socket's bytes are not the request's
        }
        SocketChannel channel = plain.getChannel();
        Socket socket;
        try {
            socket = channel.socket();
        } catch (UnsupportedOperationException e) {
            return null; // a Unix domain socket
        }
        return () -> clientGone(endPoint, channel, socket);
    }

    /** HTTP/1.x without a body: nothing but a close or a next request can arrive while it waits. */
    private static boolean withoutBodyOverHttp1(HttpServletRequest request) {
        String protocol = request.getProtocol();
        return protocol != null
                && protocol.startsWith("HTTP/1.")
                && request.getContentLengthLong() <= 0
                && request.getHeader("Transfer-Encoding") == null;
    }

    private static boolean clientGone(EndPoint endPoint, SocketChannel channel, Socket socket) {
        if (!endPoint.isOpen() || endPoint.isInputShutdown()) {
            return true;
        }
        // A failure of the selector itself says nothing of the client (too many open files, say): it goes up, and
        // the watcher stops checking this request, which then waits to its end.
        try (Selector selector = Selector.open()) {
            try {
                channel.register(selector, SelectionKey.OP_READ);
            } catch (ClosedChannelException e) {
                return true;
            }
            if (selector.selectNow() == 0) {
                return false; // open, nothing sent
            }
            // Readable: the bytes of a next request (Jetty reads them once this request has ended), or the end of
            // the stream or an error, after which there is nothing to read.
            return nothingToRead(socket);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot check a waiting request's connection", e);
        }
    }

    private static boolean nothingToRead(Socket socket) {
        try {
            return socket.getInputStream().available() == 0;
        } catch (IOException e) {
            return true; // closed, or its input shut down, meanwhile
        }
    }
}
