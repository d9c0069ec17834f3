package io.github.ratelimit.servlet;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.servlet.testing.ContainerLog;
import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.servlet.testing.TomcatServer;
import io.micrometer.observation.tck.TestObservationRegistry;
import jakarta.servlet.ServletContainerInitializer;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@code web.xml} filter's decisions as Micrometer observations, in a real Tomcat over HTTP: the application puts its
 * {@code ObservationRegistry} in the servlet-context attribute {@link RateLimitFilter#OBSERVATION_REGISTRY_ATTRIBUTE}
 * as it starts (here from a {@link ServletContainerInitializer}, as a {@code ServletContextListener} would), and the
 * filter configured from its rules file records each observed decision there; a value that is no registry stops
 * deployment with a message naming the attribute.
 */
class ObservationsInContainerTest {

    public static final class Ok extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.getWriter().write("ok");
        }
    }

    private static TomcatServer start(Path dir, Object registry) throws Exception {
        Path rules = Files.writeString(
                dir.resolve("ratelimit.properties"),
                String.join(
                        "\n",
                        "ratelimit.rules[0].name=api",
                        "ratelimit.rules[0].paths=/api/**",
                        "ratelimit.rules[0].key=header:X-User",
                        "ratelimit.rules[0].limits=1/1h"));
        ServletContainerInitializer setsRegistry =
                (classes, context) -> context.setAttribute(RateLimitFilter.OBSERVATION_REGISTRY_ATTRIBUTE, registry);
        return TomcatServer.builder()
                .servlet("ok", new Ok(), "/api/*")
                .filterClass(RateLimitFilter.class.getName())
                .filterParam("config", "file:" + rules)
                .context(context -> context.addServletContainerInitializer(setsRegistry, null))
                .start();
    }

    @Test
    void eachObservedDecisionIsAnObservationOfTheApplicationsRegistry(@TempDir Path dir) throws Exception {
        TestObservationRegistry registry = TestObservationRegistry.create();
        try (TomcatServer server = start(dir, registry)) {
            int port = server.port();
            assertThat(RawHttp.send(port, "GET", "/api/x", "X-User: alice").status())
                    .isEqualTo(200);
            assertThat(registry)
                    .as("a call a local bucket allows at once is not observed")
                    .doesNotHaveAnyObservation();

            assertThat(RawHttp.send(port, "GET", "/api/x", "X-User: alice").status())
                    .isEqualTo(429);
            assertThat(registry)
                    .hasNumberOfObservationsEqualTo(1)
                    .hasSingleObservationThat()
                    .hasNameEqualTo("ratelimit.decision")
                    .hasLowCardinalityKeyValue("rule", "api")
                    // Set as the observation stops: the decision's end was observed.
                    .hasLowCardinalityKeyValue("outcome", "rejected")
                    .hasLowCardinalityKeyValue("basis", "bucket");
        }
    }

    @Test
    void anAttributeThatIsNoRegistryStopsDeploymentNamingIt(@TempDir Path dir) {
        List<String> logged = ContainerLog.deploymentFailures(() -> start(dir, "registry"));
        assertThat(logged)
                .anySatisfy(m -> assertThat(m)
                        .startsWith("RateLimitFilter 'rateLimit' cannot start: servlet-context attribute "
                                + "io.github.ratelimit.servlet.RateLimitFilter.observationRegistry: holds a "
                                + "java.lang.String, but it must be an io.micrometer.observation.ObservationRegistry")
                        .contains("Set it, from a ServletContextListener"));
    }
}
