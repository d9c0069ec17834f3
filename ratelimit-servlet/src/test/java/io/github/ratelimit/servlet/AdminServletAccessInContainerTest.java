package io.github.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.ratelimit.servlet.testing.RawHttp;
import io.github.ratelimit.servlet.testing.TomcatServer;
import jakarta.servlet.ServletConfig;
import jakarta.servlet.ServletContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Collections;
import java.util.Enumeration;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.catalina.Context;
import org.apache.catalina.authenticator.BasicAuthenticator;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.LoginConfig;
import org.apache.tomcat.util.descriptor.web.SecurityCollection;
import org.apache.tomcat.util.descriptor.web.SecurityConstraint;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Who {@link RateLimitAdminServlet} answers and who sees the keys of its most-rejected list, in a real Tomcat whose
 * realm authenticates callers over HTTP Basic: the role it checks itself (init-param {@code role}, default
 * {@code ratelimit-admin}; {@code **} for any authenticated caller), keys masked by default, and
 * {@code show-values} ({@code always}, {@code when-authorized} with and without {@code show-values-roles}); and the
 * init-params it refuses to start with.
 */
class AdminServletAccessInContainerTest {

    /** Users of the realm: an operator in the admin's role, an auditor, and a user in neither. */
    private static final Consumer<Tomcat> USERS = tomcat -> {
        tomcat.addUser("op", "op-pass");
        tomcat.addRole("op", "ratelimit-admin");
        tomcat.addUser("auditor", "auditor-pass");
        tomcat.addRole("auditor", "auditor");
        tomcat.addUser("eve", "eve-pass");
        tomcat.addRole("eve", "user");
    };

    /** The container authenticates every caller of {@code /admin/*} with Basic, whatever its roles. */
    private static final Consumer<Context> BASIC_FOR_ADMIN = context -> {
        context.setLoginConfig(new LoginConfig("BASIC", "test", null, null));
        context.getPipeline().addValve(new BasicAuthenticator());
        SecurityCollection paths = new SecurityCollection();
        paths.addPatternDecoded("/admin/*");
        SecurityConstraint constraint = new SecurityConstraint();
        constraint.addCollection(paths);
        constraint.addAuthRole(SecurityConstraint.ROLE_ALL_AUTHENTICATED_USERS);
        context.addConstraint(constraint);
    };

    private static TomcatServer server(Path dir, Map<String, String> adminParams) throws Exception {
        return AdminServletInContainerTest.server(dir, true, adminParams, USERS, BASIC_FOR_ADMIN);
    }

