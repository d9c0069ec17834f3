package io.github.ratelimit.servlet;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.github.ratelimit.testing.InternalTypes;
import org.junit.jupiter.api.Test;

/** The filter must run in a plain web.xml application: no Spring anywhere in this module. */
class ServletArchitectureTest {

    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.github.ratelimit.servlet");

    @Test
    void usesNoSpring() {
        noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("org.springframework..", "org.aspectj..")
                .check(MAIN);
    }

    /**
     * What a {@code web.xml} application and the Spring Boot starter use: the filter (and its builder), the admin
     * servlet, the rejection handlers, the request context, the two extension points the starter plugs into, and
     * Tomcat's valve and Jetty's initializer that tell the filters a waiting client has gone.
     */
    @Test
    void thePublicTypesAreTheFilterTheAdminServletAndTheirExtensionPoints() {
        assertThat(InternalTypes.publicTypesOutsideInternal(MAIN))
                .containsExactly(
                        "io.github.ratelimit.servlet.ClientConnections",
                        "io.github.ratelimit.servlet.HandlerRules",
                        "io.github.ratelimit.servlet.HttpRequestContext",
                        "io.github.ratelimit.servlet.ProblemDetailsRejectionHandler",
                        "io.github.ratelimit.servlet.RateLimitAdminServlet",
                        "io.github.ratelimit.servlet.RateLimitFilter",
                        "io.github.ratelimit.servlet.RejectionHandler",
                        "io.github.ratelimit.servlet.jetty.JettyClientConnections",
                        "io.github.ratelimit.servlet.tomcat.TomcatClientConnections");
    }

    /** The filter runs on any container: Tomcat's classes stay in the package of Tomcat's valve. */
    @Test
    void onlyTheTomcatPackageUsesTomcat() {
        noClasses()
                .that()
                .resideOutsideOfPackage("io.github.ratelimit.servlet.tomcat..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("org.apache.catalina..", "org.apache.coyote..", "org.apache.tomcat..")
                .check(MAIN);
    }

    /** The filter runs on any container: Jetty's classes stay in the package of Jetty's probes. */
    @Test
    void onlyTheJettyPackageUsesJetty() {
        noClasses()
                .that()
                .resideOutsideOfPackage("io.github.ratelimit.servlet.jetty..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("org.eclipse.jetty..")
                .check(MAIN);
    }

    /** Jetty's probes use Jetty's public API only, no class of the packages Jetty names {@code internal}. */
    @Test
    void nothingUsesAnInternalPackageOfJetty() {
        noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("org.eclipse.jetty..internal..")
                .check(MAIN);
    }

    @Test
    void publicSignaturesExposeNoInternalType() {
        InternalTypes.areNamedByNoPublicSignature().check(MAIN);
    }
}
