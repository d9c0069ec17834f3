package io.github.ratelimit.testing;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The rule every module's architecture test applies: no public signature outside an {@code internal} package names a
 * type of one. A type its users can reach (a public class whose enclosing classes are public too) exposes through its
 * supertypes and its public and protected constructors, methods and fields; a type named there, as itself or as a
 * generic type argument ({@code List<UrlRule>}), would be API in all but name.
 */
public final class InternalTypes {

    private static final String INTERNAL = ".internal";

    private InternalTypes() {}

    /**
     * @return the rule, to check against a module's main classes
     */
    public static ArchRule areNamedByNoPublicSignature() {
        return areNamedByNoPublicSignatureBut(DescribedPredicate.alwaysFalse());
    }

    /**
     * @param exempt the classes whose signatures the rule does not check yet, each a known exception
     * @return the rule, to check against a module's main classes
     */
    public static ArchRule areNamedByNoPublicSignatureBut(DescribedPredicate<? super JavaClass> exempt) {
        return classes()
                .that()
                .arePublic()
                .and()
                .resideOutsideOfPackage("..internal..")
                .and(DescribedPredicate.not(exempt))
                .should(new ArchCondition<JavaClass>("name no type of an internal package in a public signature") {
                    @Override
                    public void check(JavaClass type, ConditionEvents events) {
                        if (!reachable(type)) {
                            return;
                        }
                        for (String exposed : exposures(type)) {
                            events.add(SimpleConditionEvent.violated(type, exposed));
                        }
                    }
                })
                .because("an internal package is the project's own plumbing: what users can call must not need it "
                        + "(docs/architecture.md)");
    }

    /**
     * @param classes a module's main classes
     * @return the names of its public top-level types outside {@code internal} packages, sorted: what its users can
     *         name
     */
    public static List<String> publicTypesOutsideInternal(JavaClasses classes) {
        return classes.stream()
                .filter(c -> c.getModifiers().contains(JavaModifier.PUBLIC))
                .filter(JavaClass::isTopLevelClass)
                .filter(c -> !internal(c.getPackageName()))
                .map(JavaClass::getName)
                .filter(n -> !n.endsWith(".package-info"))
                .sorted()
                .toList();
    }

    private static boolean internal(String packageName) {
        return packageName.contains(INTERNAL + ".") || packageName.endsWith(INTERNAL);
    }

    /** Whether users can name the type: it and every class enclosing it are public. */
    private static boolean reachable(JavaClass type) {
        for (Optional<JavaClass> c = Optional.of(type);
                c.isPresent();
                c = c.get().getEnclosingClass()) {
            if (!c.get().getModifiers().contains(JavaModifier.PUBLIC)) {
                return false;
            }
        }
        return true;
    }

    private static List<String> exposures(JavaClass type) {
        List<String> found = new ArrayList<>();
        type.getSuperclass().ifPresent(s -> check(type.getName() + " extends", s, found));
        type.getInterfaces().forEach(i -> check(type.getName() + " implements", i, found));
        for (JavaField field : type.getFields()) {
            if (visible(field)) {
                check(field.getFullName(), field.getType(), found);
            }
        }
        for (JavaCodeUnit unit : type.getCodeUnits()) {
            if (!visible(unit) || unit.getModifiers().contains(JavaModifier.SYNTHETIC)) {
                continue;
            }
            check(unit.getFullName() + " returns", unit.getReturnType(), found);
            unit.getParameterTypes().forEach(p -> check(unit.getFullName() + " takes", p, found));
        }
        return found;
    }

    private static boolean visible(JavaMember member) {
        return member.getModifiers().contains(JavaModifier.PUBLIC)
                || member.getModifiers().contains(JavaModifier.PROTECTED);
    }

    private static void check(String where, JavaType type, List<String> found) {
        for (JavaClass named : type.getAllInvolvedRawTypes()) {
            if (internal(named.getPackageName())) {
                found.add(where + " " + named.getName());
            }
        }
    }
}