    private static String basic(String user) {
        String credentials = user + ":" + user + "-pass";
        return "Authorization: Basic "
                + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8));
    }

    private static void rejectMallory(int port) throws Exception {
        for (int i = 0; i < 3; i++) {
            RawHttp.send(port, "GET", "/api/x", "X-User: mallory");
        }
    }

    @Test
    void answersOnlyCallersInItsRoleByDefaultAndMasksKeys(@TempDir Path dir) throws Exception {
        try (TomcatServer server = server(dir, Map.of())) {
            int port = server.port();
            rejectMallory(port);
            assertThat(RawHttp.send(port, "GET", "/admin/").status())
                    .as("the container asks for credentials")
                    .isEqualTo(401);
            for (String user : new String[] {"eve", "auditor"}) {
                RawHttp.Response refused = RawHttp.send(port, "GET", "/admin/rejected", basic(user));
                assertThat(refused.status()).as(user).isEqualTo(403);
                assertThat(refused.header("Content-Type")).startsWith("application/problem+json");
                assertThat(refused.body()).contains("answers callers in role 'ratelimit-admin' only");
                assertThat(RawHttp.send(
                                        port,
                                        "POST",
                                        "/admin/keys/api/mallory?reset=true",
                                        "Content-Length: 0",
                                        basic(user))
                                .status())
                        .as("%s cannot reset", user)
                        .isEqualTo(403);
            }
            assertThat(RawHttp.send(port, "GET", "/api/x", "X-User: mallory").status())
                    .as("not reset")
                    .isEqualTo(429);

            RawHttp.Response rejected = RawHttp.send(port, "GET", "/admin/rejected", basic("op"));
            assertThat(rejected.status()).isEqualTo(200);
            assertThat(rejected.body())
                    .isEqualTo("{\"topRejectedKeys\":[{\"rule\":\"api\",\"key\":\"******\",\"count\":2,\"error\":0}]}");
            assertThat(RawHttp.send(port, "GET", "/admin/", basic("op")).body())
                    .contains("\"topRejectedKeys\":[{\"rule\":\"api\",\"key\":\"******\"")
                    .doesNotContain("mallory");
            assertThat(RawHttp.send(
                                    port,
                                    "POST",
                                    "/admin/keys/api/mallory?reset=true",
                                    "Content-Length: 0",
                                    basic("op"))
                            .status())
                    .as("the operator resets a key it knows")
                    .isEqualTo(200);
            assertThat(RawHttp.send(port, "GET", "/api/x", "X-User: mallory").status())
                    .isEqualTo(200);
        }
    }

    @Test
    void takesAnotherRoleOrAnyAuthenticatedCaller(@TempDir Path dir) throws Exception {
        try (TomcatServer server = server(dir, Map.of("role", "auditor"))) {
            int port = server.port();
            assertThat(RawHttp.send(port, "GET", "/admin/health", basic("auditor"))
                            .status())
                    .isEqualTo(200);
            assertThat(RawHttp.send(port, "GET", "/admin/health", basic("op")).body())
                    .contains("answers callers in role 'auditor' only");
        }
        try (TomcatServer server = server(dir, Map.of("role", "**"))) {
            int port = server.port();
            for (String user : new String[] {"eve", "auditor", "op"}) {
                assertThat(RawHttp.send(port, "GET", "/admin/health", basic(user))
                                .status())
                        .as(user)
                        .isEqualTo(200);
            }
        }
    }

    @Test
    void showsKeysAsShowValuesSays(@TempDir Path dir) throws Exception {
        try (TomcatServer server = server(dir, Map.of("role", "**", "show-values", "always"))) {
            rejectMallory(server.port());
            assertThat(RawHttp.send(server.port(), "GET", "/admin/rejected", basic("eve"))
                            .body())
                    .contains("\"key\":\"mallory\"");
        }
        try (TomcatServer server = server(
                dir, Map.of("role", "**", "show-values", "when-authorized", "show-values-roles", "auditor, ops"))) {
            int port = server.port();
            rejectMallory(port);
            assertThat(RawHttp.send(port, "GET", "/admin/rejected", basic("auditor"))
                            .body())
                    .contains("\"key\":\"mallory\"");
            assertThat(RawHttp.send(port, "GET", "/admin/", basic("eve")).body())
                    .contains("\"key\":\"******\"")
                    .doesNotContain("mallory");
        }
        try (TomcatServer server = server(dir, Map.of("role", "**", "show-values", "WHEN-AUTHORIZED"))) {
            rejectMallory(server.port());
            assertThat(RawHttp.send(server.port(), "GET", "/admin/rejected", basic("eve"))
                            .body())
                    .as("no roles: any authenticated caller")
                    .contains("\"key\":\"mallory\"");
        }
        try (TomcatServer server = AdminServletInContainerTest.server(
                dir, true, Map.of("require-authentication", "false", "show-values", "when-authorized"))) {
            rejectMallory(server.port());
            assertThat(RawHttp.send(server.port(), "GET", "/admin/rejected").body())
                    .as("an anonymous caller is not authorized")
                    .contains("\"key\":\"******\"");
        }
    }

    @Test
    void refusesToStartWithInitParamsItCannotTake(@TempDir Path dir) {
        Map<Map<String, String>, String> bad = Map.of(
                Map.of("show-values", "sometimes"),
                "init-param show-values = 'sometimes' is not one of never, when-authorized, always",
                Map.of("role", " "),
                "init-param role is blank",
                Map.of("role", "ops", "require-authentication", "false"),
                "init-param role = 'ops' cannot be combined with require-authentication = false",
                Map.of("show-values-roles", "ops"),
                "init-param show-values-roles = 'ops' is read only with show-values = when-authorized",
                Map.of("require-authentication", "maybe"),
                "init-param require-authentication = 'maybe' is neither true nor false");
        bad.forEach((params, message) -> assertThatThrownBy(() -> {
                    RateLimitAdminServlet servlet = new RateLimitAdminServlet();
                    servlet.init(new Config(params));
                })
                .as("%s", params)
                .hasMessageContaining("RateLimitAdminServlet 'admin': " + message));
    }

    /** A servlet's configuration, as the container hands it in, for the start-up checks alone. */
    private record Config(Map<String, String> params) implements ServletConfig {
        @Override
        public String getServletName() {
            return "admin";
        }

        @Override
        public ServletContext getServletContext() {
            throw new UnsupportedOperationException();
        }

        @Override
        public String getInitParameter(String name) {
            return params.get(name);
        }

        @Override
        public Enumeration<String> getInitParameterNames() {
            return Collections.enumeration(params.keySet());
        }
    }
}
