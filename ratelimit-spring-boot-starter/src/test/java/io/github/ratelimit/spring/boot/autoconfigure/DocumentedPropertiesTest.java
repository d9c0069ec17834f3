package io.github.ratelimit.spring.boot.autoconfigure;

import io.github.ratelimit.internal.config.RateLimitSettings;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The pages the start-up messages point to ("Every property: docs/spring-boot.md") list every property of the
 * settings model that their entry point reads, each in a table row with its default.
 */
class DocumentedPropertiesTest {

    @ParameterizedTest
    @CsvSource({"../docs/spring-boot.md, SPRING_BOOT", "../docs/servlet.md, SERVLET_FILTER"})
    void everyPropertyHasARowWithItsDefault(String page, RateLimitSettings.EntryPoint entryPoint) throws Exception {
        List<String> rows = Files.readAllLines(Path.of(page)).stream().filter(l -> l.startsWith("| `")).toList();
        for (RateLimitSettings.Property p : RateLimitSettings.properties()) {
            if (p.entryPoint() != null && p.entryPoint() != entryPoint) {
                continue;
            }
            List<String> matching = rows.stream().filter(r -> r.startsWith("| `" + p.name() + "` |")).toList();
            assertThat(matching).as("a row for %s in %s", p.name(), page).hasSize(1);
            if (p.defaultValue() != null) {
                assertThat(matching.get(0)).as("the default of %s in %s", p.name(), page)
                        .contains("`" + p.defaultValue() + "`");
            }
        }
    }
}
