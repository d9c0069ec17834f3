package io.github.ratelimit;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The core stays framework-free: every entry point (servlet filter, Spring aspect, plain Java) builds on it.
 */
class ArchitectureTest {

    private final JavaClasses core = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.github.ratelimit");

    @Test
    void coreUsesNoSpringServletOrAspectJ() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage(
                        "org.springframework..", "jakarta.servlet..", "javax.servlet..", "org.aspectj..")
                .because("ratelimit-core must stay usable from plain Java, a web.xml filter and Spring alike")
                .check(core);
    }

    @Test
    void publicApiDoesNotDependOnInternals() {
        noClasses().that().resideInAnyPackage("io.github.ratelimit.key..", "io.github.ratelimit.store..")
                .should().dependOnClassesThat().resideInAPackage("io.github.ratelimit.internal..")
                .check(core);
    }
}
