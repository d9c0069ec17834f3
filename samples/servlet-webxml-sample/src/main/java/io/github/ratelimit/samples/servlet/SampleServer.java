package io.github.ratelimit.samples.servlet;

import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.LifecycleState;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.scan.StandardJarScanner;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Runs the web application directory ({@code src/main/webapp}, with its {@code WEB-INF/web.xml}) in an embedded
 * Tomcat, as a servlet container would run the WAR. Users for basic authentication: {@code alice}/{@code alice}
 * and {@code bob}/{@code bob}.
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
        throw new IllegalStateException("run from the project root or the sample's directory: no src/main/webapp found");
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

    /**
     * Starts the sample on port 8080 (or the first argument) and waits.
     *
     * @param args optionally the port
     */
    public static void main(String[] args) throws Exception {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 8080;
        SampleServer server = start(port, Map.of());
        System.out.println("Servlet sample on http://localhost:" + server.port() + "/ (Ctrl+C to stop). Try:");
        System.out.println("  for i in $(seq 7); do curl -s -o /dev/null -w '%{http_code}\\n' localhost:" + server.port()
                + "/hello; done");
        server.tomcat.getServer().await();
    }
}
