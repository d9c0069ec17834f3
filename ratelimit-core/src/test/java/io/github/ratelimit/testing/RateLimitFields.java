package io.github.ratelimit.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.greenbytes.http.sfv.IntegerItem;
import org.greenbytes.http.sfv.ListElement;
import org.greenbytes.http.sfv.Parser;
import org.greenbytes.http.sfv.StringItem;

/**
 * Reads the draft's {@code RateLimit-Policy} and {@code RateLimit} fields with a real RFC 8941/9651 parser, as a
 * client would: a list of string items with integer parameters.
 */
public final class RateLimitFields {

    private RateLimitFields() {}

    /**
     * @param field a field's value
     * @param parameters the parameters every item must have, and no others
     * @return item name → parameter → value, in field order
     */
    public static Map<String, Map<String, Long>> parse(String field, String... parameters) {
        Map<String, Map<String, Long>> items = new LinkedHashMap<>();
        for (ListElement<?> element : Parser.parseList(field).get()) {
            assertThat(element).as("item of %s", field).isInstanceOf(StringItem.class);
            StringItem item = (StringItem) element;
            assertThat(item.getParams().keySet())
                    .as("parameters of %s", item.get())
                    .isEqualTo(Set.of(parameters));
            Map<String, Long> values = new LinkedHashMap<>();
            item.getParams().forEach((name, value) -> {
                assertThat(value).as("%s of %s", name, item.get()).isInstanceOf(IntegerItem.class);
                values.put(name, ((IntegerItem) value).get());
            });
            assertThat(items.put(item.get(), values))
                    .as("item %s once", item.get())
                    .isNull();
        }
        return items;
    }
}
