package io.github.ratelimit.servlet;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/** The filter must run in a plain web.xml application: no Spring anywhere in this module. */
class ServletArchitectureTest {

    @Test
    void usesNoSpring() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("org.springframework..", "org.aspectj..")
                .check(new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .importPackages("io.github.ratelimit.servlet"));
    }
}
