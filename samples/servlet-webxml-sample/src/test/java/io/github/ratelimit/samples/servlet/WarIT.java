package io.github.ratelimit.samples.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipInputStream;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleState;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.scan.StandardJarScanner;
import org.junit.jupiter.api.Test;

/**
 * The WAR that {@code ./mvnw -pl samples/servlet-webxml-sample -am package} builds, as a container gets it: without
 * the embedded launcher (a container deploys the WAR itself), with the admin servlet mapped and its library, and
 * deployable as it is, answering the admin servlet over real HTTP. Runs after {@code package}, in the failsafe phase.
 */
class WarIT {

    private static Path war() {
        Path war = Path.of(System.getProperty("sample.war"));
        assertThat(war).exists();
        return war;
    }

    private static List<String> entries(ZipFile zip) {
        return Collections.list(zip.entries()).stream().map(ZipEntry::getName).toList();
    }

    @Test
    void theWarHasNoLauncherAndMapsTheAdminServlet() throws IOException {
        try (ZipFile zip = new ZipFile(war().toFile())) {
            List<String> names = entries(zip);
            assertThat(names)
                    .contains(
                            "WEB-INF/web.xml",
                            "WEB-INF/ratelimit.properties",
                            "WEB-INF/classes/io/github/ratelimit/samples/servlet/HelloServlet.class",
                            "WEB-INF/classes/io/github/ratelimit/samples/servlet/ContainerAuthenticationFilter.class");
            assertThat(names).as("the embedded launcher").noneMatch(n -> n.contains("SampleServer"));
            assertThat(names)
                    .as("the container's own jars")
                    .noneMatch(n ->
                            n.startsWith("WEB-INF/lib/tomcat-") || n.startsWith("WEB-INF/lib/jakarta.servlet-api"));
            String webXml = new String(
                    zip.getInputStream(zip.getEntry("WEB-INF/web.xml")).readAllBytes(), StandardCharsets.UTF_8);
            assertThat(webXml)
                    .contains("<servlet-class>io.github.ratelimit.servlet.RateLimitAdminServlet</servlet-class>")
                    .contains("<url-pattern>/ratelimit-admin/*</url-pattern>")
                    .contains("<param-value>ratelimit-admin</param-value>");
            String servletJar = names.stream()
                    .filter(n -> n.matches("WEB-INF/lib/ratelimit-servlet-.*\\.jar"))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no ratelimit-servlet jar in " + names));
            List<String> classes = new ArrayList<>();
            try (ZipInputStream jar = new ZipInputStream(new ByteArrayInputStream(
                    zip.getInputStream(zip.getEntry(servletJar)).readAllBytes()))) {
                for (ZipEntry e = jar.getNextEntry(); e != null; e = jar.getNextEntry()) {
                    classes.add(e.getName());
                }
            }
            assertThat(classes).contains("io/github/ratelimit/servlet/RateLimitAdminServlet.class");
        }
    }

    @Test
    void theWarDeploysInTomcatAndItsAdminServletAnswersOnlyTheAdminRole() throws Exception {
        Path base = Files.createTempDirectory("servlet-sample-war");
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(base.toString());
        tomcat.setPort(0);
        tomcat.getConnector();
        tomcat.setAddDefaultWebXmlToWebapp(false);
        tomcat.addUser("alice", "alice");
        tomcat.addRole("alice", "user");
        tomcat.addUser("admin", "admin");
        tomcat.addRole("admin", "ratelimit-admin");
        Context context = tomcat.addWebapp("", war().toString());
        ((StandardJarScanner) context.getJarScanner()).setScanClassPath(false);
        tomcat.start();
        try {
            assertThat(context.getState()).isEqualTo(LifecycleState.STARTED);
            AdminClient client = new AdminClient(tomcat.getConnector().getLocalPort());
            assertThat(client.get("/hello").status()).isEqualTo(200);
            assertThat(client.send("GET", AdminClient.ADMIN + "/", null, null).status())
                    .isEqualTo(401);
            assertThat(client.send("GET", AdminClient.ADMIN + "/", "alice", null)
                            .status())
                    .isEqualTo(403);
            AdminClient.Answer summary = client.admin("GET", "/", null);
            assertThat(summary.status()).isEqualTo(200);
            assertThat(summary.json().get("rules").toString()).contains("\"name\":\"hello\"");
        } finally {
            tomcat.stop();
            tomcat.destroy();
        }
    }
}
