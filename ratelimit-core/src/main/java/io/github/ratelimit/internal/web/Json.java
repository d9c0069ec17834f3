package io.github.ratelimit.internal.web;

import java.util.Collection;
import java.util.Map;

/**
 * A small JSON writer for the entry points that have no JSON library (the servlet module's problem+json bodies and
 * its admin servlet): maps (insertion order kept, keys as strings), collections, strings, numbers, booleans,
 * {@code null}; an enum as its name and anything else as its {@code toString()}, as strings. Every string is
 * escaped, {@code <}, {@code >}, {@code &} and the line and paragraph separators included, so text from a request
 * cannot inject markup into a client that renders the body. A non-finite number is written as {@code null}.
 */
public final class Json {

    private Json() {}

    /**
     * @param value a map, collection, string, number, boolean, enum, other object or {@code null}
     * @return its JSON text
     */
    public static String write(Object value) {
        return value(new StringBuilder(256), value).toString();
    }

    /**
     * @param json where to write
     * @param value a map, collection, string, number, boolean, enum, other object or {@code null}
     * @return {@code json}
     */
    public static StringBuilder value(StringBuilder json, Object value) {
        if (value == null) {
            return json.append("null");
        }
        if (value instanceof Map<?, ?> map) {
            json.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                json.append(first ? "" : ",");
                first = false;
                value(string(json, String.valueOf(e.getKey())).append(':'), e.getValue());
            }
            return json.append('}');
        }
        if (value instanceof Collection<?> list) {
            json.append('[');
            boolean first = true;
            for (Object item : list) {
                json.append(first ? "" : ",");
                first = false;
                value(json, item);
            }
            return json.append(']');
        }
        if (value instanceof Boolean
                || value instanceof Integer
                || value instanceof Long
                || value instanceof Short
                || value instanceof Byte) {
            return json.append(value);
        }
        if (value instanceof Number n) {
            double d = n.doubleValue();
            return json.append(Double.isFinite(d) ? String.valueOf(n) : "null");
        }
        return string(json, value instanceof Enum<?> e ? e.name() : value.toString());
    }

    /**
     * @param json where to write
     * @param value a string
     * @return {@code json}, with the string quoted and escaped
     */
    public static StringBuilder string(StringBuilder json, String value) {
        json.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> json.append("\\\"");
                case '\\' -> json.append("\\\\");
                case '\n' -> json.append("\\n");
                case '\r' -> json.append("\\r");
                case '\t' -> json.append("\\t");
                default -> {
                    if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x2028 || c == 0x2029) {
                        json.append(String.format("\\u%04x", (int) c));
                    } else {
                        json.append(c);
                    }
                }
            }
        }
        return json.append('"');
    }
}
