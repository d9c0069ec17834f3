package io.github.ratelimit.servlet.testing;

import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.Wrapper;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;

/**
 * A real Tomcat on a free loopback port, configured in code: a filter (as {@code web.xml} would declare it, by
 * class and init-params, or an instance) and servlets. For tests of the filter in a real container.
 */
public final class TomcatServer implements AutoCloseable {

    private final Tomcat tomcat;
    private final Context context;
    private final Path baseDir;

    private TomcatServer(Tomcat tomcat, Context context, Path baseDir) {
        this.tomcat = tomcat;
        this.context = context;
        this.baseDir = baseDir;
    }

    /** @return a builder */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the port the connector listens on */
    public int port() {
        return tomcat.getConnector().getLocalPort();
    }

    /** @return the web application's context */
    public Context context() {
        return context;
    }

    /** Stops only the web application (as an undeploy does), leaving the server up. */
    public void stopContext() throws LifecycleException {
        context.stop();
    }

    @Override
    public void close() throws Exception {
        try {
            tomcat.stop();
            tomcat.destroy();
        } finally {
            deleteRecursively(baseDir);
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var paths = Files.walk(dir)) {
            paths.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }

    /** Configures a {@link TomcatServer}. */
    public static final class Builder {

        private record ServletDef(
                String name, HttpServlet servlet, String className, List<String> mappings, boolean async) {}

        private Filter filter;
        private String filterClass;
        private final Map<String, String> filterParams = new LinkedHashMap<>();
        private final Map<String, String> contextParams = new LinkedHashMap<>();
        private final List<ServletDef> servlets = new ArrayList<>();
        private final List<Consumer<Context>> customizers = new ArrayList<>();
        private final List<Consumer<Tomcat>> serverCustomizers = new ArrayList<>();
        private final Map<String, Filter> filtersBefore = new LinkedHashMap<>();
        private boolean filterAsync = true;

        private Builder() {}

        /** @param filter a filter instance, mapped to every request */
        public Builder filter(Filter filter) {
            this.filter = filter;
            return this;
        }

        /** @param name a filter's name @param f a filter that runs before the rate-limit filter */
        public Builder filterBefore(String name, Filter f) {
            filtersBefore.put(name, f);
            return this;
        }

        /** @param className a filter class, instantiated and initialized by the container, as web.xml does */
        public Builder filterClass(String className) {
            this.filterClass = className;
            return this;
        }

        /** @param name an init-param of the filter @param value its value */
        public Builder filterParam(String name, String value) {
            filterParams.put(name, value);
            return this;
        }

        /** @param async whether the filter supports async processing (default true) */
        public Builder filterAsync(boolean async) {
            this.filterAsync = async;
            return this;
        }

        /** @param name a context-param @param value its value */
        public Builder contextParam(String name, String value) {
            contextParams.put(name, value);
            return this;
        }

        /** Adds a servlet instance, async-supported. */
        public Builder servlet(String name, HttpServlet servlet, String... mappings) {
            servlets.add(new ServletDef(name, servlet, null, List.of(mappings), true));
            return this;
        }

        /** Adds a servlet the container instantiates from its class name, as web.xml does. */
        public Builder servletClass(String name, String className, boolean async, String... mappings) {
            servlets.add(new ServletDef(name, null, className, List.of(mappings), async));
            return this;
        }

        /** @param customizer adjusts the context before start (login config, valves, ...) */
        public Builder context(Consumer<Context> customizer) {
            customizers.add(customizer);
            return this;
        }

        /** @param customizer adjusts the server before start (connector settings, ...) */
        public Builder server(Consumer<Tomcat> customizer) {
            serverCustomizers.add(customizer);
            return this;
        }

        private static void addFilter(
                Context context,
                String name,
                Filter instance,
                String className,
                boolean async,
                Map<String, String> params) {
            FilterDef def = new FilterDef();
            def.setFilterName(name);
            if (instance != null) {
                def.setFilter(instance);
            }
            def.setFilterClass(className);
            def.setAsyncSupported(String.valueOf(async));
            params.forEach(def::addInitParameter);
            context.addFilterDef(def);
            FilterMap map = new FilterMap();
            map.setFilterName(name);
            map.addURLPattern("/*");
            context.addFilterMap(map);
        }

        /** @return the started server */
        public TomcatServer start() throws Exception {
            Path base = Files.createTempDirectory("ratelimit-tomcat");
            Tomcat tomcat = new Tomcat();
            tomcat.setBaseDir(base.toString());
            Connector connector = new Connector();
            connector.setPort(0);
            connector.setProperty("address", "127.0.0.1");
            tomcat.setConnector(connector);
            Path docBase = Files.createDirectories(base.resolve("webapp"));
            Context context = tomcat.addContext("", docBase.toString());
            contextParams.forEach(context::addParameter);
            for (ServletDef s : servlets) {
                Wrapper wrapper = s.servlet != null
                        ? Tomcat.addServlet(context, s.name, s.servlet)
                        : Tomcat.addServlet(context, s.name, s.className);
                wrapper.setAsyncSupported(s.async);
                s.mappings.forEach(m -> context.addServletMappingDecoded(m, s.name));
            }
            filtersBefore.forEach(
                    (name, f) -> addFilter(context, name, f, f.getClass().getName(), true, Map.of()));
            if (filter != null || filterClass != null) {
                addFilter(
                        context,
                        "rateLimit",
                        filter,
                        filter != null ? filter.getClass().getName() : filterClass,
                        filterAsync,
                        filterParams);
            }
            customizers.forEach(c -> c.accept(context));
            serverCustomizers.forEach(c -> c.accept(tomcat));
            try {
                tomcat.start();
            } catch (LifecycleException e) {
                tomcat.destroy();
                deleteRecursively(base);
                throw e;
            }
            if (!context.getState().isAvailable()) {
                TomcatServer server = new TomcatServer(tomcat, context, base);
                server.close();
                throw new IllegalStateException(
                        "the web application failed to start (state " + context.getState() + "); see the log above");
            }
            return new TomcatServer(tomcat, context, base);
        }
    }
}
