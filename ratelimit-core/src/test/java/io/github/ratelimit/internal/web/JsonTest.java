package io.github.ratelimit.internal.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ratelimit.Mode;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The writer of the servlet module's JSON: every value kind, and strings escaped so none can break out. */
class JsonTest {

    @Test
    void writesMapsInOrderListsAndScalars() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("b", 1);
        m.put("a", List.of(2L, 2.5, true, "x"));
        m.put("none", null);
        m.put("mode", Mode.SOFT);
        m.put("delay", Duration.ofSeconds(2));
        m.put("nan", Double.NaN);
        m.put("nested", Map.of("k", List.of()));
        assertThat(Json.write(m))
                .isEqualTo("{\"b\":1,\"a\":[2,2.5,true,\"x\"],\"none\":null,\"mode\":\"SOFT\","
                        + "\"delay\":\"PT2S\",\"nan\":null,\"nested\":{\"k\":[]}}");
    }

    @Test
    void escapesEveryCharacterThatCouldEndAStringOrInjectMarkup() {
        assertThat(Json.write("q\"b\\n\nr\rt\t\u0001<>&\u2028\u2029é"))
                .isEqualTo("\"q\\\"b\\\\n\\nr\\rt\\t\\u0001\\u003c\\u003e\\u0026\\u2028\\u2029é\"");
        assertThat(Json.write(Map.of("<k>", "v"))).isEqualTo("{\"\\u003ck\\u003e\":\"v\"}");
        assertThat(Json.write(Arrays.asList("a", null))).isEqualTo("[\"a\",null]");
    }
}
