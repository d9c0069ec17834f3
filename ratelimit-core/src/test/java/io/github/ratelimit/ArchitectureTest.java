package io.github.ratelimit;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.properties.HasName;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.github.ratelimit.testing.InternalTypes;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The core stays framework-free: every entry point (servlet filter, Spring aspect, plain Java) builds on it.
 */
class ArchitectureTest {

    /** Imported once for the class: {@link JavaClasses} is immutable, and each import reads the whole class path. */
    private static final JavaClasses CORE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.github.ratelimit");

    @Test
    void coreUsesNoSpringServletOrAspectJ() {
        noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("org.springframework..", "jakarta.servlet..", "javax.servlet..", "org.aspectj..")
                .because("ratelimit-core must stay usable from plain Java, a web.xml filter and Spring alike")
                .check(CORE);
    }

    @Test
    void keyResolutionUsesTheApiOnly() {
        noClasses()
                .that()
                .resideInAPackage("io.github.ratelimit.key..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("io.github.ratelimit.store..", "io.github.ratelimit.internal..")
                .because("keys are resolved from a request by the API's types alone (docs/architecture.md)")
                .check(CORE);
    }

    @Test
    void storesKnowNeitherTheEngineNorTheEntryPoints() {
        noClasses()
                .that()
                .resideInAnyPackage("io.github.ratelimit.store..", "io.github.ratelimit.redis..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "io.github.ratelimit.internal.config..",
                        "io.github.ratelimit.internal.web..",
                        "io.github.ratelimit.internal.metrics..")
                .orShould()
                .dependOnClassesThat()
                .haveFullyQualifiedName("io.github.ratelimit.internal.DefaultRateLimiter")
                .orShould()
                .dependOnClassesThat()
                .haveFullyQualifiedName("io.github.ratelimit.internal.DefaultGuard")
                .because("a store answers for buckets; the engine and the entry points use it, not the other way round")
                .check(CORE);
    }

    @Test
    void theStoreSpiAndTheLocalStoreKnowNothingOfRedis() {
        noClasses()
                .that()
                .resideInAnyPackage("io.github.ratelimit.store..", "io.github.ratelimit.internal.bucket..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.github.ratelimit.redis..")
                .orShould()
                .dependOnClassesThat()
                .resideInAPackage("redis.clients..")
                .because("everything Jedis lives in io.github.ratelimit.redis (docs/architecture.md)")
                .check(CORE);
    }

    @Test
    void onlyTheRedisPackageUsesJedis() {
        noClasses()
                .that()
                .resideOutsideOfPackages(
                        "io.github.ratelimit.redis..",
                        "io.github.ratelimit.internal.config..",
                        "io.github.ratelimit.testing..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("redis.clients..")
                .because(
                        "Jedis is confined to the Redis stores and the settings that build them (and the test harness)")
                .check(CORE);
    }

    /**
     * What the API's factory methods build (the engine, the real-time waiter, the fixed-maps limit provider), and the
     * engine's list of one allowed verdict, which a {@code Decision} keeps without copying it.
     */
    private static final String ENGINE_FACTORIES = "io\\.github\\.ratelimit\\.internal\\."
            + "(DefaultRateLimiter|ScheduledWaiter|MapLimitProvider|bucket\\.AllowedVerdict)(\\$.*)?";

    @Test
    void theApiUsesInternalOnlyBehindItsFactoryMethods() {
        noClasses()
                .that()
                .resideInAnyPackage("io.github.ratelimit", "io.github.ratelimit.key..", "io.github.ratelimit.support..")
                .should()
                .dependOnClassesThat(JavaClass.Predicates.resideInAPackage("io.github.ratelimit.internal..")
                        .and(DescribedPredicate.not(HasName.Predicates.nameMatching(ENGINE_FACTORIES))))
                .because("the API's types build the engine behind factory methods (RateLimiter.builder(), "
                        + "RateLimiter.Waiter.system(), LimitProvider.builder()) and use nothing else of internal "
                        + "but the engine's verdict list a Decision keeps as it is")
                .check(CORE);
    }

    @Test
    void supportIsALeaf() {
        noClasses()
                .that()
                .resideInAPackage("io.github.ratelimit.support..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "io.github.ratelimit",
                        "io.github.ratelimit.key..",
                        "io.github.ratelimit.store..",
                        "io.github.ratelimit.redis..",
                        "io.github.ratelimit.internal..")
                .because("the API's helpers use nothing of the project, so every package may use them")
                .check(CORE);
    }

    /**
     * The API a newcomer has to hold: the user API, the configuration model and the Redis stores' builders, and
     * the one class that names Micrometer's types: 31 top-level types, listed so that a type made public, or one gone, is a decision this test and
     * docs/architecture.md record.
     */
    private static final List<String> PUBLIC_API = List.of(
            "io.github.ratelimit.Algorithm",
            "io.github.ratelimit.CallTooLargeException",
            "io.github.ratelimit.Decision",
            "io.github.ratelimit.Guard",
            "io.github.ratelimit.HttpStatuses",
            "io.github.ratelimit.InvalidRateLimitConfigurationException",
            "io.github.ratelimit.Limit",
            "io.github.ratelimit.LimitProvider",
            "io.github.ratelimit.MissingKeyPolicy",
            "io.github.ratelimit.Mode",
            "io.github.ratelimit.RateLimit",
            "io.github.ratelimit.RateLimitExceededException",
            "io.github.ratelimit.RateLimitHeaders",
            "io.github.ratelimit.RateLimiter",
            "io.github.ratelimit.RequestContext",
            "io.github.ratelimit.Rule",
            "io.github.ratelimit.StoreFailurePolicy",
            "io.github.ratelimit.config.RateLimitConfig",
            "io.github.ratelimit.key.ClientIpResolver",
            "io.github.ratelimit.key.KeyResolver",
            "io.github.ratelimit.key.NamedKeyResolver",
            "io.github.ratelimit.micrometer.MicrometerObservations",
            "io.github.ratelimit.redis.JedisBucketStore",
            "io.github.ratelimit.redis.LimitAdmin",
            "io.github.ratelimit.redis.RedisLimitProvider",
            "io.github.ratelimit.store.BucketStore",
            "io.github.ratelimit.store.LocalBucketStore",
            "io.github.ratelimit.store.RateLimitStoreException",
            "io.github.ratelimit.support.Durations",
            "io.github.ratelimit.support.LogText",
            "io.github.ratelimit.support.RateLimitedLog");

    @Test
    void thePublicApiIsExactlyTheListedTopLevelTypes() {
        List<String> api = InternalTypes.publicTypesOutsideInternal(CORE).stream()
                .filter(n -> !n.startsWith("io.github.ratelimit.testing.")) // the Redis test harness, on the class path
                .toList();
        assertThat(api).as("public top-level types outside internal").containsExactlyElementsOf(PUBLIC_API);
    }

    /** The configuration model is plain data over the API's constants: every face binds it, so it binds to nothing. */
    @Test
    void theConfigurationModelUsesOnlyTheApi() {
        noClasses()
                .that()
                .resideInAPackage("io.github.ratelimit.config..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "io.github.ratelimit.internal..",
                        "io.github.ratelimit.key..",
                        "io.github.ratelimit.store..",
                        "io.github.ratelimit.redis..",
                        "io.github.ratelimit.support..")
                .because("the model holds values as written; the settings read and check them")
                .check(CORE);
    }

    @Test
    void publicSignaturesExposeNoInternalType() {
        InternalTypes.areNamedByNoPublicSignature().check(CORE);
    }

    /**
     * {@code io.github.ratelimit.internal} is the project's own: the filter, the starter, the benchmarks and the tests
     * share its plumbing (settings, headers, URL rules), but the samples, which show what users write, never use it,
     * so whatever they need is public API. Checked over the sources of every sample.
     */
    @Test
    void noSampleUsesTheInternalPackage() throws java.io.IOException {
        java.nio.file.Path core = java.nio.file.Path.of(System.getProperty("basedir", "."))
                .toAbsolutePath()
                .normalize();
        java.nio.file.Path root = core.getParent();
        assertThat(root.resolve("pom.xml"))
                .as("the repository's root pom next to %s", core)
                .exists();
        List<String> offenders = new ArrayList<>();
        int scanned = 0;
        try (var files = java.nio.file.Files.walk(root)) {
            for (java.nio.file.Path file : (Iterable<java.nio.file.Path>) files::iterator) {
                String path = root.relativize(file).toString().replace('\\', '/');
                if (!path.endsWith(".java") || !path.startsWith("samples/") || path.contains("/target/")) {
                    continue;
                }
                scanned++;
                if (java.nio.file.Files.readString(file).contains("io.github.ratelimit.internal")) {
                    offenders.add(path);
                }
            }
        }
        assertThat(scanned).as("sources of the samples").isGreaterThan(20);
        assertThat(offenders)
                .as("samples that use io.github.ratelimit.internal")
                .isEmpty();
    }

    /** Every package of main code, in every module, says what it is for and what it may use. */
    @Test
    void everyMainPackageHasAPackageInfo() throws java.io.IOException {
        java.nio.file.Path root = java.nio.file.Path.of(System.getProperty("basedir", "."))
                .toAbsolutePath()
                .normalize()
                .getParent();
        java.util.Set<java.nio.file.Path> packages = new java.util.TreeSet<>();
        try (var files = java.nio.file.Files.walk(root)) {
            for (java.nio.file.Path file : (Iterable<java.nio.file.Path>) files::iterator) {
                String path = root.relativize(file).toString().replace('\\', '/');
                if (path.endsWith(".java")
                        && path.contains("/src/main/java/")
                        && !path.contains("/target/")
                        && !path.startsWith(".")) {
                    packages.add(file.getParent());
                }
            }
        }
        assertThat(packages).as("main packages").hasSizeGreaterThan(20);
        assertThat(packages)
                .as("main packages without a package-info.java")
                .allSatisfy(p -> assertThat(p.resolve("package-info.java"))
                        .as(root.relativize(p).toString())
                        .exists());
    }
}
