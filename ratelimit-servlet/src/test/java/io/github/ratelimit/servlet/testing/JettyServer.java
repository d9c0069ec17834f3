package io.github.ratelimit.servlet.testing;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import java.util.EnumSet;
import java.util.function.Consumer;
import org.eclipse.jetty.ee11.servlet.FilterHolder;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * A real Jetty 12 (the Servlet 6.1 environment, ee11) on a free loopback port that speaks HTTP/1.1 and h2c (HTTP/2
 * without TLS, by prior knowledge or by upgrade), with one filter instance mapped to every request and one servlet,
 * both async-supported as a {@code web.xml} would declare them.
 */
public final class JettyServer implements AutoCloseable {

    private final Server server;
    private final ServerConnector connector;

    private JettyServer(Server server, ServerConnector connector) {
        this.server = server;
        this.connector = connector;
    }

    /**
     * @param filter the filter, for requests (not for async dispatches: a {@code web.xml} mapping's default)
     * @param servlet the servlet
     * @param mapping the servlet's mapping
     * @return the started server
     * @throws Exception when it cannot start
     */
    public static JettyServer start(Filter filter, HttpServlet servlet, String mapping) throws Exception {
        return start(filter, servlet, mapping, context -> {});
    }

    /**
     * @param filter the filter, for requests (not for async dispatches: a {@code web.xml} mapping's default)
     * @param servlet the servlet
     * @param mapping the servlet's mapping
     * @param customizer adds to the context before it starts (initializers, attributes)
     * @return the started server
     * @throws Exception when it cannot start
     */
    public static JettyServer start(
            Filter filter, HttpServlet servlet, String mapping, Consumer<ServletContextHandler> customizer)
            throws Exception {
        Server server = new Server();
        HttpConfiguration config = new HttpConfiguration();
        ServerConnector connector = new ServerConnector(
                server, new HttpConnectionFactory(config), new HTTP2CServerConnectionFactory(config));
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler("/");
        FilterHolder filterHolder = new FilterHolder(filter);
        filterHolder.setAsyncSupported(true);
        context.addFilter(filterHolder, "/*", EnumSet.of(DispatcherType.REQUEST));
        ServletHolder servletHolder = new ServletHolder(servlet);
        servletHolder.setAsyncSupported(true);
        context.addServlet(servletHolder, mapping);
        customizer.accept(context);
        server.setHandler(context);
        server.start();
        return new JettyServer(server, connector);
    }

    /** @return the port the connector listens on */
    public int port() {
        return connector.getLocalPort();
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }
}
