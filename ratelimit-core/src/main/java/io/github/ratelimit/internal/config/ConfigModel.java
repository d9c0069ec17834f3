package io.github.ratelimit.internal.config;

import io.github.ratelimit.config.RateLimitConfig;
import io.github.ratelimit.config.RateLimitConfig.Described;
import io.github.ratelimit.config.RateLimitConfig.Face;
import io.github.ratelimit.internal.config.RateLimitSettings.EntryPoint;
import io.github.ratelimit.internal.config.RateLimitSettings.Property;
import io.github.ratelimit.support.Durations;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What reflection reads off {@link RateLimitConfig}: every property's canonical name ({@code [i]} for a list
 * element's index, {@code <plan>} for a map key), its field, default (the field's initializer), description and
 * allowed values. The catalog, the rules-file binder and the checks all read the model through this, so a property is
 * one field.
 */
final class ConfigModel {

    /** One property: its catalog entry and the field that holds it. */
    record Entry(Property property, Field field, Described described) {}

    static final String P = "ratelimit.";
    private static final Map<String, Entry> ENTRIES = new LinkedHashMap<>();

    static {
        walk(RateLimitConfig.class, new RateLimitConfig(), P);
    }

    private ConfigModel() {}

    private static void walk(Class<?> type, Object defaults, String prefix) {
        for (Field field : fields(type)) {
            String name = prefix + kebab(field.getName());
            Described described = field.getAnnotation(Described.class);
            Object value = read(field, defaults);
            if (described != null) {
                String[] values = described.values().length == 0 && field.getType() == boolean.class
                        ? new String[] {"true", "false"}
                        : described.values();
                String fullName = isMap(field) ? name + "." + described.mapKey() : name;
                String shown = described.shown().isEmpty() ? text(value) : described.shown();
                Property property =
                        new Property(fullName, shown, List.of(values), entryPoint(described.only()), described.value());
                ENTRIES.put(fullName, new Entry(property, field, described));
            } else if (List.class.isAssignableFrom(field.getType())) {
                Class<?> element = elementType(field);
                walk(element, newInstance(element), name + "[i].");
            } else {
                walk(field.getType(), value, name + ".");
            }
        }
    }

    /** @return the instance fields of a model class, in declaration order */
    static List<Field> fields(Class<?> type) {
        List<Field> result = new ArrayList<>();
        for (Field field : type.getDeclaredFields()) {
            if (!Modifier.isStatic(field.getModifiers()) && !field.isSynthetic()) {
                field.setAccessible(true);
                result.add(field);
            }
        }
        return result;
    }

    private static boolean isMap(Field field) {
        return Map.class.isAssignableFrom(field.getType());
    }

    /** @return the element class of a {@code List<X>} field */
    static Class<?> elementType(Field field) {
        return (Class<?>) ((ParameterizedType) field.getGenericType()).getActualTypeArguments()[0];
    }

    static Object read(Field field, Object bean) {
        try {
            return field.get(bean);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot read " + field, e);
        }
    }

    static void write(Field field, Object bean, Object value) {
        try {
            field.set(bean, value);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot write " + field, e);
        }
    }

    static Object newInstance(Class<?> type) {
        try {
            return type.getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot create " + type, e);
        }
    }

    private static EntryPoint entryPoint(Face face) {
        return switch (face) {
            case BOTH -> null;
            case SERVLET_FILTER -> EntryPoint.SERVLET_FILTER;
            case SPRING_BOOT -> EntryPoint.SPRING_BOOT;
        };
    }

    /** A default as a properties file writes it, or {@code null} for none (an empty list or map). */
    static String text(Object value) {
        if (value == null) {
            return null;
        }
        if (value instanceof Duration d) {
            return Durations.format(d);
        }
        if (value instanceof Double d) {
            return d == Math.rint(d) ? String.valueOf(d.longValue()) : d.toString();
        }
        if (value instanceof Collection<?> c) {
            return c.isEmpty() ? null : c.stream().map(String::valueOf).collect(Collectors.joining(", "));
        }
        if (value instanceof Map<?, ?> m) {
            return m.isEmpty() ? null : m.toString();
        }
        return value.toString();
    }

    /** {@code defaultStoreFailurePolicy} to {@code default-store-failure-policy}. */
    static String kebab(String camel) {
        StringBuilder sb = new StringBuilder(camel.length() + 4);
        for (char ch : camel.toCharArray()) {
            if (Character.isUpperCase(ch)) {
                sb.append('-').append(Character.toLowerCase(ch));
            } else {
                sb.append(ch);
            }
        }
        return sb.toString();
    }

    /** @return every property, in the model's order */
    static List<Property> properties() {
        return ENTRIES.values().stream().map(Entry::property).toList();
    }

    /**
     * @param pattern a canonical name pattern ({@code ratelimit.rules[i].mode}, {@code ratelimit.plans.<plan>})
     * @return its entry, or {@code null}
     */
    static Entry entry(String pattern) {
        return ENTRIES.get(pattern);
    }
}
