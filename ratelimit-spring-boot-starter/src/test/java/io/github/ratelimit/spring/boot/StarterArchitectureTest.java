package io.github.ratelimit.spring.boot;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.ArchConfiguration;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.github.ratelimit.testing.InternalTypes;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The starter's packages by technology, as their {@code package-info.java} say: the technologies never meet but
 * through the {@code method} package's SPI, and only the auto-configuration wires them.
 */
class StarterArchitectureTest {

    private static final String ROOT = "io.github.ratelimit.spring.boot";

    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages(ROOT);

    @Test
    void onlyTheAutoConfigurationWiresThePackages() {
        noClasses()
                .that()
                .resideOutsideOfPackage(ROOT + ".autoconfigure..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage(ROOT + ".autoconfigure..")
                .check(MAIN);
    }

    @Test
    void theMethodPackageKnowsNoWebTechnology() {
        noClasses()
                .that()
                .resideInAPackage(ROOT + ".internal.method..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        ROOT + ".internal.web..",
                        ROOT + ".actuate..",
                        "jakarta.servlet..",
                        "reactor..",
                        "org.springframework.web..")
                .check(MAIN);
    }

    @Test
    void servletAndReactiveNeverMeet() {
        noClasses()
                .that()
                .resideInAPackage(ROOT + ".internal.web.servlet..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(ROOT + ".internal.web.reactive..", ROOT + ".actuate..", "reactor..")
                .check(MAIN);
        noClasses()
                .that()
                .resideInAPackage(ROOT + ".internal.web.reactive..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(ROOT + ".internal.web.servlet..", ROOT + ".actuate..", "jakarta.servlet..")
                .check(MAIN);
    }

    @Test
    void actuatorEndpointsUseTheCoreOnly() {
        noClasses()
                .that()
                .resideInAPackage(ROOT + ".actuate..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(ROOT + ".internal.method..", ROOT + ".internal.web..")
                .check(MAIN);
    }

    @Test
    void publicSignaturesExposeNoInternalType() {
        InternalTypes.areNamedByNoPublicSignature().check(MAIN);
    }

    /**
     * As Spring Boot's own modules: the auto-configurations (those of {@code AutoConfiguration.imports}), the
     * {@code @ConfigurationProperties} classes, the endpoints with what their constructors take, the health indicator,
     * the failure analyzer and the documented extension point; the rest is package-private or in {@code internal}.
     */
    @Test
    void thePublicTypesAreTheAutoConfigurationsPropertiesEndpointsAndExtensionPoints() {
        assertThat(InternalTypes.publicTypesOutsideInternal(MAIN))
                .containsExactly(
                        ROOT + ".actuate.RateLimitKeysEndpoint",
                        ROOT + ".actuate.RateLimitsEndpoint",
                        ROOT + ".actuate.RateLimitsEndpointProperties",
                        ROOT + ".actuate.RateLimitsEndpointWebExtension",
                        ROOT + ".actuate.RedisStoreHealthIndicator",
                        ROOT + ".actuate.RejectedKeys",
                        ROOT + ".actuate.StoreLatency",
                        ROOT + ".autoconfigure.RateLimitActuatorAutoConfiguration",
                        ROOT + ".autoconfigure.RateLimitAutoConfiguration",
                        ROOT + ".autoconfigure.RateLimitGatewayAutoConfiguration",
                        ROOT + ".autoconfigure.RateLimitLimitStoreAutoConfiguration",
                        ROOT + ".autoconfigure.RateLimitMethodAutoConfiguration",
                        ROOT + ".autoconfigure.RateLimitMetricsAutoConfiguration",
                        ROOT + ".autoconfigure.RateLimitProperties",
                        ROOT + ".autoconfigure.RateLimitReactiveAutoConfiguration",
                        ROOT + ".autoconfigure.RateLimitServletAutoConfiguration",
                        ROOT + ".autoconfigure.RateLimiterBuilderCustomizer",
                        ROOT + ".autoconfigure.diagnostics.InvalidRateLimitConfigurationFailureAnalyzer");
    }

    @Test
    void everyClassIsInAPackageOfATechnology() {
        Set<String> packages = new TreeSet<>();
        for (JavaClass c : MAIN) {
            packages.add(c.getPackageName());
        }
        assertThat(packages)
                .containsOnly(
                        ROOT + ".autoconfigure",
                        ROOT + ".autoconfigure.diagnostics",
                        ROOT + ".internal.method",
                        ROOT + ".internal.web.servlet",
                        ROOT + ".internal.web.reactive",
                        ROOT + ".actuate");
    }

    /**
     * One word for one thing: no two public top-level types of the published modules share a simple name. Names and
     * modifiers are the imported classes' own, so the import does not resolve the classes they use from the class
     * path (Spring's, Reactor's, Jedis's), which took seconds and changes none of them.
     */
    @Test
    void noTwoPublicTypesShareASimpleName() {
        JavaClasses published = ArchConfiguration.withThreadLocalScope(configuration -> {
            configuration.setResolveMissingDependenciesFromClassPath(false);
            return new ClassFileImporter()
                    .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                    .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TEST_FIXTURES)
                    .importPackages("io.github.ratelimit");
        });
        Map<String, Set<String>> byName = new TreeMap<>();
        for (JavaClass c : published) {
            if (c.isTopLevelClass()
                    && c.getModifiers().contains(JavaModifier.PUBLIC)
                    && !c.getPackageName().startsWith("io.github.ratelimit.testing")) {
                byName.computeIfAbsent(c.getSimpleName(), n -> new TreeSet<>()).add(c.getName());
            }
        }
        assertThat(byName)
                .as("public types of the published modules")
                .containsKeys("RateLimiter", "RateLimitFilter", "RateLimitAutoConfiguration");
        assertThat(byName)
                .allSatisfy((name, types) -> assertThat(types).as(name).hasSize(1));
    }
}
