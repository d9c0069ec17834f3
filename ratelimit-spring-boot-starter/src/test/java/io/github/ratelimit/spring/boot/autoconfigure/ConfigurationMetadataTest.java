package io.github.ratelimit.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.internal.config.RateLimitSettings;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The IDE metadata says what the settings model does: every Spring Boot property of {@link RateLimitSettings} is
 * in the generated metadata, with the model's default and allowed values, and the fields of each URL rule and key
 * are described on {@code ratelimit.rules} and {@code ratelimit.keys} (Boot's metadata cannot name list elements).
 * The additional metadata file is derived from the model; when they differ, this test prints the file to write.
 */
class ConfigurationMetadataTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode read(String resource) throws Exception {
        try (InputStream in = ConfigurationMetadataTest.class.getClassLoader().getResourceAsStream(resource)) {
            assertThat(in).as(resource).isNotNull();
            return JSON.readTree(in);
        }
    }

    private static List<RateLimitSettings.Property> bootProperties() {
        return RateLimitSettings.properties().stream()
                .filter(p -> p.entryPoint() != RateLimitSettings.EntryPoint.SERVLET_FILTER)
                .toList();
    }

    /** The additional metadata the model implies. */
    static ObjectNode expected() {
        JsonNodeFactory f = JsonNodeFactory.instance;
        ObjectNode root = f.objectNode();
        ArrayNode properties = root.putArray("properties");
        ArrayNode hints = root.putArray("hints");
        for (RateLimitSettings.Property p : bootProperties()) {
            if (p.name().contains("[i]") || p.name().contains("<")) {
                continue;
            }
            ObjectNode node = properties.addObject().put("name", p.name()).put("description", p.description());
            if (p.defaultValue() != null) {
                String d = p.defaultValue();
                if (d.equals("true") || d.equals("false")) {
                    node.put("defaultValue", Boolean.parseBoolean(d));
                } else if (d.matches("-?\\d+")) {
                    node.put("defaultValue", Long.parseLong(d));
                } else if (d.contains(",")) {
                    ArrayNode list = node.putArray("defaultValue");
                    for (String v : d.split(",")) {
                        list.add(v.trim());
                    }
                } else {
                    node.put("defaultValue", d);
                }
            }
            if (!p.values().isEmpty() && !p.values().equals(List.of("true", "false"))) {
                ArrayNode values = hints.addObject().put("name", p.name()).putArray("values");
                p.values().forEach(v -> values.addObject().put("value", v));
            }
        }
        properties
                .addObject()
                .put("name", "ratelimit.rules")
                .put(
                        "description",
                        "URL rules, enforced by a servlet " + "filter. Each rule: " + describe("ratelimit.rules[i]."));
        properties
                .addObject()
                .put("name", "ratelimit.keys")
                .put(
                        "description",
                        "Keys with limits or a plan of their " + "own. Each key: " + describe("ratelimit.keys[i]."));
        properties
                .addObject()
                .put("name", "ratelimit.plans")
                .put(
                        "description",
                        "Limits of named plans: "
                                + "ratelimit.plans.<plan>=<limits>, e.g. ratelimit.plans.free=10/1m, 1000/1d.");
        // The model holds the rules file's own properties too; Spring Boot refuses them, so the IDE does not offer
        // them.
        ArrayNode ignored = root.putObject("ignored").putArray("properties");
        RateLimitSettings.properties().stream()
                .filter(p -> p.entryPoint() == RateLimitSettings.EntryPoint.SERVLET_FILTER)
                .forEach(p -> ignored.addObject().put("name", p.name().replaceAll("\\.<[a-z]+>", "")));
        return root;
    }

    private static String describe(String prefix) {
        return bootProperties().stream()
                .filter(p -> p.name().startsWith(prefix))
                .map(p -> p.name().substring(prefix.length()) + (p.values().isEmpty() ? "" : " " + p.values())
                        + (p.defaultValue() == null ? "" : " (default " + p.defaultValue() + ")") + ": "
                        + p.description())
                .collect(Collectors.joining(" "));
    }

    /**
     * The file in the sources is what the model implies. After a change to the model, write it anew with
     * {@value #UPDATE}, and build again (the configuration processor merges it into the generated metadata).
     */
    @Test
    void theAdditionalMetadataIsDerivedFromTheSettingsModel() throws Exception {
        String expected = JSON.writerWithDefaultPrettyPrinter().writeValueAsString(expected()) + "\n";
        Path file = Path.of("src/main/resources/META-INF/additional-spring-configuration-metadata.json");
        if (Boolean.getBoolean("ratelimit.metadata.write")) {
            Files.writeString(file, expected);
        }
        String actual = Files.readString(file);
        assertThat(actual)
                .as("%s differs from the model. Update it with: %s", file, UPDATE)
                .isEqualTo(expected);
    }

    /** The command that writes the additional metadata from the model. */
    static final String UPDATE = "./mvnw -B -o -pl ratelimit-spring-boot-starter -am test "
            + "-Dtest=ConfigurationMetadataTest -Dsurefire.failIfNoSpecifiedTests=false -Dratelimit.metadata.write=true";

    @Test
    void theGeneratedMetadataNamesEveryPropertyOfTheModelWithItsDefault() throws Exception {
        JsonNode generated = read("META-INF/spring-configuration-metadata.json");
        Set<String> names = new TreeSet<>();
        for (JsonNode p : generated.get("properties")) {
            names.add(p.get("name").asString());
        }
        for (RateLimitSettings.Property p : bootProperties()) {
            String name = p.name().replaceAll("\\[i]\\..*", "").replaceAll("\\.<[a-z]+>", "");
            assertThat(names).as("metadata for %s", p.name()).contains(name);
        }
        for (JsonNode p : generated.get("properties")) {
            String name = p.get("name").asString();
            if (name.startsWith("ratelimit.")
                    && !Set.of("ratelimit.rules", "ratelimit.keys", "ratelimit.plans")
                            .contains(name)) {
                RateLimitSettings.Property model = bootProperties().stream()
                        .filter(m -> m.name().equals(name))
                        .findFirst()
                        .orElse(null);
                assertThat(model)
                        .as("%s is in the metadata but not in the model", name)
                        .isNotNull();
                if (model.defaultValue() != null) {
                    assertThat(p.get("defaultValue")).as("default of %s", name).isNotNull();
                }
                assertThat(p.get("description")).as("description of %s", name).isNotNull();
            }
        }
    }
}
