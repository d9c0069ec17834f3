package io.github.ratelimit.samples.plain;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * ratelimit-bom, which this sample imports: it has the project's version, no parent (so it imports nothing but
 * itself into an application's build), and manages exactly the published modules, each at the project's version.
 * A module is published unless its pom, or the pom of the aggregator that lists it, sets {@code maven.deploy.skip}.
 */
class BomTest {

    private static final Path ROOT =
            Path.of(System.getProperty("ratelimit.root", "../..")).normalize();
    private static final String VERSION = System.getProperty("ratelimit.version");

    @Test
    void hasTheProjectsCoordinatesAndNoParent() throws Exception {
        Element bom = read(ROOT.resolve("ratelimit-bom/pom.xml"));
        assertThat(VERSION).as("ratelimit.version, set by the sample's pom").isNotBlank();
        assertThat(text(bom, "groupId")).isEqualTo("io.github.ratelimit");
        assertThat(text(bom, "version"))
                .as("ratelimit-bom's version, which must be the parent's")
                .isEqualTo(VERSION);
        assertThat(text(bom, "packaging")).isEqualTo("pom");
        assertThat(child(bom, "parent"))
                .as("a parent would bring Spring Boot's BOM into applications")
                .isNull();
        for (String field : List.of("name", "description", "url")) {
            assertThat(text(bom, field)).as(field).isNotBlank();
        }
        for (String field : List.of("licenses", "scm", "developers")) {
            assertThat(child(bom, field)).as(field).isNotNull();
        }
    }

    @Test
    void managesExactlyThePublishedModulesAtTheProjectsVersion() throws Exception {
        Element management = child(read(ROOT.resolve("ratelimit-bom/pom.xml")), "dependencyManagement");
        List<String> managed = new ArrayList<>();
        for (Element dependency : children(child(management, "dependencies"), "dependency")) {
            assertThat(text(dependency, "groupId")).isEqualTo("io.github.ratelimit");
            assertThat(text(dependency, "version")).isEqualTo("${project.version}");
            assertThat(child(dependency, "scope"))
                    .as("an import of another BOM")
                    .isNull();
            managed.add(text(dependency, "artifactId"));
        }
        List<String> published = new ArrayList<>();
        collectPublished(ROOT, false, published);
        assertThat(published)
                .containsExactlyInAnyOrder("ratelimit-core", "ratelimit-servlet", "ratelimit-spring-boot-starter");
        assertThat(managed).containsExactlyInAnyOrderElementsOf(published);
    }

    private static void collectPublished(Path dir, boolean skippedAbove, List<String> published) throws Exception {
        Element pom = read(dir.resolve("pom.xml"));
        Element properties = child(pom, "properties");
        boolean skipped = skippedAbove || (properties != null && "true".equals(text(properties, "maven.deploy.skip")));
        String packaging = text(pom, "packaging");
        if (!skipped && (packaging == null || packaging.equals("jar"))) {
            published.add(text(pom, "artifactId"));
        }
        Element modules = child(pom, "modules");
        if (modules != null) {
            for (Element module : children(modules, "module")) {
                collectPublished(dir.resolve(module.getTextContent().trim()), skipped, published);
            }
        }
    }

    private static Element read(Path pom) throws Exception {
        assertThat(pom).exists();
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        try (var in = Files.newInputStream(pom)) {
            Document document = factory.newDocumentBuilder().parse(in);
            return document.getDocumentElement();
        }
    }

    private static Element child(Element parent, String name) {
        List<Element> found = children(parent, name);
        return found.isEmpty() ? null : found.get(0);
    }

    private static List<Element> children(Element parent, String name) {
        List<Element> found = new ArrayList<>();
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(name)) {
                found.add(e);
            }
        }
        return found;
    }

    private static String text(Element parent, String name) {
        Element e = child(parent, name);
        return e == null ? null : e.getTextContent().trim();
    }
}
