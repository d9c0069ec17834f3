package io.github.ratelimit.spring.boot;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.TreeMap;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The starter's packages by technology, as their {@code package-info.java} say: the technologies never meet but
 * through the {@code method} package's SPI, only the auto-configuration wires them, and no package grows past 15
 * files.
 */
class StarterArchitectureTest {

    private static final String ROOT = "io.github.ratelimit.spring.boot";

    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages(ROOT);

    @Test
    void onlyTheAutoConfigurationWiresThePackages() {
        noClasses().that().resideOutsideOfPackage(ROOT + ".autoconfigure..")
                .should().dependOnClassesThat().resideInAPackage(ROOT + ".autoconfigure..").check(MAIN);
    }

    @Test
    void theMethodPackageKnowsNoWebTechnology() {
        noClasses().that().resideInAPackage(ROOT + ".method..").should().dependOnClassesThat()
                .resideInAnyPackage(ROOT + ".web..", ROOT + ".actuate..", "jakarta.servlet..", "reactor..",
                        "org.springframework.web..")
                .check(MAIN);
    }

    @Test
    void servletAndReactiveNeverMeet() {
        noClasses().that().resideInAPackage(ROOT + ".web.servlet..").should().dependOnClassesThat()
                .resideInAnyPackage(ROOT + ".web.reactive..", ROOT + ".actuate..", "reactor..").check(MAIN);
        noClasses().that().resideInAPackage(ROOT + ".web.reactive..").should().dependOnClassesThat()
                .resideInAnyPackage(ROOT + ".web.servlet..", ROOT + ".actuate..", "jakarta.servlet..").check(MAIN);
    }

    @Test
    void actuatorEndpointsUseTheCoreOnly() {
        noClasses().that().resideInAPackage(ROOT + ".actuate..").should().dependOnClassesThat()
                .resideInAnyPackage(ROOT + ".method..", ROOT + ".web..").check(MAIN);
    }

    @Test
    void everyClassIsInAPackageOfATechnologyAndNoPackageHoldsMoreThan15Files() {
        Map<String, Integer> files = new TreeMap<>();
        for (JavaClass c : MAIN) {
            if (c.isTopLevelClass()) {
                files.merge(c.getPackageName(), 1, Integer::sum);
            }
        }
        assertThat(files).containsOnlyKeys(ROOT + ".autoconfigure", ROOT + ".autoconfigure.diagnostics",
                ROOT + ".method", ROOT + ".web.servlet", ROOT + ".web.reactive", ROOT + ".actuate");
        assertThat(files).allSatisfy((pkg, n) -> assertThat(n).as(pkg).isLessThanOrEqualTo(15));
    }
}
