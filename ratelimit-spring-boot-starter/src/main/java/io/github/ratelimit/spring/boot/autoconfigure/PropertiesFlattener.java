package io.github.ratelimit.spring.boot.autoconfigure;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Turns the bound {@link RateLimitProperties} back into flat {@code ratelimit.*} text, canonical names and values as a
 * rules file writes them, for {@link io.github.ratelimit.internal.config.RateLimitSettings}. Reflective over the fields, so a
 * property added to the class is carried without a second list of names to keep in step; unset ({@code null})
 * values are left out, so the settings' defaults apply.
 */
final class PropertiesFlattener {

    private PropertiesFlattener() {
    }

    static Map<String, String> flatten(RateLimitProperties properties) {
        Map<String, String> out = new LinkedHashMap<>();
        object(properties, "ratelimit.", out);
        return out;
    }

    private static void object(Object bean, String prefix, Map<String, String> out) {
        for (Class<?> c = bean.getClass(); c != Object.class; c = c.getSuperclass()) {
            for (Field field : c.getDeclaredFields()) {
                if (Modifier.isStatic(field.getModifiers()) || field.isSynthetic()) {
                    continue;
                }
                field.setAccessible(true);
                Object value;
                try {
                    value = field.get(bean);
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException("cannot read " + field, e);
                }
                value(value, prefix + kebab(field.getName()), out);
            }
        }
    }

    private static void value(Object value, String name, Map<String, String> out) {
        if (value == null) {
            return;
        }
        if (isSimple(value)) {
            out.put(name, text(value));
        } else if (value instanceof Collection<?> collection) {
            if (collection.stream().allMatch(PropertiesFlattener::isSimple)) {
                if (!collection.isEmpty()) {
                    out.put(name, collection.stream().map(PropertiesFlattener::text).collect(Collectors.joining(", ")));
                }
            } else {
                int i = 0;
                for (Object element : collection) {
                    if (element != null) {
                        object(element, name + "[" + i + "].", out);
                    }
                    i++;
                }
            }
        } else if (value instanceof Map<?, ?> map) {
            map.forEach((k, v) -> value(v, name + "." + k, out));
        } else {
            object(value, name + ".", out);
        }
    }

    private static boolean isSimple(Object value) {
        return value instanceof CharSequence || value instanceof Number || value instanceof Boolean
                || value instanceof Enum<?> || value instanceof Duration;
    }

    private static String text(Object value) {
        if (value instanceof Enum<?> e) {
            return e.name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
        return value.toString();
    }

    /** {@code defaultStoreFailurePolicy} to {@code default-store-failure-policy}. */
    static String kebab(String camel) {
        StringBuilder sb = new StringBuilder(camel.length() + 4);
        for (int i = 0; i < camel.length(); i++) {
            char ch = camel.charAt(i);
            if (Character.isUpperCase(ch)) {
                sb.append('-').append(Character.toLowerCase(ch));
            } else {
                sb.append(ch);
            }
        }
        return sb.toString();
    }
}
