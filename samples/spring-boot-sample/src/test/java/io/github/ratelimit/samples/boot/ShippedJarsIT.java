package io.github.ratelimit.samples.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarInputStream;
import java.util.jar.Manifest;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;

/**
 * The library's jars as an application ships them (inside the sample's executable jar): each published module
 * carries the license the POMs declare, and a stable module name for the module path. Runs after {@code package}, in
 * the failsafe phase.
 */
class ShippedJarsIT {

    /** The published modules' jars, by the start of their name, and the module name each declares. */
    private static final Map<String, String> MODULES = Map.of(
            "ratelimit-core-", "io.github.ratelimit.core",
            "ratelimit-servlet-", "io.github.ratelimit.servlet",
            "ratelimit-spring-boot-starter-", "io.github.ratelimit.spring.boot");

    @Test
    void everyPublishedJarCarriesTheLicenseTheSecurityPolicyAndAModuleName() throws IOException {
        byte[] license = Files.readAllBytes(Path.of("../../LICENSE"));
        byte[] security = Files.readAllBytes(Path.of("../../SECURITY.md"));
        assertThat(new String(license, StandardCharsets.US_ASCII))
                .contains("Apache License", "Version 2.0, January 2004");
        Map<String, String> found = new TreeMap<>();
        try (ZipFile sample = new ZipFile(System.getProperty("sample.jar"))) {
            for (ZipEntry entry : Collections.list(sample.entries())) {
                String name = entry.getName().substring(entry.getName().lastIndexOf('/') + 1);
                if (!entry.getName().startsWith("BOOT-INF/lib/") || name.contains("-tests")) {
                    continue;
                }
                for (Map.Entry<String, String> module : MODULES.entrySet()) {
                    if (name.startsWith(module.getKey())
                            && name.endsWith(".jar")
                            && !name.startsWith(module.getKey() + "boot")) {
                        byte[] jar;
                        try (InputStream in = sample.getInputStream(entry)) {
                            jar = in.readAllBytes();
                        }
                        found.put(module.getValue(), check(name, jar, license, security));
                    }
                }
            }
        }
        assertThat(found).as("the published modules inside the sample").containsOnlyKeys(MODULES.values());
        found.forEach((module, declared) -> assertThat(declared).as(module).isEqualTo(module));
    }

    /** @return the jar's Automatic-Module-Name, once its license and security policy have been checked */
    private static String check(String name, byte[] jar, byte[] license, byte[] security) throws IOException {
        try (JarInputStream in = new JarInputStream(new ByteArrayInputStream(jar))) {
            Manifest manifest = in.getManifest();
            assertThat(manifest).as(name + " has a manifest").isNotNull();
            boolean licensed = false;
            boolean policy = false;
            for (ZipEntry e = in.getNextEntry(); e != null; e = in.getNextEntry()) {
                if (e.getName().equals("META-INF/LICENSE")) {
                    assertThat(in.readAllBytes())
                            .as(name + "'s META-INF/LICENSE")
                            .isEqualTo(license);
                    licensed = true;
                } else if (e.getName().equals("META-INF/SECURITY.md")) {
                    assertThat(in.readAllBytes())
                            .as(name + "'s META-INF/SECURITY.md")
                            .isEqualTo(security);
                    policy = true;
                }
            }
            assertThat(licensed).as(name + " carries META-INF/LICENSE").isTrue();
            assertThat(policy).as(name + " carries META-INF/SECURITY.md").isTrue();
            return manifest.getMainAttributes().getValue("Automatic-Module-Name");
        }
    }
}
