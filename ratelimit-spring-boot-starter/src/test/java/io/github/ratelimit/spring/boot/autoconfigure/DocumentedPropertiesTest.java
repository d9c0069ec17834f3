package io.github.ratelimit.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.internal.config.RateLimitSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The one property reference, docs/properties.md (where the pages the start-up messages point to send their readers),
 * lists every property of the settings model in a table row with its default and the face that reads it; it names no
 * property the model does not know, and no other page repeats a property's row.
 */
class DocumentedPropertiesTest {

    private static final Path DOCS = Path.of("../docs");
    private static final Path REFERENCE = DOCS.resolve("properties.md");

    @Test
    void everyPropertyHasOneRowWithItsDefaultAndItsFace() throws IOException {
        List<List<String>> rows = propertyRows(REFERENCE);
        for (RateLimitSettings.Property p : RateLimitSettings.properties()) {
            List<List<String>> matching = rows.stream()
                    .filter(r -> r.get(0).equals("`" + p.name() + "`"))
                    .toList();
            assertThat(matching).as("a row for %s in %s", p.name(), REFERENCE).hasSize(1);
            List<String> row = matching.get(0);
            assertThat(row)
                    .as("the cells of the row of %s (property, default, face, meaning)", p.name())
                    .hasSize(4);
            if (p.defaultValue() != null) {
                assertThat(row.get(1))
                        .as("the default of %s in %s", p.name(), REFERENCE)
                        .contains("`" + p.defaultValue() + "`");
            }
            assertThat(row.get(2))
                    .as("the face of %s in %s", p.name(), REFERENCE)
                    .isEqualTo(face(p.entryPoint()));
        }
    }

    @Test
    void noRowNamesAnUnknownProperty() throws IOException {
        Set<String> known = RateLimitSettings.properties().stream()
                .map(p -> "`" + p.name() + "`")
                .collect(Collectors.toSet());
        List<String> named = propertyRows(REFERENCE).stream()
                .map(r -> r.get(0))
                .filter(cell -> cell.startsWith("`ratelimit."))
                .toList();
        assertThat(named).as("the properties %s names", REFERENCE).isNotEmpty();
        assertThat(named)
                .as("properties %s names that the settings model does not know", REFERENCE)
                .allMatch(known::contains);
        assertThat(named).as("properties %s names twice", REFERENCE).doesNotHaveDuplicates();
    }

    @Test
    void noOtherPageRepeatsAPropertysRow() throws IOException {
        Set<String> known = RateLimitSettings.properties().stream()
                .map(p -> "`" + p.name() + "`")
                .collect(Collectors.toSet());
        List<Path> pages = new ArrayList<>();
        pages.add(Path.of("../README.md"));
        try (Stream<Path> docs = Files.list(DOCS)) {
            docs.filter(p -> p.toString().endsWith(".md") && !p.equals(REFERENCE))
                    .forEach(pages::add);
        }
        for (Path page : pages) {
            List<String> repeated = propertyRows(page).stream()
                    .map(r -> r.get(0))
                    .filter(known::contains)
                    .toList();
            assertThat(repeated)
                    .as("property rows in %s (they belong in %s)", page, REFERENCE)
                    .isEmpty();
        }
    }

    private static String face(RateLimitSettings.EntryPoint entryPoint) {
        if (entryPoint == null) {
            return "both";
        }
        return switch (entryPoint) {
            case SERVLET_FILTER -> "web.xml";
            case SPRING_BOOT -> "Spring Boot";
        };
    }

    /** The cells of each table row whose first cell is code, trimmed; a {@code \|} inside a cell does not split it. */
    private static List<List<String>> propertyRows(Path page) throws IOException {
        return Files.readAllLines(page).stream()
                .filter(l -> l.startsWith("| `"))
                .map(l -> Stream.of(l.substring(1, l.lastIndexOf('|')).split("(?<!\\\\)\\|"))
                        .map(String::strip)
                        .toList())
                .toList();
    }
}
