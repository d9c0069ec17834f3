package io.github.ratelimit.samples.servlet;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.LifecycleState;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.scan.StandardJarScanner;

/**
 * Runs the web application directory ({@code src/main/webapp}, with its {@code WEB-INF/web.xml}) in an embedded
 * Tomcat, as a servlet container would run the WAR. Users for basic authentication: {@code alice}/{@code alice}
 * and {@code bob}/{@code bob} (role {@code user}), and {@code admin}/{@code admin} (roles {@code user} and
 * {@code ratelimit-admin}, for the admin servlet under {@code /ratelimit-admin/}). Only for {@code exec:java} and the
 * tests: the WAR leaves this class out (its {@code pom.xml}), a container deploys the WAR itself.
 */
public final class SampleServer implements AutoCloseable {

    private final Tomcat tomcat;
    private final Context context;
    private boolean closed;

    private SampleServer(Tomcat tomcat, Context context) {
        this.tomcat = tomcat;
        this.context = context;
    }

    /**
     * @param port the port, 0 for a free one
     * @param contextParams extra context-params, e.g. {@code ratelimit.store=redis}
     * @return the started server
     * @throws LifecycleException when the application fails to deploy (a bad rules file, for example)
     */
    public static SampleServer start(int port, Map<String, String> contextParams) throws Exception {
        Path base = Files.createTempDirectory("servlet-sample");
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(base.toString());
        // Under `mvn exec:java` and in tests the application's classes are not on the system class path.
        tomcat.getServer().setParentClassLoader(SampleServer.class.getClassLoader());
        tomcat.setPort(port);
        tomcat.getConnector();
        tomcat.setAddDefaultWebXmlToWebapp(false); // no JSP support or default servlet: the sample needs neither
        tomcat.addUser("alice", "alice");
        tomcat.addRole("alice", "user");
        tomcat.addUser("bob", "bob");
        tomcat.addRole("bob", "user");
        tomcat.addUser("admin", "admin");
        tomcat.addRole("admin", "user");
        tomcat.addRole("admin", "ratelimit-admin");
        Context context = tomcat.addWebapp("", webappDirectory().getAbsolutePath());
        context.setParentClassLoader(SampleServer.class.getClassLoader());
        ((StandardJarScanner) context.getJarScanner()).setScanClassPath(false);
        contextParams.forEach(context::addParameter);
        tomcat.start();
        SampleServer server = new SampleServer(tomcat, context);
        if (context.getState() != LifecycleState.STARTED) {
            server.close();
            throw new LifecycleException("the web application failed to start; see the log above");
        }
        return server;
    }

    private static File webappDirectory() {
        for (String candidate : new String[] {"src/main/webapp", "samples/servlet-webxml-sample/src/main/webapp"}) {
            File dir = new File(candidate);
            if (new File(dir, "WEB-INF/web.xml").isFile()) {
                return dir;
            }
        }
        throw new IllegalStateException(
                "run from the project root or the sample's directory: no src/main/webapp found");
    }

    /** @return the port the server listens on */
    public int port() {
        return tomcat.getConnector().getLocalPort();
    }

    @Override
    public void close() throws LifecycleException {
        if (!closed) {
            closed = true;
            tomcat.stop();
            tomcat.destroy();
        }
    }

    /** The system property naming the port; the environment variable {@code PORT} when unset; 8080 when neither. */
    public static final String PORT_PROPERTY = "port";

    /**
     * Starts the sample and waits: on the port of the first argument, else of the system property {@code port}
     * ({@code -Dport=9090}), else of the environment variable {@code PORT}, else 8080.
     *
     * @param args optionally the port
     * @throws Exception when the port is not a number from 0 to 65535, or the application fails to start
     */
    public static void main(String[] args) throws Exception {
        int port = port(args.length > 0 ? args[0] : System.getProperty(PORT_PROPERTY, System.getenv("PORT")));
        SampleServer server = start(port, Map.of());
        String base = "http://localhost:" + server.port();
        System.out.println("Servlet sample on " + base + "/ (Ctrl+C to stop). Try:");
        System.out.println("  for i in $(seq 7); do curl -s -o /dev/null -w '%{http_code}\\n' " + base
                + "/hello & done | sort | uniq -c");
        System.out.println("  curl -u admin:admin " + base + "/ratelimit-admin/");
        server.tomcat.getServer().await();
    }

    /**
     * @param value a port as given, or {@code null} (or blank) for 8080
     * @return the port
     * @throws IllegalArgumentException when it is not a whole number from 0 to 65535
     */
    static int port(String value) {
        if (value == null || value.isBlank()) {
            return 8080;
        }
        try {
            int port = Integer.parseInt(value.trim());
            if (port >= 0 && port <= 65535) {
                return port;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(
                "port '" + value + "' is not a whole number from 0 to 65535: give it as " + "-Dport=9090 or PORT=9090");
    }
}
