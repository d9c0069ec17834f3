package io.github.ratelimit.internal.config;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.config.RateLimitConfig;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;

/**
 * Fills a {@link RateLimitConfig} from text, as a rules file writes it: canonical names (kebab case, indices in
 * brackets, map keys after the map's name), lists as comma-separated text or indexed entries. Reflective over the
 * model, so a field added there is bound here with no second list of names. A value that is not of its field's kind
 * is refused with a message naming the property; an empty value leaves the default.
 */
final class TextBinder {

    private final SettingsValues v;

    /**
     * @param v the checks and messages
     */
    TextBinder(SettingsValues v) {
        this.v = v;
    }

    /**
     * @param values {@code ratelimit.*} values by canonical name, every name known to the model
     * @return a new model holding them
     */
    RateLimitConfig bind(Map<String, String> values) {
        RateLimitConfig config = new RateLimitConfig();
        // An empty value leaves the default, but still makes the rule or key it is in: that entry is then checked.
        joinListElements(values)
                .forEach((name, value) ->
                        bind(config, name.substring(ConfigModel.P.length()), name, value == null ? "" : value.trim()));
        return config;
    }

    private void bind(Object bean, String rest, String name, String value) {
        int end = 0;
        while (end < rest.length() && rest.charAt(end) != '.' && rest.charAt(end) != '[') {
            end++;
        }
        String token = rest.substring(0, end);
        Field field = ConfigModel.fields(bean.getClass()).stream()
                .filter(f -> ConfigModel.kebab(f.getName()).equals(token))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no property " + name));
        if (field.isAnnotationPresent(RateLimitConfig.Described.class)) {
            if (value.isEmpty()) {
                return;
            }
            if (Map.class.isAssignableFrom(field.getType())) {
                @SuppressWarnings("unchecked")
                Map<String, Object> map = (Map<String, Object>) ConfigModel.read(field, bean);
                boolean lists = field.getGenericType().getTypeName().endsWith("java.util.List<java.lang.String>>");
                map.put(rest.substring(end + 1), lists ? new ArrayList<>(SettingsValues.split(value)) : value);
            } else {
                ConfigModel.write(field, bean, convert(field.getType(), name, value));
            }
        } else if (List.class.isAssignableFrom(field.getType())) {
            int close = rest.indexOf(']', end);
            int index = Integer.parseInt(rest.substring(end + 1, close));
            @SuppressWarnings("unchecked")
            List<Object> list = (List<Object>) ConfigModel.read(field, bean);
            while (list.size() <= index) {
                list.add(null);
            }
            if (list.get(index) == null) {
                list.set(index, ConfigModel.newInstance(ConfigModel.elementType(field)));
            }
            bind(list.get(index), rest.substring(close + 2), name, value);
        } else {
            bind(ConfigModel.read(field, bean), rest.substring(end + 1), name, value);
        }
    }

    /**
     * @param name a canonical property name
     * @param value its text
     * @throws InvalidRateLimitConfigurationException when the text is not of the property's kind
     *         (a whole number, a boolean, a duration ...), with the message the rules file gives
     */
    void check(String name, String value) {
        ConfigModel.Entry entry = ConfigModel.entry(SettingsCatalog.pattern(name));
        if (entry != null
                && !Map.class.isAssignableFrom(entry.field().getType())
                && SettingsValues.text(value) != null) {
            convert(entry.field().getType(), name, value.trim());
        }
    }

    private Object convert(Class<?> type, String name, String value) {
        if (type == String.class) {
            return value;
        }
        if (type == boolean.class || type == Boolean.class) {
            return v.parseBoolean(name, value);
        }
        if (type == int.class || type == Integer.class) {
            long parsed = v.whole(name, v.parseWhole(name, value));
            return (int) parsed;
        }
        if (type == long.class || type == Long.class) {
            return v.whole(name, v.parseWhole(name, value));
        }
        if (type == double.class || type == Double.class) {
            return v.parseDecimal(name, value);
        }
        if (type == Duration.class) {
            return v.parseDuration(name, value);
        }
        if (type == List.class) {
            return new ArrayList<>(SettingsValues.split(value));
        }
        throw new IllegalStateException("no conversion to " + type + " for " + name);
    }

    /** Indexed entries of list properties ({@code limits[0]}, {@code limits[1]}) become one comma-separated value. */
    private static Map<String, String> joinListElements(Map<String, String> in) {
        Map<String, TreeMap<Integer, String>> lists = new LinkedHashMap<>();
        Map<String, String> out = new TreeMap<>();
        for (Map.Entry<String, String> e : in.entrySet()) {
            Matcher m = SettingsCatalog.LIST_ELEMENT.matcher(e.getKey());
            if (m.matches() && !e.getKey().matches("ratelimit\\.(rules|keys)\\[\\d{1,6}]")) {
                lists.computeIfAbsent(m.group(1), k -> new TreeMap<>()).put(Integer.parseInt(m.group(2)), e.getValue());
            } else {
                out.put(e.getKey(), e.getValue());
            }
        }
        lists.forEach((name, elements) -> {
            String joined = String.join(", ", elements.values());
            out.merge(name, joined, (a, b) -> a.isEmpty() ? b : a + ", " + b);
        });
        return out;
    }
}
